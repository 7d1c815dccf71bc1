/* t_jobscript.c - the words of a job script's dlrun line, as `dlrun
 * script` gives them to dlrun run's parser to check them: the same as
 * the rendered line, for each kind of job. */
#include <stdio.h>
#include <string.h>

#include "scripts/jobscript.h"
#include "scripts/jobspec.h"
#include "util/strv.h"
#include "tap.h"

/* j's words joined by ' '. */
static void words(const struct jobspec *j, char *buf, size_t len)
{
    struct strv v = { 0 };
    size_t used = 0;

    jobscript_dlrun_argv(j, &v);
    buf[0] = '\0';
    for (size_t i = 0; i < v.n && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? " " : "",
                                 v.v[i]);
    strv_free(&v);
}

int main(void)
{
    static const char *const cmd[] = { "python", "train.py", "--lr", "0.1",
                                       NULL };
    static const char *const args[] = { "--map-by", "ppr:4:socket", NULL };
    static const char *const env[] = { "NCCL_DEBUG=INFO", NULL };
    struct jobspec j = { .sched = sched_find("slurm"), .nodes = 2, .gpus_per_node = 8,
                         .command = cmd, .dlrun_args = args };
    char got[512];

    words(&j, got, sizeof got);
    is_str(got, "--nproc-per-node 8 --map-by ppr:4:socket -- python train.py "
           "--lr 0.1", "slurm, one dlrun per node");
    j.per_gpu = 1;
    words(&j, got, sizeof got);
    is_str(got, "--map-by ppr:4:socket -- python train.py --lr 0.1",
           "slurm, one task per GPU: no --nproc-per-node");
    j.per_gpu = 0;
    j.sched = sched_find("nqsv");
    j.mpirun = 1;
    words(&j, got, sizeof got);
    is_str(got, "--nproc-per-node 8 --map-by ppr:4:socket -- python train.py "
           "--lr 0.1", "nqsv under mpirun: a dlrun per node");
    j.mpirun = 0;
    j.sched = sched_find("pjm");
    j.env = env;
    words(&j, got, sizeof got);
    is_str(got, "--alloc pjm --nproc-per-node 8 -x PATH -x LD_LIBRARY_PATH "
           "-x PYTHONPATH -x NCCL_DEBUG --map-by ppr:4:socket -- python "
           "train.py --lr 0.1", "pjm head: --alloc, the variables by name");
    return tap_done();
}
