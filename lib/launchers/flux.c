/* flux.c - inside a Flux allocation (a flux batch script, a flux alloc
 * shell), every agent with one flux run: Flux is the distributed engine
 * (fan-out, signals, cleanup), as srun.c makes Slurm's.
 *
 * flux run --nodes=N --ntasks=N --exclusive puts one agent on each of N
 * whole nodes, --requires=host:LIST on the plan's; its shell options
 * leave the agents unbound (cpu-affinity=off, gpu-affinity=off: the
 * agents bind their ranks), without Flux's PMI server (pmi=off: dlrun
 * serves its ranks itself) and end every node when one agent fails
 * (exit-on-error).  flux run copies its environment into the tasks, so
 * the broker's token and the -x values (DLRUN_X_*) reach the agents
 * without being on a command line.  Each agent finds its node by its host
 * name (the row names no node variable): Flux's host list is of host
 * names.
 *
 * flux run runs in its own process group and gets SIGTERM if dlrun dies;
 * it forwards SIGTERM, SIGHUP, SIGALRM, SIGUSR1 and SIGUSR2 to every task
 * (flux-job(1), attach), while its first SIGINT only prints the job's
 * status: a SIGINT goes to it as SIGTERM. */
#include "launchers/launcher.h"

#include <stdio.h>
#include <stdlib.h>

#include "util/strv.h"
#include "where/sched.h"

/* "node1,node2" for --requires=host: (caller frees); NULL when out of
 * memory. */
static char *host_list(const struct agent_job *job)
{
    struct membuf b;
    FILE *m = membuf_open(&b);

    if (!m)
        return NULL;
    for (int i = 0; i < job->nnodes; i++)
        fprintf(m, "%s%s", i ? "," : "", job->plan->nodes[job->nodes[i]].host);
    return membuf_close(&b);
}

static void flux_argv(const struct agent_job *job, const char *hosts,
                      struct strv *a)
{
    strv_addf(a, "flux");
    strv_addf(a, "run");
    strv_addf(a, "--nodes=%d", job->nnodes);
    strv_addf(a, "--ntasks=%d", job->nnodes);
    strv_addf(a, "--exclusive");
    strv_addf(a, "--requires=host:%s", hosts);
    strv_addf(a, "-o");
    strv_addf(a, "cpu-affinity=off");
    strv_addf(a, "-o");
    strv_addf(a, "gpu-affinity=off");
    strv_addf(a, "-o");
    strv_addf(a, "pmi=off");
    strv_addf(a, "-o");
    strv_addf(a, "exit-on-error");
    for (char **p = job->agent_args; *p; p++)
        strv_addf(a, "%s", *p);
    strv_addf(a, "--");
    for (char **p = job->prog; *p; p++)
        strv_addf(a, "%s", *p);
}

/* The default in the allocation of a scheduler whose row names it
 * (Flux's), not inside one of its tasks.  Elsewhere only when named: in
 * a system instance flux run allocates the plan's nodes itself. */
static int flux_detect(const struct plan *p, const struct alloc *a)
{
    (void)p;
    return launcher_sched_default(a, launcher_flux.name);
}

static int flux_start(const struct launch_req *req, struct launched *run,
                      struct err *err)
{
    const struct agent_job *job = req->agents;
    struct strv argv = { 0 };
    char *hosts = host_list(job);
    int rc = -1;

    if (hosts)
        flux_argv(job, hosts, &argv);
    if (!hosts || argv.failed)
        err_set(err, "out of memory");
    else
        rc = launcher_start_step(job, argv.v, run, err);
    strv_free(&argv);
    free(hosts);
    return rc;
}

const struct launcher launcher_flux = {
    .name = "flux", .caps = LAUNCHER_AGENTS | LAUNCHER_SIGNALS,
    .needs = "needs Flux's flux run",
    .detect = flux_detect, .start = flux_start,
    .signal = launcher_signal_step, .destroy = launcher_end_step,
};
