/* local.c - every rank on this host: fork/exec each one. */
#include "launcher.h"

#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>

#include "net.h"
#include "proc.h"

static int local_usable(const struct plan *p)
{
    for (int i = 0; i < p->nnodes; i++)
        if (!net_is_this_host(p->nodes[i].host))
            return 0;
    return 10;
}

static void kill_started(struct sv_rank *ranks, int n)
{
    for (int i = 0; i < n; i++) {
        killpg(ranks[i].pid, SIGKILL);
        waitpid(ranks[i].pid, NULL, 0);
        ranks[i].running = 0;
    }
}

static int local_start(const struct launch_job *job, struct sv_rank *ranks,
                       int *exec_errno, struct err *err)
{
    for (int r = 0; r < job->plan->nranks; r++) {
        ranks[r].rank = r;
        ranks[r].status = 0;
        if (proc_spawn(job->argv, job->rank_envp[r], &job->child_mask,
                       &ranks[r].pid, exec_errno, err) < 0) {
            kill_started(ranks, r);
            return err_prefix(err, "rank %d", r);
        }
        ranks[r].running = 1;
    }
    return 0;
}

const struct launcher launcher_local = {
    .name = "local", .usable = local_usable, .start = local_start,
};
