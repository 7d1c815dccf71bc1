/* jobmpi.c - MPI programs under dlrun (docs/mpi.md): --mpi=auto|pmix|none
 * hosts a PMIx server for the ranks dlrun starts (here, or in each agent
 * across nodes); --mpi=srun lets srun --mpi=pmix start the ranks, each a
 * dlrun in per-task mode that sets the rank's variables and execs PROG;
 * --mpi=pmi1|pmi2 (auto for MPICH's ABI) serve the simple PMI wire on
 * this host (job/jobpmi.c). */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "job/job.h"
#include "job/progress.h"
#include "mpi/pmix_host.h"
#include "run/envwire.h"
#include "run/proc.h"
#include "run/supervise.h"
#include "util/clock.h"
#include "util/say.h"
#include "util/strv.h"
#include "where/mpidetect.h"
#include "where/sched.h"

extern char **environ;

/* "0-3,8" into buf (len bytes). */
static const char *cpus_str(const cpu_set_t *s, char *buf, size_t len)
{
    size_t n = 0;

    buf[0] = '\0';
    for (int c = 0; c < CPU_SETSIZE && n + 24 < len; c++) {
        int e = c;
        if (!CPU_ISSET(c, s))
            continue;
        while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, s))
            e++;
        n += (size_t)snprintf(buf + n, len - n, e > c ? "%s%d-%d" : "%s%d",
                              n ? "," : "", c, e);
        c = e;
    }
    return buf;
}

/* The launchers that bind the tasks they start (Open MPI binds to a core
 * for two ranks or fewer, to a socket beyond; Hydra with -bind-to). */
static int launcher_binds(const struct alloc *a)
{
    return a->has_task && a->kind == ALLOC_MPIRUN;
}

/* The variables mpirun gave this task as one rank of its job: the ranks a
 * per-node dlrun starts are not that rank (an MPI program among them
 * would join mpirun's job as it), so they do not inherit them.  Users'
 * MCA settings (OMPI_MCA_btl_..., PMIX_MCA_...) stay. */
static int launcher_var(const char *e)
{
    static const char *const drop[] = {
        "OMPI_COMM_WORLD_", "OMPI_MCA_orte_", "OMPI_MCA_ess", "OMPI_MCA_pmix=",
        "OMPI_FILE_LOCATION=", "OMPI_FIRST_RANKS=", "OMPI_APP_CTX_NUM_PROCS=",
        "OMPI_NUM_APP_CTX=", "OMPI_UNIVERSE_SIZE=", "OMPI_COMMAND=",
        "OMPI_ARGV=", "OMPI_MCA_initial_wdir=", "PMIX_", "PRTE_",
    };

    if (strncmp(e, "PMIX_MCA_", 9) == 0 || strncmp(e, "PRTE_MCA_", 9) == 0)
        return 0;
    for (size_t i = 0; i < sizeof drop / sizeof drop[0]; i++)
        if (strncmp(e, drop[i], strlen(drop[i])) == 0)
            return 1;
    return 0;
}

static void drop_launcher_env(void)
{
    char name[256];

    for (size_t i = 0; environ[i];) {
        size_t n = strcspn(environ[i], "=");
        if (!launcher_var(environ[i]) || n >= sizeof name) {
            i++;
            continue;
        }
        memcpy(name, environ[i], n);
        name[n] = '\0';
        unsetenv(name);     /* environ shifts: look at index i again */
    }
}

/* --mpi=auto: the simple PMI wire for a program that links MPICH's ABI
 * (MPICH, Intel MPI, MVAPICH), a PMIx server for another MPI program
 * (mpidetect.h), with the simple PMI wire beside it for a script, whose
 * MPI is not known before it runs; -v says what decided. */
static int resolve_auto(struct job *j, char **prog, int across)
{
    char why[400] = "";
    int abi = mpidetect_argv_abi(prog, getenv("PATH"));
    int mpi = abi != MPIDETECT_ABI_MPICH && !across &&
              pmix_host_available() &&
              mpidetect_argv_why(prog, getenv("PATH"), why, sizeof why);

    if (abi == MPIDETECT_ABI_MPICH) {
        progress_step("--mpi=auto: serving the simple PMI wire: %s links "
                      "MPICH's ABI (libmpich or libmpi*.so.12)", prog[0]);
        return MPI_PMI1;
    }
    if (mpi && !abi && !job_pmi_multinode(j))
        j->pmi_version = 1;

    progress_step("--mpi=auto: %s: %s", mpi ? "hosting a PMIx server"
                                            : "no PMIx server",
                  across ? "one dlrun per node cannot host one" :
                  !pmix_host_available() ? "this dlrun was built without PMIx"
                                         : why);
    return mpi ? MPI_PMIX : MPI_NONE;
}

