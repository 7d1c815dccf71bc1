/* launcher.c - choosing the launcher for a plan. */
#include "launcher.h"

#include <signal.h>
#include <string.h>
#include <sys/wait.h>

static const struct launcher *const launchers[] = { &launcher_local };
#define NLAUNCHERS (sizeof launchers / sizeof launchers[0])

const struct launcher *launcher_select(const struct launch_job *job,
                                       const char *name, struct err *err)
{
    const struct plan *p = job->plan;
    const struct launcher *best = NULL;
    int best_prio = 0;

    for (size_t i = 0; i < NLAUNCHERS; i++) {
        int prio;
        if (name && strcmp(name, launchers[i]->name) != 0)
            continue;
        prio = launchers[i]->usable(job);
        if (prio > best_prio) {
            best = launchers[i];
            best_prio = prio;
        }
    }
    if (best)
        return best;
    if (name)
        err_set(err, "--launcher %s cannot run this plan", name);
    else
        err_set(err, "the plan puts ranks on other hosts (%s); outside a "
                "Slurm allocation dlrun cannot start them yet (ssh agents "
                "are not supported): run it in sbatch/salloc, or under srun "
                "or mpirun with one task per rank",
                p->nodes[p->nnodes - 1].host ? p->nodes[p->nnodes - 1].host : "?");
    return NULL;
}

static const struct agent_launcher *const agent_launchers[] = {
    &agents_srun, &agents_ssh,
};

const struct agent_launcher *agent_launcher_select(const char *name,
                                                   const char *alloc_source,
                                                   struct err *err)
{
    if (!name)
        name = strcmp(alloc_source, "slurm-job") == 0 ? "srun" : "ssh";
    for (size_t i = 0; i < sizeof agent_launchers / sizeof *agent_launchers;
         i++)
        if (strcmp(name, agent_launchers[i]->name) == 0)
            return agent_launchers[i];
    err_set(err, "--launcher %s cannot start ranks on other hosts: use srun "
            "(inside Slurm) or ssh", name);
    return NULL;
}

int agent_proc_node(int rank)
{
    return -1 - rank;
}

void launcher_kill_started(struct sv_rank *procs, int n)
{
    for (int i = 0; i < n; i++) {
        killpg(procs[i].pid, SIGKILL);
        waitpid(procs[i].pid, NULL, 0);
        procs[i].running = 0;
    }
}
