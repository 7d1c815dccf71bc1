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
 * which the agents end their ranks and exit, and with them the step. */
#include "launchers/launcher.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/proc.h"
#include "util/clock.h"
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
    return a && a->kind == ALLOC_JOB && a->sched &&
           strcmp(a->sched->launcher, launcher_srun.name) == 0 ? 20 : 1;
}

static int srun_start(const struct launch_req *req, struct launched *run,
                      struct err *err)
{
    const struct agent_job *job = req->agents;
    struct sv_rank *procs = run->procs;
    struct strv argv = { 0 };
    char *nodes = node_list(job);
    struct proc_spec spec = { .envp = job->envp, .mask = job->child_mask,
                              .out_fd = -1, .err_fd = -1,
                              .death_sig = SIGTERM };
    int rc = -1;

    if (nodes)
        srun_argv(job, nodes, &argv);
    if (!nodes || argv.failed) {
        err_set(err, "out of memory");
        goto out;
    }
    spec.argv = argv.v;
    run->n = 0;
    if (proc_spawn(&spec, &procs[0].pid, &run->exec_errno, err) < 0) {
        err_prefix(err, "cannot start the agents");
        goto out;
    }
    procs[0].rank = INT_MIN;
    procs[0].running = 1;
    procs[0].start = clock_wall();
    run->n = 1;
    rc = 0;
out:
    strv_free(&argv);
    free(nodes);
    return rc;
}

/* srun's first SIGINT only prints the step's status: a SIGINT (Ctrl-C)
 * goes to it as SIGTERM. */
static int srun_signal(struct launched *run, int sig)
{
    return launcher_signal_groups(run, sig == SIGINT ? SIGTERM : sig);
}

/* SIGTERM through srun ends the agents, and the step with them; a srun
 * still there after the grace is killed (its agents then end when the
 * head's heartbeats stop). */
static void srun_destroy(struct launched *run)
{
    launcher_end(run, SIGTERM, 5000);
}

const struct launcher launcher_srun = {
    .name = "srun", .caps = LAUNCHER_AGENTS | LAUNCHER_SIGNALS,
    .needs = "needs Slurm's srun",
    .detect = srun_detect, .start = srun_start,
    .signal = srun_signal, .destroy = srun_destroy,
};
