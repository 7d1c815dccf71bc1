/* sched_pbs.c - PBS Pro and Torque: qsub, "#PBS" directives.
 *
 * PBS_NODEFILE names the node file: one line per slot, order kept,
 * repeats are slots.
 */
#include "where/sched.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int pbs_detect(const struct alloc_request *req, char **envp)
{
    (void)req;
    return alloc_getenv(envp, "PBS_NODEFILE") != NULL;
}

static int pbs_read(const struct alloc_request *req, char **envp,
                    struct alloc *a, struct err *err)
{
    const char *path = alloc_getenv(envp, "PBS_NODEFILE");
    const char *job = alloc_getenv(envp, "PBS_JOBID");

    (void)req;
    if (!path)
        return err_set(err, "--alloc pbs: PBS_NODEFILE is not set");
    snprintf(a->why, sizeof a->why, "PBS_NODEFILE=%.200s", path);
    if (job && !(a->jobid = strdup(job)))
        return err_set(err, "out of memory");
    return alloc_read_hostfile(path, a, err) < 0 ?
           err_prefix(err, "PBS_NODEFILE") : 0;
}

static const struct alloc_source source = {
    .name = "pbs", .kind = ALLOC_JOB, .detect = pbs_detect, .read = pbs_read,
};

static const struct alloc_source *const sources[] = { &source, NULL };
static const char *const submit[] = { "qsub", NULL };

const struct sched sched_pbs = {
    .name = "pbs", .title = "PBS", .sources = sources,
    .probe = SCHED_PROBE_BATCH,
    .job_var = "PBS_JOBID", .launcher = "ssh",
    .template_file = "pbs.sh.in", .directive = "#PBS",
    .submit = submit, .id_end = " \t\n",
    /* SIGTERM at the walltime, about 10 s before SIGKILL */
    .requeue_signal = "TERM@10", .requeue_cmd = "qrerun",
};
