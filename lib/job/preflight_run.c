/* preflight_run.c - `dlrun check --nodes` and `dlrun --preflight`: the
 * head with its agents in --preflight mode, every agent started by the
 * head itself. */
#include "job/preflight_run.h"

#include <signal.h>

#include "job/job.h"
#include "util/say.h"

int job_preflight(struct job *j, char **prog, const struct pf_show *show)
{
    int fanout = j->opt.remote.fanout, rc;
    sigset_t saved;

    if (j->plan.per_task)
        return say_fail(EXIT_USAGE, "preflight: run it outside srun/mpirun "
                        "(it starts one agent per node itself)");
    /* every agent from the head: a preflight agent starts no others */
    if (j->opt.remote.fanout < j->plan.nnodes)
        j->opt.remote.fanout = j->plan.nnodes;
    sigprocmask(SIG_SETMASK, NULL, &saved);
    j->preflight = 1;
    j->pf_show = show;
    rc = run_head(j, prog);
    j->pf_show = NULL;
    j->preflight = 0;
    j->opt.remote.fanout = fanout;
    sigprocmask(SIG_SETMASK, &saved, NULL);
    if (rc != 0 && j->opt.preflight)
        say("not starting the job: a node failed the preflight (dlrun check "
            "--nodes shows the same table)");
    return rc;
}
