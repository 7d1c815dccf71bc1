/* supervise.h - watching this node's ranks: fail-fast teardown, signal
 * forwarding, and the exit code of the rank that failed first. */
#ifndef DLRUN_SUPERVISE_H
#define DLRUN_SUPERVISE_H

#include <signal.h>
#include <sys/types.h>

struct sv_rank {
    int rank;
    pid_t pid;          /* also its process group */
    int running;
    int status;         /* wait status once it ended */
    double start, end;  /* wall-clock seconds (clock_wall) */
    int idle;           /* a helper that runs nothing of the job (a spare
                           node's agent): its end is kept but fails nothing,
                           counts in no exit code and is not waited for */
};

struct output;

struct supervise {
    struct sv_rank *ranks;      /* borrowed, n entries */
    int n;
    int kill_timeout_ms;        /* SIGTERM, then SIGKILL this much later */
    struct output *out;         /* borrowed: forwarded output, or NULL */
    /* results */
    int failed;                 /* index in ranks of the first failure, -1 */
    int stopped;                /* ranks that were still running then */
    int signal_received;        /* the last signal forwarded, 0 if none */
    int keep_going;             /* a failure does not end the others (a
                                   preflight's agents: each reports) */
    /* When set, the signals dlrun receives go here instead of to the
     * processes (the head hands them to the agents through the broker;
     * SIGKILL for a second SIGINT within a second).  Fail-fast SIGTERM
     * and the SIGKILL at the kill timeout still go to the processes. */
    void (*forward)(void *ctx, int sig);
    void *forward_ctx;
    /* When set, extra_fd is watched too (a one-node broker's): after each
     * wait extra(extra_ctx, readable) runs and returns the milliseconds
     * until it must run again (-1: only when readable). */
    int (*extra)(void *ctx, int readable);
    int extra_fd;
    void *extra_ctx;
};

/* A hook that supervise_hook displaced from sv->extra. */
struct sv_hook {
    int (*fn)(void *ctx, int readable);     /* NULL: none */
    void *ctx;
};

/* Put fn(ctx, readable) in sv->extra; *prev (the caller's, alive while sv
 * runs) gets the hook it displaced, which fn runs first through
 * supervise_hook_call: the periodic watches (stall, status, the MPI guard)
 * chain this way beside a one-node broker's hook. */
void supervise_hook(struct supervise *sv, int (*fn)(void *ctx, int readable),
                    void *ctx, struct sv_hook *prev);

/* Run prev's hook, if any: its wait in ms, -1 for none. */
int supervise_hook_call(const struct sv_hook *prev, int readable);

/* The sooner of two waits in ms, where -1 (or less) means none. */
int supervise_sooner(int a, long b);

/* The signals dlrun forwards to every rank's process group. */
void supervise_signals(sigset_t *set);

/* Run until every rank ended, forwarding their output meanwhile.  The
 * caller has blocked SIGCHLD and the forwarded signals (supervise_signals)
 * before spawning.  Returns the exit code for dlrun: the failing rank's
 * (128+signal for a signal), the first non-zero code when dlrun was told
 * to stop by a signal, else 0; -1 when it cannot watch (signalfd). */
int supervise_run(struct supervise *sv);

/* The exit code for a wait status: its code, or 128+signal. */
int supervise_exit_code(int status);

#endif
