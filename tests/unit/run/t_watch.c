/* t_watch.c - the run engine's worker threads (lib/run/watch.h): a step runs
 * until it says done and done sees its result; watch_stop wakes a step
 * that polls its wake fd; a watcher's thread has every signal blocked; a
 * detached watcher frees itself (ASan's leak check). */
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

#include "tap.h"
#include "run/watch.h"

struct counter {
    int steps, last, done_calls, term_blocked;
};

static int count_step(void *ctx, int wake)
{
    struct counter *c = ctx;
    sigset_t now;

    (void)wake;
    pthread_sigmask(SIG_BLOCK, NULL, &now);
    c->term_blocked = sigismember(&now, SIGTERM) && sigismember(&now, SIGINT);
    return ++c->steps == 5 ? 7 : 0;
}

static void count_done(void *ctx, int last)
{
    struct counter *c = ctx;

    c->last = last;
    c->done_calls++;
}

/* Blocks until watch_stop makes wake readable. */
static int poll_step(void *ctx, int wake)
{
    struct pollfd p = { .fd = wake, .events = POLLIN };
    atomic_int *polled = ctx;

    atomic_fetch_add(polled, 1);
    poll(&p, 1, 60000);
    return 0;
}

static atomic_int detached_done;

static void detached_end(void *ctx, int last)
{
    (void)ctx;
    atomic_store(&detached_done, last);
}

static int quick_step(void *ctx, int wake)
{
    (void)ctx;
    (void)wake;
    return 3;
}

int main(void)
{
    struct counter c = { 0 };
    struct err err = { "" };
    struct watch *w = watch_start(count_step, count_done, &c, &err);
    atomic_int polled = 0;

    ok(w != NULL, "a watcher starts");
    for (int i = 0; i < 5000 && !watch_ended(w); i++)
        usleep(1000);
    ok(watch_ended(w), "  and ends when its step says so");
    watch_stop(w);
    is_int(c.steps, 5, "  after five steps");
    is_int(c.last, 7, "  done sees the last step's result");
    is_int(c.done_calls, 1, "  once");
    ok(c.term_blocked, "  its thread has the signals blocked");

    w = watch_start(poll_step, NULL, &polled, &err);
    for (int i = 0; i < 5000 && atomic_load(&polled) == 0; i++)
        usleep(1000);
    watch_stop(w);
    is_int(atomic_load(&polled), 1, "watch_stop wakes a step blocked in poll");

    watch_stop(NULL);
    watch_detach(NULL);
    ok(1, "NULL is a no-op for stop and detach");

    atomic_store(&detached_done, -1);
    w = watch_start(quick_step, detached_end, NULL, &err);
    watch_detach(w);
    for (int i = 0; i < 5000 && atomic_load(&detached_done) < 0; i++)
        usleep(1000);
    usleep(20000);      /* its last unref, after done */
    is_int(atomic_load(&detached_done), 3, "a detached watcher runs to its end");
    return tap_done();
}
