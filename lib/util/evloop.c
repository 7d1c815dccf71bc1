/* evloop.c - see evloop.h. */
#include "util/evloop.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"

struct watch {
    int fd;                     /* -1: removed, dropped at the next turn */
    evloop_fd_fn fn;
    void *ctx;
};

struct evloop_timer {
    long long due_ms;           /* monotonic */
    int armed, period_ms;
    evloop_timer_fn fn;
    void *ctx;
};

struct evloop {
    struct watch *w;            /* n in use; pfd has as many slots */
    struct pollfd *pfd;
    int n, cap;
    struct evloop_timer **t;
    int nt;
    int sfd;                    /* the signals' signalfd, or -1 */
    evloop_sig_fn sig_fn;
    void *sig_ctx;
    int stopped, code;
};

struct evloop *evloop_create(struct err *err)
{
    struct evloop *l = calloc(1, sizeof *l);

    if (!l) {
        err_set(err, "out of memory");
        return NULL;
    }
    l->sfd = -1;
    return l;
}

void evloop_destroy(struct evloop *l)
{
    if (!l)
        return;
    if (l->sfd >= 0)
        close(l->sfd);
    for (int i = 0; i < l->nt; i++)
        free(l->t[i]);
    free(l->t);
    free(l->w);
    free(l->pfd);
    free(l);
}

/* Room for one more watch; pfd grows with w so that a turn never
 * allocates (and a callback adding a watch keeps the turn's events). */
static int grow(struct evloop *l, struct err *err)
{
    int cap = l->cap ? 2 * l->cap : 8;
    struct watch *w;
    struct pollfd *p;

    if (l->n < l->cap)
        return 0;
    if (!(w = realloc(l->w, (size_t)cap * sizeof *w)))
        return err_set(err, "out of memory");
    l->w = w;
    if (!(p = realloc(l->pfd, (size_t)cap * sizeof *p)))
        return err_set(err, "out of memory");
    l->pfd = p;
    l->cap = cap;
    return 0;
}

int evloop_add_fd(struct evloop *l, int fd, evloop_fd_fn fn, void *ctx,
                  struct err *err)
{
    if (grow(l, err) < 0)
        return -1;
    l->w[l->n] = (struct watch){ .fd = fd, .fn = fn, .ctx = ctx };
    l->pfd[l->n] = (struct pollfd){ .fd = -1 };     /* not polled this turn */
    l->n++;
    return 0;
}

void evloop_del_fd(struct evloop *l, int fd)
{
    for (int i = 0; i < l->n; i++)
        if (l->w[i].fd == fd)
            l->w[i].fd = -1;
}

struct evloop_timer *evloop_add_timer(struct evloop *l, int first_ms,
                                      int period_ms, evloop_timer_fn fn,
                                      void *ctx, struct err *err)
{
    struct evloop_timer **v = realloc(l->t, (size_t)(l->nt + 1) * sizeof *v);
    struct evloop_timer *t = calloc(1, sizeof *t);

    if (v)
        l->t = v;
    if (!v || !t) {
        free(t);
        err_set(err, "out of memory");
        return NULL;
    }
    *t = (struct evloop_timer){ .period_ms = period_ms, .fn = fn, .ctx = ctx };
    evloop_timer_set(t, first_ms);
    l->t[l->nt++] = t;
    return t;
}

void evloop_timer_set(struct evloop_timer *t, int ms)
{
    t->armed = ms >= 0;
    t->due_ms = clock_ms() + (ms > 0 ? ms : 0);
}

/* The signalfd's watch: every signal waiting, one call each. */
static int on_signal(void *ctx, int fd, short revents, struct err *err)
{
    struct evloop *l = ctx;
    int sig;

    (void)revents;
    while (!l->stopped && (sig = sigfd_take(fd)) > 0)
        if (l->sig_fn(l->sig_ctx, sig, err) < 0)
            return -1;
    return 0;
}

int evloop_add_signals(struct evloop *l, const int *sigs, evloop_sig_fn fn,
                       void *ctx, struct err *err)
{
    sigset_t set;

    if (l->sfd >= 0)
        return err_set(err, "evloop: signals were added already");
    sigemptyset(&set);
    for (int i = 0; sigs[i]; i++)
        sigaddset(&set, sigs[i]);
    /* blocked, they wait in the signalfd instead of killing us first */
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    if ((l->sfd = sigfd_open(&set, err)) < 0)
        return -1;
    l->sig_fn = fn;
    l->sig_ctx = ctx;
    return evloop_add_fd(l, l->sfd, on_signal, l, err);
}

