/* srun.c - inside a Slurm allocation, every agent with one srun: Slurm is
 * the distributed engine (fan-out, signals, cleanup), as PRRTE's plm/slurm.
 *
 * srun runs in its own process group (a terminal's Ctrl-C reaches dlrun,
 * which stops the job in order), gets SIGTERM if dlrun dies (so the step
 * ends), and --kill-on-bad-exit ends every node when one agent fails.
 * Each agent finds its node from the variable its scheduler's row names
 * (node_var: SLURMD_NODENAME).  The broker's token and the -x values
 * (DLRUN_X_*) reach the agents in srun's environment, never on its
 * command line: --export=ALL, whatever SLURM_EXPORT_ENV says (sbatch
 * --export=NONE sets it, and the agents would get neither).
 *
 * Signals go to srun, which forwards them to every task of the step (the
 * agents), as scancel --signal would; destroy() starts with SIGTERM, on
 * which the agents end their ranks and exit, and with them the step.
 *
 * --overlap: a step one of whose nodes lost its link stays RUNNING at the
 * controller, holding its CPUs on every other node, long after srun ended
 * (Slurm 22.05 keeps it past marking the node down).  After a node fault
 * (--spares) the next attempt's step would wait for them forever
 * ("Requested nodes are busy"); an overlapping step shares them. */
#include "launchers/launcher.h"

#include <stdio.h>
#include <stdlib.h>

#include "util/strv.h"
#include "where/sched.h"

/* "node1,node2" for --nodelist (caller frees); NULL when out of memory. */
static char *node_list(const struct agent_job *job)
{
    struct membuf b;
    FILE *m = membuf_open(&b);

    if (!m)
        return NULL;
    for (int i = 0; i < job->nnodes; i++)
        fprintf(m, "%s%s", i ? "," : "", job->plan->nodes[job->nodes[i]].host);
    return membuf_close(&b);
}

static void srun_argv(const struct agent_job *job, const char *nodes,
                      struct strv *a)
{
    strv_addf(a, "srun");
    strv_addf(a, "--nodes=%d", job->nnodes);
    strv_addf(a, "--ntasks=%d", job->nnodes);
    strv_addf(a, "--ntasks-per-node=1");
    strv_addf(a, "--kill-on-bad-exit=1");
    strv_addf(a, "--overlap");
    strv_addf(a, "--cpu-bind=none");
    strv_addf(a, "--mpi=none");
    strv_addf(a, "--export=ALL");
    strv_addf(a, "--nodelist=%s", nodes);
    for (char **p = job->agent_args; *p; p++)
        strv_addf(a, "%s", *p);
    strv_addf(a, "--");
    for (char **p = job->prog; *p; p++)
        strv_addf(a, "%s", *p);
}

/* The default in the job of a scheduler whose row names it (Slurm's),
 * not inside one of its steps.  Elsewhere only when named: on a Slurm
 * login node srun makes its own allocation of the plan's nodes. */
static int srun_detect(const struct plan *p, const struct alloc *a)
{
    (void)p;
    return launcher_sched_default(a, launcher_srun.name);
}

static int srun_start(const struct launch_req *req, struct launched *run,
                      struct err *err)
{
    const struct agent_job *job = req->agents;
    struct strv argv = { 0 };
    char *nodes = node_list(job);
    int rc = -1;

    if (nodes)
        srun_argv(job, nodes, &argv);
    if (!nodes || argv.failed)
        err_set(err, "out of memory");
    else
        rc = launcher_start_step(job, argv.v, run, err);
    strv_free(&argv);
    free(nodes);
    return rc;
}

const struct launcher launcher_srun = {
    .name = "srun", .caps = LAUNCHER_AGENTS | LAUNCHER_SIGNALS,
    .needs = "needs Slurm's srun",
    .detect = srun_detect, .start = srun_start,
    .signal = launcher_signal_step, .destroy = launcher_end_step,
};
