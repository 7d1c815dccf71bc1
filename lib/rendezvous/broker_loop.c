/* broker_loop.c - see broker_loop.h. */
#include "rendezvous/broker_loop.h"

/* Handle what is ready, then wait for the next deadline it has. */
static int run(struct broker_loop *bl, struct err *err)
{
    if (broker_run_once(bl->b, 0, err) < 0)
        return -1;
    evloop_timer_set(bl->due, broker_timeout_ms(bl->b));
    return 0;
}

static int on_fd(void *ctx, int fd, short revents, struct err *err)
{
    (void)fd, (void)revents;
    return run(ctx, err);
}

static int on_due(void *ctx, struct err *err)
{
    return run(ctx, err);
}

int broker_loop_add(struct broker_loop *bl, struct broker *b, struct evloop *l,
                    struct err *err)
{
    bl->b = b;
    bl->due = evloop_add_timer(l, broker_timeout_ms(b), -1, on_due, bl, err);
    if (!bl->due)
        return -1;
    return evloop_add_fd(l, broker_fd(b), on_fd, bl, err);
}