static int stop_sig(void *ctx, int sig, struct err *err)
{
    (void)err;
    evloop_stop(ctx, sig);
    return 0;
}

int evloop_stop_on_signals(struct evloop *l, const int *sigs, struct err *err)
{
    return evloop_add_signals(l, sigs, stop_sig, l, err);
}

static int stop_fd(void *ctx, int fd, short revents, struct err *err)
{
    (void)fd, (void)revents, (void)err;
    evloop_stop(ctx, 0);
    return 0;
}

int evloop_stop_on_fd(struct evloop *l, int fd, struct err *err)
{
    return evloop_add_fd(l, fd, stop_fd, l, err);
}

void evloop_stop(struct evloop *l, int code)
{
    l->stopped = 1;
    l->code = code;
}

/* Drop the removed watches; fill pfd with the others.  Their count. */
static int prepare(struct evloop *l)
{
    int k = 0;

    for (int i = 0; i < l->n; i++)
        if (l->w[i].fd >= 0)
            l->w[k++] = l->w[i];
    l->n = k;
    for (int i = 0; i < k; i++)
        l->pfd[i] = (struct pollfd){ .fd = l->w[i].fd, .events = POLLIN };
    return k;
}

/* Milliseconds until the first armed timer is due, -1 when none is. */
static int next_wait(const struct evloop *l)
{
    long long now = clock_ms(), best = -1;

    for (int i = 0; i < l->nt; i++) {
        long long left = l->t[i]->due_ms - now;
        if (!l->t[i]->armed)
            continue;
        left = left < 0 ? 0 : left;
        best = best < 0 || left < best ? left : best;
    }
    return best > INT_MAX ? INT_MAX : (int)best;
}

/* The watches of the first n slots whose fd had events. */
static int dispatch_fds(struct evloop *l, int n, struct err *err)
{
    for (int i = 0; i < n && !l->stopped; i++) {
        struct watch w = l->w[i];       /* a callback may grow l->w */
        short ev = l->pfd[i].revents;
        if (w.fd >= 0 && ev && w.fn(w.ctx, w.fd, ev, err) < 0)
            return -1;
    }
    return 0;
}

/* The timers due now, each disarmed (or moved a period on) first. */
static int dispatch_timers(struct evloop *l, struct err *err)
{
    long long now = clock_ms();

    for (int i = 0; i < l->nt && !l->stopped; i++) {
        struct evloop_timer *t = l->t[i];
        if (!t->armed || t->due_ms > now)
            continue;
        evloop_timer_set(t, t->period_ms);
        if (t->fn(t->ctx, err) < 0)
            return -1;
    }
    return 0;
}

int evloop_run(struct evloop *l, struct err *err)
{
    l->stopped = 0;
    l->code = 0;
    while (!l->stopped) {
        int n = prepare(l), rc = poll(l->pfd, (nfds_t)n, next_wait(l));

        if (rc < 0 && errno != EINTR)
            return err_set(err, "poll: %s", strerror(errno));
        if ((rc > 0 && dispatch_fds(l, n, err) < 0) ||
            dispatch_timers(l, err) < 0)
            return -1;
    }
    return l->code;
}

int sigfd_open(const sigset_t *set, struct err *err)
{
    int fd = signalfd(-1, set, SFD_NONBLOCK | SFD_CLOEXEC);

    if (fd < 0)
        err_set(err, "signalfd: %s", strerror(errno));
    return fd;
}

int sig_take_pending(const int *sigs)
{
    struct timespec zero = { 0, 0 };
    sigset_t set;
    int sig;

    sigemptyset(&set);
    for (int i = 0; sigs[i]; i++)
        sigaddset(&set, sigs[i]);
    sig = sigtimedwait(&set, NULL, &zero);
    return sig > 0 ? sig : 0;
}

int sigfd_take(int sfd)
{
    struct signalfd_siginfo si;

    if (sfd < 0 || read(sfd, &si, sizeof si) != (ssize_t)sizeof si)
        return 0;
    return (int)si.ssi_signo;
}
