/* t_sched_slurm.c - the two Slurm sources on their own (detect and read,
 * without alloc.c's choice between them): a step's nodes and task counts,
 * its task, an interactive step (srun --pty) read as the job it runs in,
 * a batch script's job with CPUs and GPUs per node, the older variable
 * names, and each disagreement or gap refused with the variables named.
 * Captured environments of real clusters are checked in t_alloc.c. */
#include <string.h>

#include "where/alloc.h"
#include "fixture.h"
#include "tap.h"

#define STEP "slurm-step"
#define JOB "slurm-job"

static const struct source_row rows[] = {
    { "step 2x2", STEP, { "SLURM_JOB_ID=42", "SLURM_STEP_ID=1",
      "SLURM_STEP_NODELIST=gpu[1-2]", "SLURM_STEP_NUM_NODES=2",
      "SLURM_STEP_NUM_TASKS=4", "SLURM_STEP_TASKS_PER_NODE=2(x2)",
      "SLURM_PROCID=3", "SLURM_LOCALID=1", "SLURM_NODEID=1", NULL }, NULL,
      { 0 }, 1, "gpu1:2,gpu2:2", "42" },
    { "step, older names (SLURM_STEPID, SLURM_NODELIST)", STEP,
      { "SLURM_JOB_ID=43", "SLURM_STEPID=0", "SLURM_NODELIST=n[1-3]",
        "SLURM_TASKS_PER_NODE=1(x3)", "SLURM_NTASKS=3", "SLURM_PROCID=0",
        "SLURM_LOCALID=0", "SLURM_NODEID=0", NULL }, NULL, { 0 }, 1,
      "n1:1,n2:1,n3:1", "43" },
    { "step, node count disagrees", STEP, { "SLURM_JOB_ID=42",
      "SLURM_STEP_ID=1", "SLURM_STEP_NODELIST=gpu[1-2]",
      "SLURM_STEP_NUM_NODES=3", "SLURM_STEP_NUM_TASKS=4",
      "SLURM_STEP_TASKS_PER_NODE=2(x2)", "SLURM_PROCID=0", "SLURM_LOCALID=0",
      "SLURM_NODEID=0", NULL }, NULL, { 0 }, 1, NULL,
      "SLURM_STEP_NUM_NODES=3 but SLURM_STEP_NODELIST names 2 nodes" },
    { "step, a rank past the task count", STEP, { "SLURM_JOB_ID=42",
      "SLURM_STEP_ID=1", "SLURM_STEP_NODELIST=gpu[1-2]",
      "SLURM_STEP_NUM_TASKS=4", "SLURM_STEP_TASKS_PER_NODE=2(x2)",
      "SLURM_PROCID=4", "SLURM_LOCALID=0", "SLURM_NODEID=1", NULL }, NULL,
      { 0 }, 1, NULL, "SLURM_PROCID" },
    { "step without its node list", STEP, { "SLURM_JOB_ID=42",
      "SLURM_STEP_ID=1", NULL }, NULL, { 0 }, 1, NULL,
      "not a usable Slurm step" },
    { "srun --pty shell asked for 8 ranks: the job's nodes", STEP,
      { "SLURM_JOB_ID=44", "SLURM_STEP_ID=0", "SLURM_STEP_NODELIST=a1",
        "SLURM_STEP_NUM_TASKS=1", "SLURM_STEP_TASKS_PER_NODE=1",
        "SLURM_JOB_NODELIST=a[1-2]", "SLURM_TASKS_PER_NODE=4(x2)",
        "SLURM_PROCID=0", "SLURM_LOCALID=0", "SLURM_NODEID=0", NULL }, NULL,
      { .want_ranks = 8 }, 1, "a1:4,a2:4", "44" },
    { "a job alone is not a step", STEP, { "SLURM_JOB_ID=42", NULL }, NULL,
      { 0 }, 0, NULL, "not a usable Slurm step" },
    { "batch job", JOB, { "SLURM_JOB_ID=45", "SLURM_JOB_NODELIST=b[01-03]",
      "SLURM_JOB_NUM_NODES=3", "SLURM_TASKS_PER_NODE=2,1(x2)",
      "SLURM_NTASKS=4", "SLURM_JOB_CPUS_PER_NODE=8(x3)", NULL }, NULL, { 0 },
      1, "b01:2,b02:1,b03:1", "45" },
    { "batch job without task counts: a slot a node", JOB,
      { "SLURM_JOB_ID=46", "SLURM_NODELIST=c[1-2]", NULL }, NULL, { 0 }, 1,
      "c1:1,c2:1", "46" },
    { "batch job, node count disagrees", JOB, { "SLURM_JOB_ID=45",
      "SLURM_JOB_NODELIST=b[01-03]", "SLURM_JOB_NUM_NODES=2", NULL }, NULL,
      { 0 }, 1, NULL, "SLURM_JOB_NUM_NODES=2 but SLURM_JOB_NODELIST names 3" },
    { "batch job, bad CPUs per node", JOB, { "SLURM_JOB_ID=45",
      "SLURM_JOB_NODELIST=b[01-03]", "SLURM_JOB_CPUS_PER_NODE=8(x", NULL },
      NULL, { 0 }, 1, NULL, "SLURM_JOB_CPUS_PER_NODE" },
    { "a job id without a node list", JOB, { "SLURM_JOB_ID=47", NULL }, NULL,
      { 0 }, 1, NULL, "SLURM_JOB_NODELIST is not" },
    { "no Slurm", JOB, { "PBS_JOBID=1", NULL }, NULL, { 0 }, 0, NULL,
      "SLURM_JOB_NODELIST is not" },
};

/* What a step's read says about this task and the job's GPUs. */
static void task(void)
{
    const char *env[] = { "SLURM_JOB_ID=42", "SLURM_STEP_ID=1",
        "SLURM_STEP_NODELIST=gpu[1-2]", "SLURM_STEP_NUM_TASKS=4",
        "SLURM_STEP_TASKS_PER_NODE=2(x2)", "SLURM_PROCID=3",
        "SLURM_LOCALID=1", "SLURM_NODEID=1", "SLURM_GPUS_ON_NODE=2", NULL };
    char **envp = envp_of(env);
    struct alloc_request req = { 0 };
    struct alloc a = { 0 };
    struct err err = { "" };

    ok(alloc_source_find(STEP)->read(&req, envp, &a, &err) == 0 && a.has_task, "a step's task");
    ok(a.task.rank == 3 && a.task.size == 4 && a.task.local_rank == 1 &&
       a.task.local_size == 2 && a.task.node_rank == 1,
       "  rank 3 of 4, local 1 of 2, on node 1");
    is_str(a.stepid, "1", "  the step id");
    is_str(a.gpus, "0-1", "  SLURM_GPUS_ON_NODE=2: GPUs 0-1");
    alloc_free(&a);
    envp_free(envp);
}

int main(void)
{
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        source_row_check(&rows[i]);
    task();
    return tap_done();
}