/* --mpi=auto found no MPI program and hosts nothing: the guard watches. */
static int guard_wanted;

/* --mpi=pmi1|pmi2 (or auto for MPICH's ABI): served when every rank runs
 * on this host; elsewhere one line, never ranks that would each be an MPI
 * job of their own. */
static int resolve_pmi(struct job *j, int across, int was_auto)
{
    int v = j->opt.mpi == MPI_PMI2 ? 2 : 1;

    if (across)
        return say_fail(EXIT_USAGE, "%s: dlrun serves the simple PMI wire "
                        "(MPICH, Intel MPI, MVAPICH) from one dlrun and its "
                        "agents, and one dlrun per node started by srun "
                        "shares none: run one dlrun in the allocation, or "
                        "start the program with srun --mpi=pmi2 or "
                        "mpiexec.hydra", was_auto ? "--mpi=auto: the "
                        "program links MPICH's ABI" : v == 2 ? "--mpi=pmi2"
                                                             : "--mpi=pmi1");
    j->pmi_version = v;
    return 0;
}

int job_mpi_resolve(struct job *j, char **prog)
{
    struct options *o = &j->opt;
    int across = j->plan.self_node >= 0 && !j->agent && j->plan.nnodes > 1;
    int was_auto = o->mpi == MPI_AUTO;

    if (j->plan.self_node >= 0 && launcher_binds(&j->alloc))
        drop_launcher_env();
    if (o->mpi == MPI_SRUN)
        return 0;
    if (j->plan.per_task) {     /* srun or mpirun serve PMIx themselves */
        o->mpi = MPI_NONE;
        return 0;
    }
    if (o->mpi == MPI_AUTO)
        o->mpi = resolve_auto(j, prog, across);
    if (o->mpi == MPI_PMI1 || o->mpi == MPI_PMI2)
        return resolve_pmi(j, across, was_auto);
    guard_wanted = was_auto && o->mpi == MPI_NONE && j->plan.nranks > 1;
    if (o->mpi == MPI_PMIX && !pmix_host_available())
        return say_fail(EXIT_USAGE, "--mpi=pmix: this dlrun was built "
                        "without PMIx (install libpmix-dev and rebuild; "
                        "dlrun check)");
    if (o->mpi == MPI_PMIX && across)
        return say_fail(EXIT_USAGE, "--mpi=pmix: one dlrun per node started "
                        "by srun cannot join the nodes' PMIx servers; run "
                        "one dlrun in the allocation, or srun --mpi=pmix "
                        "dlrun PROG");
    return 0;
}

void job_launcher_affinity(struct job *j)
{
    cpu_set_t was, now;
    char a[256], b[256];

    /* per-task without binding options: mpirun's binding is the rank's */
    if (!launcher_binds(&j->alloc) || (j->plan.per_task && !j->opt.bind_given) ||
        sched_getaffinity(0, sizeof was, &was) < 0)
        return;
    CPU_ZERO(&now);
    for (int c = 0; c < CPU_SETSIZE; c++)
        CPU_SET(c, &now);
    /* the kernel keeps what the cgroup's cpuset allows */
    if (sched_setaffinity(0, sizeof now, &now) < 0 ||
        sched_getaffinity(0, sizeof now, &now) < 0 || CPU_EQUAL(&was, &now))
        return;
    if (j->opt.report_bindings)
        say("note: mpirun bound this task to CPUs %s; dlrun plans on the "
            "CPUs %s of the node (put --bind-to none on the mpirun line)",
            cpus_str(&was, a, sizeof a), cpus_str(&now, b, sizeof b));
}

/* A running rank that maps a libmpi: stop every rank (SIGTERM: no restart
 * follows a stop dlrun was told to make) with one line. */
static void guard_check(struct mpi_guard *g)
{
    struct supervise *sv = g->sv;
    int across = g->j->plan.self_node >= 0 && !g->j->agent &&
                 g->j->plan.nnodes > 1;
    char lib[128];
    size_t n;
    int mpich;

    for (int i = 0; i < sv->n && !g->tripped; i++) {
        struct sv_rank *r = &sv->ranks[i];
        if (!r->running || r->rank < 0 || !mpidetect_pid(r->pid, lib, sizeof lib))
            continue;
        g->tripped = 1;
        n = strlen(lib);
        /* MPICH's ABI speaks the simple PMI wire, not PMIx */
        mpich = strncmp(lib, "libmpich", 8) == 0 ||
                (n >= 6 && strcmp(lib + n - 6, ".so.12") == 0);
        say("rank %d (pid %d) loaded %s but dlrun %s for it: each rank would "
            "be an MPI job of its own; %s", r->rank, (int)r->pid, lib,
            mpich ? "serves no PMI" : "hosts no PMIx server",
            across ? "one dlrun per node cannot host one across nodes: start "
            "the ranks with srun --mpi=pmix or mpirun (dlrun per task), or "
            "run one dlrun in the allocation with --mpi=pmix" :
            mpich ? "run with --mpi=pmi1 (--mpi=none to allow it)" :
            "run with --mpi=pmix (--mpi=none to allow it)");
        sv->signal_received = SIGTERM;
        for (int k = 0; k < sv->n; k++)
            if (sv->ranks[k].running && sv->ranks[k].rank >= 0)
                killpg(sv->ranks[k].pid, SIGTERM);
    }
}

