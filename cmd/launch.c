/* launch.c - dlrun starts the ranks itself (not per-task mode): compute
 * every rank's environment, start them through the chosen launcher,
 * supervise, and exit with the code of the rank that failed first. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "cmd.h"
#include "envout.h"
#include "job.h"
#include "launcher.h"
#include "proc.h"

extern char **environ;

static void free_envps(char ***envps, int n)
{
    for (int i = 0; envps && i < n; i++)
        envset_free_envp(envps[i]);
    free(envps);
}

/* environ-style arrays for every rank; NULL after printing the error. */
static char ***rank_envps(const struct job *j)
{
    char ***envps = calloc((size_t)j->plan.nranks, sizeof *envps);

    for (int r = 0; envps && r < j->plan.nranks; r++) {
        struct envset s = { 0 };
        if (job_rank_env(j, r, &s) != 0) {
            free_envps(envps, r);
            return NULL;
        }
        envps[r] = envset_envp(&s, environ);
        envset_free(&s);
        if (!envps[r]) {
            free_envps(envps, r);
            envps = NULL;
        }
    }
    if (!envps)
        cmd_fail(EXIT_FAIL, "out of memory");
    return envps;
}

static void report_failure(const struct job *j, const struct supervise *sv)
{
    const struct sv_rank *r = &sv->ranks[sv->failed];
    const char *host = j->plan.nodes[j->plan.rank_node[r->rank]].host;

    if (WIFSIGNALED(r->status))
        cmd_fail(0, "rank %d (host %s, pid %d) was killed by signal %d (%s); "
                 "stopped %d other rank%s", r->rank, host, (int)r->pid,
                 WTERMSIG(r->status), strsignal(WTERMSIG(r->status)),
                 sv->stopped, sv->stopped == 1 ? "" : "s");
    else
        cmd_fail(0, "rank %d (host %s, pid %d) exited with code %d; stopped "
                 "%d other rank%s", r->rank, host, (int)r->pid,
                 WEXITSTATUS(r->status), sv->stopped,
                 sv->stopped == 1 ? "" : "s");
}

static int supervise_job(const struct job *j, struct sv_rank *ranks)
{
    struct supervise sv = {
        .ranks = ranks, .n = j->plan.nranks, .kill_timeout_ms = 10000,
    };
    pid_t *keep = malloc((size_t)sv.n * sizeof *keep);
    int rc = supervise_run(&sv);

    if (sv.failed >= 0)
        report_failure(j, &sv);
    for (int i = 0; keep && i < sv.n; i++)
        keep[i] = ranks[i].pid;
    proc_kill_adopted(keep, keep ? sv.n : 0);
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
    free(keep);
    return rc;
}

int run_launch(struct job *j, char **prog)
{
    struct launch_job lj = { .plan = &j->plan, .argv = prog };
    struct sv_rank *ranks = NULL;
    struct err err = { "" };
    const struct launcher *l = launcher_select(&j->plan, NULL, &err);
    sigset_t block;
    int rc, exec_errno = 0;

    if (!l)
        return cmd_fail(EXIT_USAGE, "%s", err.msg);
    lj.rank_envp = rank_envps(j);
    ranks = calloc((size_t)j->plan.nranks, sizeof *ranks);
    if (!lj.rank_envp || !ranks) {
        rc = EXIT_FAIL;
        goto out;
    }
    /* descendants that escape their group are reparented to us, found, ended */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    supervise_signals(&block);
    sigprocmask(SIG_BLOCK, &block, &lj.child_mask);
    fflush(NULL);
    if (l->start(&lj, ranks, &exec_errno, &err) < 0) {
        rc = cmd_fail(exec_errno ? proc_exec_code(exec_errno) : EXIT_FAIL,
                      "%s", err.msg);
        goto out;
    }
    rc = supervise_job(j, ranks);
out:
    free(ranks);
    free_envps(lj.rank_envp, j->plan.nranks);
    return rc;
}
