/* t_jobmpi.c - --mpi for the ranks dlrun starts: auto resolves to
 * hosting nothing for a program that is not MPI (and guards), per-task
 * ranks get none, pmix across one-dlrun-per-node nodes and srun outside
 * an allocation are refused with their line; the run-time guard looks at
 * the ranks at growing intervals of a fake clock and, when one maps a
 * libmpi, says so and stops every rank with SIGTERM. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "job/job.h"
#include "run/supervise.h"
#include "util/clock.h"
#include "util/say.h"
#include "where/hostfile.h"
#include "where/sched.h"
#include "said.h"
#include "tap.h"

static long now_ms;

static long fake_now(void *ctx)
{
    (void)ctx;
    return now_ms;
}

static int job_on(struct job *j, const char *hosts)
{
    struct err err = { "" };

    memset(j, 0, sizeof *j);
    if (hosts_parse(hosts, &j->alloc, &err) == 0 &&
        plan_build(&j->alloc, &j->opt.plan, &j->plan, &err) == 0) {
        j->alloc.source = "hosts";
        j->alloc.kind = ALLOC_HOSTS;
        return 0;
    }
    printf("# %s\n", err.msg);
    return -1;
}

static void job_done(struct job *j)
{
    plan_free(&j->plan);
    alloc_free(&j->alloc);
}

static void resolve(struct said *k)
{
    char *prog[] = { "true", NULL };
    struct job j;

    if (job_on(&j, "localhost:2") != 0)
        return;
    j.plan.per_task = 1;
    ok(job_mpi_resolve(&j, prog) == 0 && j.opt.mpi == MPI_NONE,
       "per-task ranks: srun or mpirun serve PMIx, dlrun none");
    j.plan.per_task = 0;
    j.opt.mpi = MPI_SRUN;
    ok(job_mpi_resolve(&j, prog) == 0 && j.opt.mpi == MPI_SRUN, "srun stays");
    j.opt.mpi = MPI_AUTO;
    ok(job_mpi_resolve(&j, prog) == 0 && j.opt.mpi == MPI_NONE &&
       job_mpi_guarded(), "auto, not an MPI program: none, guarded");
    is_int(job_mpi_srun(&j, prog, 0), EXIT_USAGE, "--mpi=srun outside Slurm: 2");
    is_str(k->last, "--mpi=srun: run dlrun inside a Slurm allocation "
           "(sbatch, salloc), not inside srun's tasks (allocation source: "
           "hosts)", "  said");
    j.alloc.source = "slurm-job";
    j.alloc.kind = ALLOC_JOB;
    j.alloc.sched = sched_find("slurm");
    j.opt.max_restarts = 1;
    is_int(job_mpi_srun(&j, prog, 0), EXIT_USAGE, "--mpi=srun, --max-restarts: 2");
    ok(strstr(k->last, "--max-restarts and --summary need --mpi=pmix") != NULL,
       "  said");
    job_done(&j);
    if (job_on(&j, "n1:1,n2:1") != 0)
        return;
    j.plan.self_node = 0;
    j.opt.mpi = MPI_PMIX;
    is_int(job_mpi_resolve(&j, prog), EXIT_USAGE,
           "pmix, one dlrun per node across nodes: 2");
    ok(strncmp(k->last, "--mpi=pmix: ", 12) == 0, "  said");
    j.opt.mpi = MPI_PMI2;
    is_int(job_mpi_resolve(&j, prog), EXIT_USAGE,
           "pmi2, one dlrun per node across nodes: 2");
    ok(strstr(k->last, "--mpi=pmi2: dlrun serves the simple PMI wire (MPICH, "
              "Intel MPI, MVAPICH) from one dlrun and its agents, and one "
              "dlrun per node started by srun shares none: ") != NULL,
       "  said");
    j.plan.self_node = -1;
    j.opt.mpi = MPI_PMI1;
    ok(job_mpi_resolve(&j, prog) == 0 && j.pmi_version == 1,
       "pmi1 on two nodes from one dlrun: its agents serve it");
    job_done(&j);
    if (job_on(&j, "localhost:2") != 0)
        return;
    j.opt.mpi = MPI_PMI1;
    ok(job_mpi_resolve(&j, prog) == 0 && j.pmi_version == 1,
       "pmi1 on this host: served");
    j.opt.mpi = MPI_PMI2;
    ok(job_mpi_resolve(&j, prog) == 0 && j.pmi_version == 2,
       "pmi2 on this host: served, PMI-2 asked for");
    job_done(&j);
}

/* A rank of its own process group that maps file (a "libmpich"), or
 * not (file NULL); -1 when it cannot start. */
