/* local.c - every rank on this host: fork/exec each one. */
#include "launcher.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "net.h"
#include "proc.h"

/* Usable when every rank to start is on this host; in per-node mode the
 * scheduler already put this process on the node of its ranks. */
static int local_usable(const struct launch_job *job)
{
    const struct plan *p = job->plan;

    if (p->self_node >= 0)
        return 10;
    for (int i = 0; i < job->nranks; i++)
        if (!net_is_this_host(p->nodes[p->rank_node[job->ranks[i]]].host))
            return 0;
    return 10;
}

/* The PATH of the ranks' environment (the same for all of them: -x and
 * dlrun's variables are per job), NULL when they have none. */
static const char *ranks_path(const struct launch_job *job)
{
    char *const *envp = job->nranks > 0 ? job->rank_envp[job->ranks[0]] : NULL;

    for (; envp && *envp; envp++)
        if (strncmp(*envp, "PATH=", 5) == 0)
            return *envp + 5;
    return NULL;
}

static int local_start(const struct launch_job *job, struct sv_rank *ranks,
                       int *exec_errno, struct err *err)
{
    char path[PATH_MAX];
    int found = proc_find_program(job->argv[0], ranks_path(job), path,
                                  sizeof path) == 0;
    sigset_t reset;

    proc_nondefault_signals(&reset);    /* once, not in every child */
    for (int i = 0; i < job->nranks; i++) {
        int r = job->ranks[i];
        struct proc_spec spec = {
            .argv = job->argv, .path = found ? path : NULL,
            .envp = job->rank_envp[r],
            .mask = &job->child_mask,
            .out_fd = job->out ? output_child_fd(job->out, i, 1) : -1,
            .err_fd = job->out ? output_child_fd(job->out, i, 2) : -1,
            .cpus = job->bind && CPU_COUNT(&job->bind[r].mask) ?
                    &job->bind[r].mask : NULL,
            .reset = &reset, .guarded = 1,
        };
        int rc;

        ranks[i].rank = r;
        ranks[i].status = 0;
        rc = proc_spawn(&spec, &ranks[i].pid, exec_errno, err);
        if (job->out)
            output_close_child_ends(job->out, i);
        if (rc < 0) {
            launcher_kill_started(ranks, i);
            return err_prefix(err, "rank %d", r);
        }
        ranks[i].running = 1;
        ranks[i].start = supervise_wall_time();
    }
    return 0;
}

const struct launcher launcher_local = {
    .name = "local", .usable = local_usable, .start = local_start,
};