/* sv's periodic hook: the wrapped one's, then a look at the ranks at
 * 100 ms, 200 ms, ... every 2 s, for the first ten minutes, and once more
 * when a rank fails (MPI is loaded
 * while the program starts; reading every rank's maps forever would cost
 * a long job for nothing). */
static int guard_tick(void *ctx, int readable)
{
    struct mpi_guard *g = ctx;
    int inner = supervise_hook_call(&g->inner, readable);
    long now = clock_ms();

    /* a rank failed: look at the others now, while they still map what
     * they loaded (an MPI_Init that fails by itself, e.g. under srun's
     * variables, would otherwise end the job between two looks) */
    if (!g->tripped && !g->at_failure && g->sv->failed >= 0) {
        g->at_failure = 1;
        guard_check(g);
    }
    if (!g->done && !g->tripped && now >= g->next_ms) {
        guard_check(g);
        g->interval_ms = g->interval_ms < 1000 ? 2 * g->interval_ms : 2000;
        g->next_ms = now + g->interval_ms;
        g->done = now - g->start_ms > 600000;
    }
    return supervise_sooner(inner, g->done || g->tripped ? -1 : g->next_ms - now);
}

int job_mpi_guarded(void)
{
    return guard_wanted;
}

void job_mpi_guard(struct job *j, struct supervise *sv, struct mpi_guard *g)
{
    int agent_auto = j->agent && j->opt.mpi == MPI_AUTO;

    if (!agent_auto && (!guard_wanted || j->opt.mpi != MPI_NONE))
        return;
    *g = (struct mpi_guard){ .j = j, .sv = sv, .interval_ms = 50 };
    g->start_ms = clock_ms();
    g->next_ms = g->start_ms + 50;
    supervise_hook(sv, guard_tick, g, &g->inner);
}

/* Failures in the PMIx server's threads (across nodes). */
static void pmix_log(void *ctx, const char *line)
{
    (void)ctx;
    say("%s", line);
}

int job_pmix_start(struct job *j, const int *ranks, int n)
{
    struct pmix_host_opts po = { .plan = &j->plan, .ranks = ranks,
                                 .nranks = n, .log = pmix_log };
    struct err err = { "" };
    char id[300];

    if (j->opt.mpi != MPI_PMIX || n == 0)  /* n: an agent of agents only */
        return 0;
    if (j->agent && j->plan.nnodes > 1) {
        po.broker = getenv("DLRUN_BROKER");
        po.token = getenv("DLRUN_TOKEN");
        if (!po.broker || !po.token)
            return say_fail(EXIT_FAIL, "--mpi=pmix: agent without "
                            "DLRUN_BROKER/DLRUN_TOKEN");
        /* every agent names the namespace alike: the head's broker (a new
         * one for each run of the head's agents), not DLRUN_BROKER, which
         * is this node's relay (a path of its own, with '/' in it) */
        snprintf(id, sizeof id, "%.200s",
                 j->head_broker[0] ? j->head_broker : po.broker);
    } else {
        snprintf(id, sizeof id, "%d", (int)getpid());
    }
    po.job_id = id;
    po.dir = j->errdir;     /* the guard removes it if dlrun is killed */
    j->pmix = pmix_host_start(&po, &err);
    if (!j->pmix)
        return say_fail(EXIT_FAIL, "cannot host PMIx for the MPI ranks: %s "
                        "(--mpi=none to run without)", err.msg);
    return 0;
}

int job_pmix_begin(struct job *j)
{
    struct err err = { "" };

    if (j->pmix && pmix_host_job_begin(j->pmix, j->restart, &err) < 0)
        return say_fail(EXIT_FAIL, "%s", err.msg);
    return 0;
}

void job_pmix_end(struct job *j)
{
    pmix_host_job_end(j->pmix);
}

void job_pmix_stop(struct job *j)
{
    pmix_host_stop(j->pmix);
    j->pmix = NULL;
}

/* A Slurm hostfile with one line per rank (--distribution=arbitrary), in
 * a memory file srun reads as /proc/self/fd/N after exec.  The fd, or -1. */
