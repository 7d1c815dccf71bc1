/* local.c - every rank on this host: fork/exec each one. */
#include "launchers/launcher.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>
#include <string.h>

#include "mpi/pmi_serve.h"
#include "util/clock.h"
#include "util/net.h"
#include "run/proc.h"
#include "util/findprog.h"

/* Fits when every rank is on this host; in per-node mode the scheduler
 * already put this process on the node of its ranks. */
static int local_detect(const struct plan *p, const struct alloc *a)
{
    (void)a;
    if (p->self_node >= 0)
        return 10;
    for (int i = 0; i < p->nnodes; i++)
        if (p->nodes[i].nranks > 0 && !net_is_this_host(p->nodes[i].host))
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

static void local_destroy(struct launched *run)
{
    launcher_end(run, SIGKILL, 0);  /* the supervisor gave them SIGTERM */
}

static int local_start(const struct launch_req *req, struct launched *run,
                       struct err *err)
{
    const struct launch_job *job = req->ranks;
    struct sv_rank *ranks = run->procs;
    char path[PATH_MAX];
    int found = find_program(job->argv[0], ranks_path(job), path,
                                  sizeof path) == 0;
    sigset_t reset;
    /* dlrun's stdin is rank 0's alone, as under mpirun: ranks sharing it
     * would race for each line */
    int nul = open("/dev/null", O_RDONLY | O_CLOEXEC), rc = 0;

    run->n = 0;
    proc_nondefault_signals(&reset);    /* once, not in every child */
    for (int i = 0; i < job->nranks; i++) {
        int r = job->ranks[i];
        if (job->out && output_child_open(job->out, i, err) < 0) {
            local_destroy(run);
            rc = err_prefix(err, "rank %d", r);
            break;
        }
        struct proc_spec spec = {
            .argv = job->argv, .path = found ? path : NULL,
            .envp = job->rank_envp[r],
            .mask = &job->child_mask,
            .out_fd = job->out ? output_child_fd(job->out, i, 1) : -1,
            .err_fd = job->out ? output_child_fd(job->out, i, 2) : -1,
            .cpus = job->bind && CPU_COUNT(&job->bind[r].mask) ?
                    &job->bind[r].mask : NULL,
            .in_fd = r == 0 || nul < 0 ? 0 : nul,
            .reset = &reset, .guarded = 1,
            .keep_fd = job->pmi ? pmi_serve_child_fd(job->pmi, r) : 0,
        };

        ranks[i].rank = r;
        ranks[i].status = 0;
        rc = proc_spawn(&spec, &ranks[i].pid, &run->exec_errno, err);
        if (job->out)
            output_close_child_ends(job->out, i);
        if (rc < 0) {
            local_destroy(run);
            err_prefix(err, "rank %d", r);
            break;
        }
        ranks[i].running = 1;
        ranks[i].start = clock_wall();
        run->n = i + 1;
    }
    if (nul > 0)       /* 0: stdin was closed; it is every rank's now */
        close(nul);
    return rc;
}

const struct launcher launcher_local = {
    .name = "local", .caps = LAUNCHER_SIGNALS,
    .needs = "starts ranks on this host only; use srun (inside Slurm), flux (inside Flux) or ssh",
    .detect = local_detect, .start = local_start,
    .signal = launcher_signal_groups, .destroy = local_destroy,
};
