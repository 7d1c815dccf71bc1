/* job.c - see job.h. */
#include "job.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "envout.h"
#include "envwire.h"
#include "horovod.h"
#include "pmix_host.h"
#include "pmixc.h"

extern char **environ;

int job_prepare(struct job *j, int collective)
{
    struct err err = { "" };

    /* a head's -x values, before anything reads the environment */
    if (envwire_take_exports(&j->opt.exports, &j->opt.nexports, &j->xvalues,
                             &err) < 0)
        return cmd_fail(EXIT_FAIL, "%s", err.msg);
    if (alloc_detect(&j->opt.alloc, environ, &j->alloc, &err) < 0)
        return cmd_fail(EXIT_USAGE, "%s", err.msg);
    if (plan_build(&j->alloc, &j->opt.plan, &j->plan, &err) < 0)
        return cmd_fail(EXIT_USAGE, "%s", err.msg);
    job_launcher_affinity(j);
    if (job_bind(j) != 0)
        return EXIT_USAGE;
    j->opt.rdv.collective = collective;
    if (rdv_resolve(&j->alloc, &j->plan, &j->opt.rdv, environ, &j->rdv,
                    &err) == 0)
        return 0;
    if (collective)
        return cmd_fail(EXIT_USAGE, "%s", err.msg);
    /* `plan` for hosts this machine cannot resolve still shows the plan */
    snprintf(j->rdv.addr, sizeof j->rdv.addr, "(unresolved)");
    snprintf(j->rdv.addr_from, sizeof j->rdv.addr_from, "%.150s", err.msg);
    return 0;
}

/* --gpu-bind isolate: the rank sees only its GPU. */
static int job_isolate_gpu(const struct job *j, int rank, struct envset *out)
{
    struct err err = { "" };
    char buf[64];

    if (!j->bind || j->opt.bind.gpu != GPU_BIND_ISOLATE)
        return 0;
    if (bind_visible(&j->bind[rank], getenv("CUDA_VISIBLE_DEVICES"), buf,
                     sizeof buf, &err) < 0)
        return cmd_fail(EXIT_USAGE, "rank %d: %s", rank, err.msg);
    if (!buf[0])
        return 0;
    return envset_set(out, "CUDA_VISIBLE_DEVICES", buf, &err,
                      "--gpu-bind isolate: GPU %d (%s)", j->bind[rank].gpu,
                      j->bind[rank].gpu_busid) < 0 ?
           cmd_fail(EXIT_FAIL, "%s", err.msg) : 0;
}

int job_rank_env(const struct job *j, int rank, struct envset *out)
{
    struct envout_opts eo = {
        .iface = j->opt.rdv.iface,
        .keep_env = j->opt.keep_env,
        .exports = j->opt.exports,
        .envp = environ,
        .restart = j->restart,
        .slurm_job = j->agent && getenv("SLURM_JOB_ID") != NULL,
        .max_restarts = j->opt.max_restarts,
    };
    struct err err = { "" };

    if (envout_rank(&j->alloc, &j->plan, rank, &j->rdv, &eo, out, &err) < 0)
        return cmd_fail(EXIT_USAGE, "%s", err.msg);
    if (horovod_rank_env(j, out) != 0)
        return EXIT_USAGE;
    if (j->pmix && pmix_host_rank_env(j->pmix, rank, out, &err) < 0)
        return cmd_fail(EXIT_FAIL, "%s", err.msg);
    return job_isolate_gpu(j, rank, out);
}

void job_free(struct job *j)
{
    free(j->bind);
    j->bind = NULL;
    free(j->rdv.worker_ports);
    j->rdv.worker_ports = NULL;
    pmixc_finalize();
    plan_free(&j->plan);
    alloc_free(&j->alloc);
    options_free(&j->opt);
    strv_free(&j->xvalues);
}

int job_exec(char **argv, const struct envset *s, int rank)
{
    char **envp = envset_envp(s, environ);
    int e;

    if (!envp)
        return cmd_fail(EXIT_FAIL, "out of memory");
    fflush(NULL);
    environ = envp;     /* execvp searches the PATH the rank will have */
    execvp(argv[0], argv);
    e = errno;
    return cmd_fail(e == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC,
                    "rank %d: cannot run '%s': %s", rank, argv[0], strerror(e));
}