static int rank_hostfile(const struct plan *p)
{
    int fd = memfd_create("dlrun-hostfile", 0);
    FILE *f = fd < 0 ? NULL : fdopen(dup(fd), "w");

    if (!f) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    for (int r = 0; r < p->nranks; r++)
        fprintf(f, "%s\n", p->nodes[p->rank_node[r]].host);
    if (fclose(f) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* -x values reach the per-task dlruns in srun's environment as
 * DLRUN_X_NAME (lib/run/envwire.h), never on srun's command line, which `ps`
 * shows every user of every node; names without a value stay options. */
static int task_exports(const struct options *o, struct strv *a)
{
    struct envset xenv = { .no_from = 1 };
    struct err err = { "" };
    int rc = 0;

    for (int i = 0; rc >= 0 && i < o->nexports; i++) {
        rc = envwire_put_export(&xenv, o->exports[i], environ, &err);
        if (rc == 0)
            strv_addf(a, "-x%s", o->exports[i]);
    }
    for (size_t i = 0; rc >= 0 && i < xenv.n; i++)
        rc = setenv(xenv.v[i].name, xenv.v[i].value, 1);
    envset_free(&xenv);
    return rc < 0 ? -1 : 0;
}

/* The per-task dlrun's options: those that shape a rank's environment. */
static void task_options(const struct options *o, struct strv *a)
{
    static const char *const bind_flags[3] = {
        "--map-by", "--bind-to", "--gpu-bind",
    };

    if (task_exports(o, a) < 0)
        a->failed = 1;
    for (int i = 0; i < 3; i++)
        if (o->bind_arg[i])
            strv_addf(a, "%s=%s", bind_flags[i], o->bind_arg[i]);
    if (o->rdv.iface)
        strv_addf(a, "--iface=%s", o->rdv.iface);
    if (o->rdv.master_addr)
        strv_addf(a, "--master-addr=%s", o->rdv.master_addr);
    if (o->rdv.master_port)
        strv_addf(a, "--master-port=%d", o->rdv.master_port);
    if (o->keep_env)
        strv_addf(a, "--keep-env");
    if (o->report_bindings)
        strv_addf(a, "--report-bindings");
    if (o->tf_config != TF_AUTO)   /* the head's decision, every task */
        strv_addf(a, "--tf-config=%s", o->tf_config == TF_YES ? "yes" : "no");
    strv_addf(a, "--mpi=none");
}

static void srun_argv(const struct job *j, char **prog, struct strv *a)
{
    char self[PATH_MAX];
    int n = proc_self_exe(self, sizeof self);
    strv_addf(a, "srun");
    strv_addf(a, "--mpi=pmix");
    strv_addf(a, "--ntasks=%d", j->plan.nranks);
    strv_addf(a, "--nodes=%d", j->plan.nnodes);
    strv_addf(a, "--distribution=arbitrary");
    strv_addf(a, "--kill-on-bad-exit=1");
    strv_addf(a, "--export=ALL");   /* the DLRUN_X_ values, whatever
                                       SLURM_EXPORT_ENV says */
    if (j->opt.tag_output)
        strv_addf(a, "--label");
    strv_addf(a, "%s", n == 0 ? self : "dlrun");
    task_options(&j->opt, a);
    strv_addf(a, "--");
    for (char **q = prog; *q; q++)
        strv_addf(a, "%s", *q);
}

int job_mpi_srun(struct job *j, char **argv, int prog)
{
    struct strv a = { 0 };
    struct err err = { "" };
    char file[64];
    int fd, e;

    if (j->plan.per_task || j->alloc.kind != ALLOC_JOB || !j->alloc.sched ||
        strcmp(j->alloc.sched->launcher, "srun") != 0)
        return say_fail(EXIT_USAGE, "--mpi=srun: run dlrun inside a Slurm "
                        "allocation (sbatch, salloc), not inside srun's "
                        "tasks (allocation source: %s)", j->alloc.source);
    if (j->opt.output_dir || j->opt.nfilter || j->opt.max_restarts ||
        j->opt.summary || j->opt.timestamp_output)
        return say_fail(EXIT_USAGE, "--mpi=srun: srun handles output and "
                        "supervision; --output-dir, --ranks-filter, "
                        "--timestamp-output, --max-restarts and --summary "
                        "need --mpi=pmix");
    fd = rank_hostfile(&j->plan);
    if (fd < 0)
        return say_fail(EXIT_FAIL, "--mpi=srun: cannot write the host file");
    snprintf(file, sizeof file, "/proc/self/fd/%d", fd);
    srun_argv(j, argv + prog, &a);
    if (a.failed || setenv("SLURM_HOSTFILE", file, 1) < 0)
        return say_fail(EXIT_FAIL, "out of memory");
    proc_exec(a.v, NULL, NULL, &e, &err);
    strv_free(&a);
    return say_fail(e == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC, "--mpi=srun: %s",
                    err.msg);
}
