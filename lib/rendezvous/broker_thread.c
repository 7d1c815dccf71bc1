/* broker_thread.c - see broker_thread.h. */
#include "broker_thread.h"

#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "broker.h"

struct broker_thread {
    struct broker *b;
    pthread_t thread;
    int wake;           /* eventfd: the thread must end */
};

static void *serve(void *arg)
{
    struct broker_thread *t = arg;
    struct err err = { "" };

    for (;;) {
        struct pollfd p[2] = { { .fd = broker_fd(t->b), .events = POLLIN },
                               { .fd = t->wake, .events = POLLIN } };
        int due = broker_timeout_ms(t->b);
        poll(p, 2, due < 0 || due > 1000 ? 1000 : due);
        if (p[1].revents || broker_run_once(t->b, 0, &err) < 0)
            break;
    }
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
