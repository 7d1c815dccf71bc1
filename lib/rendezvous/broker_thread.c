/* broker_thread.c - see broker_thread.h. */
#include "rendezvous/broker_thread.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "rendezvous/broker.h"
#include "rendezvous/broker_loop.h"
#include "util/evloop.h"

struct broker_thread {
    struct broker *b;
    pthread_t thread;
    int wake;           /* eventfd: the thread must end */
};

/* Serve until broker_thread_stop writes to t->wake.  A failure to
 * serve (out of memory, the epoll set) ends the thread: the ranks then
 * time out waiting, which says more than anything this thread could. */
static void *serve(void *arg)
{
    struct broker_thread *t = arg;
    struct err err = { "" };
    struct broker_loop bl;
    struct evloop *l = evloop_create(&err);

    if (l && broker_loop_add(&bl, t->b, l, &err) == 0 &&
        evloop_stop_on_fd(l, t->wake, &err) == 0)
        evloop_run(l, &err);
    evloop_destroy(l);
    return NULL;
}

struct broker_thread *broker_thread_start(const char *bind_addr, int port,
                                          const uint8_t token[TOKEN_BYTES],
                                          struct err *err)
{
    struct broker_thread *t = calloc(1, sizeof *t);

    if (!t) {
        err_set(err, "out of memory");
        return NULL;
    }
    t->wake = -1;
    t->b = broker_create(bind_addr, port, token, NULL, err);
    if (!t->b)
        goto fail;
    t->wake = eventfd(0, EFD_CLOEXEC);
    if (t->wake < 0 || pthread_create(&t->thread, NULL, serve, t) != 0) {
        err_set(err, "cannot start the broker's thread");
        goto fail;
    }
    return t;
fail:
    broker_destroy(t->b);
    if (t->wake >= 0)
        close(t->wake);
    free(t);
    return NULL;
}

int broker_thread_port(const struct broker_thread *t)
{
    return broker_port(t->b);
}

void broker_thread_stop(struct broker_thread *t)
{
    if (!t)
        return;
    if (eventfd_write(t->wake, 1) == 0)
        pthread_join(t->thread, NULL);
    broker_destroy(t->b);
    close(t->wake);
    free(t);
}
