/* watch.c - see watch.h. */
#include "run/watch.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

struct watch {
    watch_step_fn *step;
    watch_done_fn *done;
    void *ctx;                  /* borrowed */
    pthread_t thread;
    int wake;                   /* eventfd: watch_stop wants it to end */
    atomic_int stop, ended;
    atomic_int refs;            /* the thread's and the owner's */
};

static void watch_unref(struct watch *w)
{
    if (atomic_fetch_sub(&w->refs, 1) != 1)
        return;
    close(w->wake);
    free(w);
}

static void *watch_main(void *arg)
{
    struct watch *w = arg;
    int last = 0;

    while (!atomic_load(&w->stop) && (last = w->step(w->ctx, w->wake)) == 0)
        ;
    atomic_store(&w->ended, 1);
    if (w->done)
        w->done(w->ctx, last);
    watch_unref(w);
    return NULL;
}

struct watch *watch_start(watch_step_fn *step, watch_done_fn *done, void *ctx,
                          struct err *err)
{
    struct watch *w = calloc(1, sizeof *w);
    sigset_t all, old;
    int rc;

    if (!w) {
        err_set(err, "out of memory");
        return NULL;
    }
    *w = (struct watch){ .step = step, .done = done, .ctx = ctx };
    atomic_init(&w->refs, 2);
    w->wake = eventfd(0, EFD_CLOEXEC);
    if (w->wake < 0) {
        err_set(err, "cannot start a watcher: no eventfd");
        goto fail;
    }
    /* the thread inherits the mask: every signal stays the main thread's */
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    rc = pthread_create(&w->thread, NULL, watch_main, w);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc == 0)
        return w;
    err_set(err, "cannot start a watcher's thread");
fail:
    if (w->wake >= 0)
        close(w->wake);
    free(w);
    return NULL;
}

void watch_stop(struct watch *w)
{
    if (!w)
        return;
    atomic_store(&w->stop, 1);
    eventfd_write(w->wake, 1);
    pthread_join(w->thread, NULL);
    watch_unref(w);
}

void watch_detach(struct watch *w)
{
    if (!w)
        return;
    pthread_detach(w->thread);
    watch_unref(w);
}

int watch_ended(const struct watch *w)
{
    return atomic_load(&w->ended);
}