static pid_t rank_process(const char *file)
{
    int p[2];
    pid_t pid;
    char c = 0;

    if (pipe(p) < 0 || (pid = fork()) < 0)
        return -1;
    if (pid == 0) {
        int fd = file ? open(file, O_RDONLY) : -1;
        setpgid(0, 0);
        if (fd >= 0)
            mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
        write(p[1], &c, 1);
        pause();
        _exit(0);
    }
    close(p[1]);
    read(p[0], &c, 1);
    close(p[0]);
    setpgid(pid, pid);
    return pid;
}

static void guard(struct said *k, const char *lib)
{
    struct sv_rank r[2] = { { .rank = 0 }, { .rank = 1 } };
    struct supervise sv = { .ranks = r, .n = 2, .failed = -1 };
    struct mpi_guard g = { 0 };
    char *prog[] = { "true", NULL };
    struct job j;
    int st0 = 0, st1 = 0;

    if (job_on(&j, "localhost:2") != 0 || job_mpi_resolve(&j, prog) != 0)
        return;
    now_ms = 0;
    job_mpi_guard(&j, &sv, &g);
    if (!ok(sv.extra != NULL, "the guard hooks the supervisor"))
        return;
    is_int(sv.extra(sv.extra_ctx, 0), 50, "  first look in 50 ms");
    now_ms = 50;
    is_int(sv.extra(sv.extra_ctx, 0), 100, "  then in 100");
    now_ms = 150;
    is_int(sv.extra(sv.extra_ctx, 0), 200, "  then in 200");
    r[0] = (struct sv_rank){ .rank = 0, .pid = rank_process(NULL), .running = 1 };
    r[1] = (struct sv_rank){ .rank = 1, .pid = rank_process(lib), .running = 1 };
    now_ms = 350;
    k->n = 0;
    is_int(sv.extra(sv.extra_ctx, 0), -1, "a rank maps a libmpi: no more looks");
    ok(g.tripped && sv.signal_received == SIGTERM, "  tripped, as told SIGTERM");
    ok(k->n == 1 && strstr(k->last, "rank 1 (pid ") &&
       strstr(k->last, " loaded libmpich.so.12 but dlrun serves no PMI for it: "
              "each rank would be an MPI job of its own; run with "
              "--mpi=pmi1 (--mpi=none to allow it)"), "  said, naming it");
    waitpid(r[0].pid, &st0, 0);
    waitpid(r[1].pid, &st1, 0);
    ok(WIFSIGNALED(st0) && WTERMSIG(st0) == SIGTERM && WIFSIGNALED(st1) &&
       WTERMSIG(st1) == SIGTERM, "  every rank got SIGTERM");
    job_done(&j);
}

int main(void)
{
    char dir[] = "/tmp/t_jobmpi.XXXXXX", lib[64];
    struct said k = { 0 };
    FILE *f;

    clock_fake(fake_now, NULL);
    say_set_sink(said_keep, &k);
    resolve(&k);
    if (mkdtemp(dir)) {
        snprintf(lib, sizeof lib, "%s/libmpich.so.12", dir);
        if ((f = fopen(lib, "w"))) {
            fputs("not really a library\n", f);
            fclose(f);
        }
        guard(&k, lib);
        unlink(lib);
        rmdir(dir);
    }
    clock_fake(NULL, NULL);
    return tap_done();
}
