/* engine.h - the run engine's attempts: run one attempt of the job,
 * decide whether it starts again (--max-restarts) or ends, say so, and
 * again.  One policy for the three ways dlrun runs a job: its ranks on
 * this host (lib/job/launch.c), agents on other hosts (lib/job/head.c), one
 * dlrun per node started by hand (lib/job/nodes_run.c).  What an attempt
 * is, and every line about it, is the caller's (callbacks); fail-fast
 * within an attempt is lib/run/supervise.h's.
 *
 * The policy: start again after an attempt that failed (a rank, an
 * agent, a lost node), while fewer than max_restarts restarts were made,
 * unless dlrun itself was told to stop (SIGTERM, SIGINT, SIGHUP,
 * SIGQUIT; SIGUSR1 and SIGUSR2 are the ranks' business). */
#ifndef DLRUN_ENGINE_H
#define DLRUN_ENGINE_H

/* How an attempt ended. */
struct engine_end {
    int rc;             /* dlrun's exit code for it */
    int failed;         /* a rank or an agent failed, or a node was lost:
                           a restart may help (0: it could not start,
                           it succeeded, or there is nothing to retry) */
    int signal;         /* the signal dlrun was told to stop by, 0 */
};

struct engine;

/* One attempt: run it, fill *end (zeroed before the call).  The caller
 * reads engine_again(e, end) inside when it must know before the attempt
 * ends (the head writes --summary while its broker still holds the
 * ranks' reports). */
typedef void engine_attempt_fn(void *ctx, const struct engine *e,
                               struct engine_end *end);

/* Told after *restart was counted up, before the next attempt: the line
 * that says so is the caller's. */
typedef void engine_restart_fn(void *ctx, const struct engine *e);

struct engine {
    int max_restarts;           /* --max-restarts; 0: one attempt */
    int *restart;               /* borrowed: the restarts made so far (the
                                   caller's, which its attempts read);
                                   counted up before each restart */
    engine_attempt_fn *attempt;
    engine_restart_fn *restarting;  /* or NULL */
    void *ctx;                  /* borrowed, for the callbacks */
};

/* Should e start the job again after an attempt that ended as end? */
int engine_again(const struct engine *e, const struct engine_end *end);

/* Was sig one that tells dlrun to stop (TERM, INT, HUP, QUIT)? */
int engine_stop_signal(int sig);

/* Attempts until one needs no restart.  Returns that one's exit code;
 * *last (when not NULL) gets how it ended. */
int engine_run(const struct engine *e, struct engine_end *last);

#endif
