/* t_evloop.c - the event loop driven in-process with pipes, timers and
 * a signal this test raises at itself. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/evloop.h"
#include "tap.h"

struct seen {
    struct evloop *l;
    char log[64];               /* one letter per call, in order */
    int other_fd;               /* a watch the callback removes, or -1 */
    int fails;                  /* the callback fails */
    struct evloop_timer *t;
    int left;                   /* calls before it stops the loop */
};

static void note(struct seen *s, char c)
{
    size_t n = strlen(s->log);

    if (n + 1 < sizeof s->log)
        s->log[n] = c;
}

static int on_read(void *ctx, int fd, short revents, struct err *err)
{
    struct seen *s = ctx;
    char b[16];

    (void)revents;
    note(s, read(fd, b, sizeof b) > 0 ? 'r' : 'e');
    if (s->other_fd >= 0)
        evloop_del_fd(s->l, s->other_fd);
    if (s->fails)
        return err_set(err, "callback failed");
    if (--s->left <= 0)
        evloop_stop(s->l, 7);
    return 0;
}

static int on_timer(void *ctx, struct err *err)
{
    struct seen *s = ctx;

    (void)err;
    note(s, 't');
    if (--s->left <= 0)
        evloop_stop(s->l, 3);
    return 0;
}

static int on_sig(void *ctx, int sig, struct err *err)
{
    struct seen *s = ctx;

    (void)err;
    note(s, sig == SIGUSR1 ? 's' : '?');
    evloop_stop(s->l, 9);
    return 0;
}

static void fd_and_stop(void)
{
    struct err err = { "" };
    struct seen s = { .other_fd = -1, .left = 1 };
    int p[2];

    s.l = evloop_create(&err);
    if (pipe(p) < 0 || !s.l)
        return (void)ok(0, "setup");
    ok(evloop_add_fd(s.l, p[0], on_read, &s, &err) == 0, "fd added");
    write(p[1], "x", 1);
    is_int(evloop_run(s.l, &err), 7, "run: the code given to evloop_stop");
    is_str(s.log, "r", "the readable fd's callback, once");
    close(p[1]);
    s.left = 1;
    is_int(evloop_run(s.l, &err), 7, "a second run: the writer's close");
    is_str(s.log, "re", "its hang-up reaches the callback too");
    evloop_destroy(s.l);
    close(p[0]);
}

/* A callback that removes another watch: that one is not called, not even
 * for the events of the same turn. */
static void del_in_callback(void)
{
    struct err err = { "" };
    struct seen a = { .other_fd = -1, .left = 1 }, b = { .other_fd = -1 };
    int p[2], q[2];

    a.l = b.l = evloop_create(&err);
    if (pipe(p) < 0 || pipe(q) < 0 || !a.l)
        return (void)ok(0, "setup");
    a.other_fd = q[0];
    evloop_add_fd(a.l, p[0], on_read, &a, &err);
    evloop_add_fd(a.l, q[0], on_read, &b, &err);
    write(p[1], "x", 1);
    write(q[1], "y", 1);
    is_int(evloop_run(a.l, &err), 7, "stopped by the first");
    is_str(b.log, "", "the removed watch was not called");
    evloop_destroy(a.l);
    close(p[0]), close(p[1]), close(q[0]), close(q[1]);
}

static void failing_callback(void)
{
    struct err err = { "" };
    struct seen s = { .other_fd = -1, .fails = 1, .left = 1 };
    int p[2];

    s.l = evloop_create(&err);
    if (pipe(p) < 0 || !s.l)
        return (void)ok(0, "setup");
    evloop_add_fd(s.l, p[0], on_read, &s, &err);
    write(p[1], "x", 1);
    is_int(evloop_run(s.l, &err), -1, "a failing callback ends the run");
    is_str(err.msg, "callback failed", "with its err");
    evloop_destroy(s.l);
    close(p[0]), close(p[1]);
}

/* A periodic timer fires until its callback stops the loop; a disarmed
 * one never does; one re-armed from outside does. */
static void timers(void)
{
    struct err err = { "" };
    struct seen s = { .left = 3 }, off = { .left = 1 };

    s.l = off.l = evloop_create(&err);
    if (!s.l)
        return (void)ok(0, "setup");
    ok(evloop_add_timer(s.l, 0, 5, on_timer, &s, &err) != NULL, "periodic");
    off.t = evloop_add_timer(s.l, -1, -1, on_timer, &off, &err);
    is_int(evloop_run(s.l, &err), 3, "the timer stopped it");
    is_str(s.log, "ttt", "three calls, a period apart");
    is_str(off.log, "", "a disarmed timer did not fire");
    s.left = 100;
    evloop_timer_set(off.t, 1);
    is_int(evloop_run(s.l, &err), 3, "armed: it fires");
    is_str(off.log, "t", "once (no period)");
    evloop_destroy(s.l);
}

static void signals(void)
{
    struct err err = { "" };
    struct seen s = { .other_fd = -1 };
    sigset_t now;

    s.l = evloop_create(&err);
    if (!s.l)
        return (void)ok(0, "setup");
    ok(evloop_add_signals(s.l, (const int[]){ SIGUSR1, 0 }, on_sig, &s,
                          &err) == 0, "signals added");
    pthread_sigmask(SIG_BLOCK, NULL, &now);
    ok(sigismember(&now, SIGUSR1), "and blocked");
    ok(evloop_add_signals(s.l, (const int[]){ SIGUSR2, 0 }, on_sig, &s,
                          &err) < 0, "a second set is refused");
    raise(SIGUSR1);             /* blocked: it waits in the signalfd */
    is_int(evloop_run(s.l, &err), 9, "the signal's callback stopped it");
    is_str(s.log, "s", "with SIGUSR1");
    evloop_destroy(s.l);
}

static void sigfd(void)
{
    struct err err = { "" };
    sigset_t set;
    int fd;

    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    fd = sigfd_open(&set, &err);
    ok(fd >= 0, "sigfd_open");
    is_int(sigfd_take(fd), 0, "nothing waiting: 0, without blocking");
    raise(SIGUSR2);
    is_int(sigfd_take(fd), SIGUSR2, "the signal raised");
    is_int(sigfd_take(-1), 0, "no fd: 0");
    close(fd);
    is_int(sig_take_pending((const int[]){ SIGUSR2, 0 }), 0,
           "sig_take_pending: none pending: 0, without waiting");
    raise(SIGUSR2);
    is_int(sig_take_pending((const int[]){ SIGUSR1, SIGUSR2, 0 }), SIGUSR2,
           "  the pending one, taken");
    is_int(sig_take_pending((const int[]){ SIGUSR2, 0 }), 0, "  once");
}

int main(void)
{
    fd_and_stop();
    del_in_callback();
    failing_callback();
    timers();
    signals();
    sigfd();
    return tap_done();
}
