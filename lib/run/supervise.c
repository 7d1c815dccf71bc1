/* supervise.c - the loop of a supervisor (after tini and srun): wait for a
 * signal or output; forward the signal, reap, or pass the output on.  The
 * first rank that fails stops the rest (SIGTERM, then SIGKILL after the
 * kill timeout); a second SIGINT within one second kills at once. */
#include "run/supervise.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/evloop.h"
#include "run/guard.h"
#include "run/output.h"

static const int forwarded[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1,
                                 SIGUSR2 };

/* What the loop knows between events. */
struct sv_state {
    long deadline;          /* SIGKILL the rest then; -1 none */
    int extra_ms;           /* sv->extra wants to run within this; -1 */
    long last_int;          /* when the last SIGINT came */
    int stopping;           /* teardown started: later exits are not failures */
};

void supervise_signals(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGCHLD);
    for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
        sigaddset(set, forwarded[i]);
}

int supervise_exit_code(int status)
{
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static int signal_all(struct supervise *sv, int sig)
{
    int n = 0;

    for (int i = 0; i < sv->n; i++)
        if (sv->ranks[i].running && killpg(sv->ranks[i].pid, sig) == 0)
            n++;
    return n;
}

/* Reap what ended; returns 1 when a rank failed for the first time. */
static int reap(struct supervise *sv, int stopping)
{
    int status, first_fail = 0;
    pid_t pid;

    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        for (int i = 0; i < sv->n; i++) {
            struct sv_rank *r = &sv->ranks[i];
            if (r->pid != pid || !r->running)
                continue;
            r->running = 0;
            r->status = status;
            r->end = clock_wall();
            /* leftovers in its group (workers it forked) end with it */
            killpg(pid, SIGKILL);
            guard_forget(pid);
            if (status != 0 && sv->failed < 0 && !stopping && !r->idle) {
                sv->failed = i;
                first_fail = 1;
            }
        }
    }
    return first_fail;
}

static int any_running(const struct supervise *sv)
{
    for (int i = 0; i < sv->n; i++)
        if (sv->ranks[i].running && !sv->ranks[i].idle)
            return 1;
    return 0;
}

static void start_teardown(struct supervise *sv, struct sv_state *st)
{
    st->stopping = 1;
    st->deadline = clock_ms() + sv->kill_timeout_ms;
}

static void on_signal(struct supervise *sv, struct sv_state *st, int sig)
{
    if (sig == SIGCHLD) {
        if (reap(sv, st->stopping) && !sv->keep_going) {
            sv->stopped = signal_all(sv, SIGTERM);
            start_teardown(sv, st);
        }
        return;
    }
    int kill_now = sig == SIGINT && clock_ms() - st->last_int < 1000;
    if (sig == SIGINT)
        st->last_int = clock_ms();
    sv->signal_received = sig;
    if (sv->forward)
        sv->forward(sv->forward_ctx, kill_now ? SIGKILL : sig);
    else
        signal_all(sv, kill_now ? SIGKILL : sig);
    if (!st->stopping && sig != SIGUSR1 && sig != SIGUSR2)
        start_teardown(sv, st);
}

/* Read the signals signalfd has for us. */
static void read_signals(struct supervise *sv, struct sv_state *st, int sfd)
{
    int sig;

    while ((sig = sigfd_take(sfd)) > 0)
        on_signal(sv, st, sig);
}

/* One wait for a signal, output, or the kill deadline. */
static void wait_once(struct supervise *sv, struct sv_state *st, int sfd,
                      struct pollfd *pfd, int *ids)
{
    int nout = sv->out ? output_poll_fds(sv->out, ids, ids + 2 * sv->n) : 0;
    long wait = st->deadline < 0 ? 1000 : st->deadline - clock_ms();
    struct err err = { "" };
    struct pollfd *xp = &pfd[1 + nout];
    int n;

    pfd[0] = (struct pollfd){ .fd = sfd, .events = POLLIN };
    for (int i = 0; i < nout; i++)
        pfd[1 + i] = (struct pollfd){ .fd = ids[i], .events = POLLIN };
    *xp = (struct pollfd){ .fd = sv->extra ? sv->extra_fd : -1,
                           .events = POLLIN };
    if (st->extra_ms >= 0 && st->extra_ms < wait)
        wait = st->extra_ms;
    n = poll(pfd, (nfds_t)(2 + nout), wait < 0 ? 0 : (int)wait);
    if (n < 0 && errno != EINTR)
        return;
    for (int i = 0; i < nout; i++)
        if (pfd[1 + i].revents)
            output_ready(sv->out, ids[2 * sv->n + i], &err);
    read_signals(sv, st, sfd);
    /* the periodic jobs (status, stall, MPI guard) after the signals: a
     * failing rank's SIGCHLD must not wait for a /proc scan */
    if (sv->extra)
        st->extra_ms = sv->extra(sv->extra_ctx, n > 0 && xp->revents);
    if (n == 0)
        on_signal(sv, st, SIGCHLD);     /* a periodic reap, in case */
    if (st->deadline >= 0 && clock_ms() >= st->deadline) {
        signal_all(sv, SIGKILL);
        st->deadline = -1;
    }
}

int supervise_run(struct supervise *sv)
{
    /* extra_ms 0: the periodic jobs say at once when they want to run
     * (else the first wait would be the default second) */
    struct sv_state st = { .deadline = -1, .last_int = -10000,
                           .extra_ms = sv->extra ? 0 : -1 };
    sigset_t set;
    struct pollfd *pfd = calloc((size_t)(2 * sv->n + 2), sizeof *pfd);
    int *ids = calloc((size_t)(4 * sv->n + 1), sizeof *ids);
    int sfd, rc = 0;

    supervise_signals(&set);
    sfd = sigfd_open(&set, NULL);
    sv->failed = -1;
    if (sfd < 0 || !pfd || !ids) {
        rc = -1;
        goto out;
    }
    while (any_running(sv))
        wait_once(sv, &st, sfd, pfd, ids);
    if (sv->out)
        output_drain(sv->out);
    reap(sv, 1);
    rc = sv->failed >= 0 ? supervise_exit_code(sv->ranks[sv->failed].status) : 0;
    for (int i = 0; i < sv->n && rc == 0; i++)
        rc = sv->ranks[i].idle ? 0 : supervise_exit_code(sv->ranks[i].status);
out:
    if (sfd >= 0)
        close(sfd);
    free(pfd);
    free(ids);
    return rc;
}

void supervise_hook(struct supervise *sv, int (*fn)(void *ctx, int readable),
                    void *ctx, struct sv_hook *prev)
{
    *prev = (struct sv_hook){ .fn = sv->extra, .ctx = sv->extra_ctx };
    if (!sv->extra)
        sv->extra_fd = -1;      /* no broker's fd: a timer alone */
    sv->extra = fn;
    sv->extra_ctx = ctx;
}

int supervise_hook_call(const struct sv_hook *prev, int readable)
{
    return prev->fn ? prev->fn(prev->ctx, readable) : -1;
}

int supervise_sooner(int a, long b)
{
    if (b < 0)
        return a;
    return a >= 0 && a < b ? a : (int)b;
}
