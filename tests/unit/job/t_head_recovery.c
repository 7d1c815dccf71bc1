/* t_head_recovery.c - the end of a node fault's recovery between the
 * head's two threads: the -v line and the value the summary takes agree
 * (the line once, with the value the summary gets; after the summary took
 * none, no line), also when the two threads race; an attempt that follows
 * no node fault says nothing. */
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "job/head_recovery.h"
#include "job/progress.h"
#include "util/clock.h"
#include "util/say.h"
#include "said.h"
#include "tap.h"

/* a fixed clock: the -v line's "+S s" */
static long fake_now(void *ctx)
{
    (void)ctx;
    return 50000;
}

static const struct ns_recovery moments = {
    .fault_ms = 1000, .detect_ms = 3000, .down_ms = 3200, .planned_ms = 3300,
};

static void in_order(struct said *k)
{
    struct head_recovery r;

    head_recovery_init(&r, &moments);
    is_int(head_recovery_up(&r, 3600), 1, "every rank up: the recovery ends");
    is_str(k->last, "+0.000 s recovered in 2.6 s: detection 2.0 s, teardown "
           "0.2 s, plan 0.1 s, start 0.3 s", "  its -v line");
    is_int(head_recovery_up(&r, 3900), 0, "  once");
    is_int(k->n, 1, "  one line");
    ok(head_recovery_close(&r) == 3600, "the summary takes the line's end");
    head_recovery_destroy(&r);

    k->n = 0;
    head_recovery_init(&r, &moments);
    ok(head_recovery_close(&r) == 0, "the attempt ended first: no end");
    is_int(head_recovery_up(&r, 3600), 0, "  the ranks seen after it: "
           "nothing ends");
    is_int(k->n, 0, "  and no line after the summary");
    head_recovery_destroy(&r);

    head_recovery_init(&r, NULL);
    is_int(head_recovery_up(&r, 3600), 0, "no node fault: nothing to end");
    ok(head_recovery_close(&r) == 0 && k->n == 0, "  nothing said");
    head_recovery_destroy(&r);
}

struct race {
    struct head_recovery r;
    long now;
    int ended;
};

static void *broker_thread(void *arg)
{
    struct race *x = arg;

    x->ended = head_recovery_up(&x->r, x->now);
    return NULL;
}

/* The broker thread's look and the summary at once, many times: either
 * the line came and the summary has its value, or neither. */
static void racing(struct said *k)
{
    int agree = 1, lines = 0, nones = 0;

    for (int i = 0; i < 400; i++) {
        struct race x = { .now = 3400 + i };
        pthread_t t;
        long took;
        int said_before = k->n;
        head_recovery_init(&x.r, &moments);
        if (pthread_create(&t, NULL, broker_thread, &x) != 0) {
            agree = 0;
            break;
        }
        usleep((useconds_t)(i % 40) * 10);   /* now one first, now the other */
        took = head_recovery_close(&x.r);
        pthread_join(t, NULL);
        if (x.ended ? took != x.now || k->n != said_before + 1
                    : took != 0 || k->n != said_before)
            agree = 0;
        lines += x.ended;
        nones += !x.ended;
        head_recovery_destroy(&x.r);
    }
    ok(agree, "racing threads: the line and the summary agree every time");
    printf("# %d ended before the summary, %d after it\n", lines, nones);
}

int main(void)
{
    struct said k = { 0 };

    say_set_sink(said_keep, &k);
    clock_fake(fake_now, NULL);
    progress_enable(1);     /* the clock starts: +0.000 s */
    in_order(&k);
    racing(&k);
    clock_fake(NULL, NULL);
    return tap_done();
}
