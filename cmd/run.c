/* run.c - `dlrun [run]`: the launcher.
 *
 * Per-task mode: when srun or mpirun already started one task per rank
 * and no option asks for another layout, compute this rank's environment
 * and exec the program in place (same pid: the scheduler's signals and
 * exit codes stay).  Otherwise dlrun starts the ranks itself.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "options.h"
#include "job/horovod.h"
#include "job/job.h"
#include "where/pmixc.h"
#include "job/preflight_run.h"

static const char usage_head[] =
    "usage: dlrun [run] [OPTIONS] [--] PROG [ARGS...]\n"
    "Run PROG as every rank of a distributed job.  Under srun/mpirun (one\n"
    "task per rank) dlrun becomes the rank in place.\n\n";

static int run_per_task(struct job *j, char **prog)
{
    struct envset s = { .no_from = 1 };
    int self = j->plan.self;
    int rc = job_rank_env(j, self, &s);

    if (j->opt.report_bindings)
        job_report_bindings(j, &self, 1);
    /* no dlrun stays to watch: say so once, not per task */
    if (j->opt.stall_timeout_ms && self == 0)
        fprintf(stderr, "dlrun: warning: --stall-timeout is not watched when "
                "the scheduler starts every rank (srun/mpirun dlrun PROG): "
                "run one dlrun per allocation or per node instead\n");
    if (rc == 0 && j->bind && CPU_COUNT(&j->bind[self].mask) &&
        sched_setaffinity(0, sizeof j->bind[self].mask, &j->bind[self].mask) < 0) {
        /* --topology planned another machine's CPUs: not bound, as the
         * ranks dlrun starts itself (lib/run/proc.c) */
        if (j->opt.topology && errno == EINVAL)
            fprintf(stderr, "dlrun: rank %d: CPUs %s are not this machine's "
                    "(--topology): not bound\n", self, j->bind[self].cpus);
        else
            rc = cmd_fail(EXIT_FAIL, "rank %d: cannot bind to CPUs %s: %s",
                          self, j->bind[self].cpus, strerror(errno));
    }
    if (rc == 0) {
        pmixc_finalize();   /* before exec: the program may open its own */
        rc = job_exec(prog, &s, j->plan.self);
    }
    envset_free(&s);
    return rc;
}

/* path made absolute against cwd (kept in o); 0 / -1 when out of memory. */
static int absolute(struct options *o, const char **path, const char *cwd)
{
    char *s = NULL;

    if (!*path || **path == '/')
        return 0;
    if (asprintf(&s, "%s/%s", cwd, *path) < 0 || !options_keep(o, s))
        return -1;
    *path = s;
    return 0;
}

/* --wdir on this node: the ranks started here run there (the agents of
 * other nodes enter it themselves).  Paths dlrun itself opens later
 * (--output-dir, --summary) stay relative to where it was started. */
static int enter_wdir(struct job *j)
{
    char cwd[4096];

    if (!j->opt.wdir)
        return 0;
    if (!getcwd(cwd, sizeof cwd))
        return cmd_fail(EXIT_FAIL, "cannot read the current folder: %s",
                        strerror(errno));
    if (absolute(&j->opt, &j->opt.output_dir, cwd) < 0 ||
        absolute(&j->opt, &j->opt.summary, cwd) < 0)
        return cmd_fail(EXIT_FAIL, "out of memory");
    if (chdir(j->opt.wdir) < 0)
        return cmd_fail(EXIT_USAGE, "--wdir %s: cannot enter it: %s",
                        j->opt.wdir, strerror(errno));
    return 0;
}

/* The ranks on this host, each with a TORCHELASTIC_ERROR_FILE that is read
 * when the job fails. */
static int run_launch_here(struct job *j, char **prog)
{
    int rc;

    job_errdir(j);
    rc = run_launch(j, prog);
    if (rc != 0)
        job_report_root_cause(j);
    return rc;
}

int cmd_run(int argc, char **argv)
{
    char usage[4096];
    struct job j = { 0 };
    char **prog;
    int rc;

    snprintf(usage, sizeof usage, "%s%s", usage_head, options_help);
    rc = options_parse(argc, argv, &j.opt, usage);
    if (rc != 0)
        return rc == 1 ? EXIT_OK : rc;
    if (j.opt.prog >= argc) {
        rc = cmd_fail(EXIT_USAGE, "no program to run (usage: dlrun [OPTIONS] "
                      "PROG [ARGS...]; dlrun --help)");
        goto out;
    }
    prog = j.opt.progv;
    j.by_hand_ok = 1;
    rc = job_prepare(&j, 1);
    if (rc == 0)
        rc = job_check_hosts(&j);
    if (rc == 0 && j.by_hand) {     /* one dlrun per node by hand */
        if ((rc = enter_wdir(&j)) == 0 &&
            (rc = dialect_check_program(prog)) == 0)
            rc = run_nodes(&j, prog);
        goto out;
    }
    /* the head's agents enter --wdir on their nodes */
    if (rc == 0 && (j.plan.per_task || !head_wanted(&j))) {
        rc = enter_wdir(&j);
        if (rc == 0)
            rc = dialect_check_program(j.opt.mpmd_first ? j.opt.mpmd_first
                                                         : prog);
    }
    if (rc == 0)
        rc = horovod_check(&j);
    if (rc == 0)
        rc = job_mpi_resolve(&j, j.opt.mpmd_first ? j.opt.mpmd_first : prog);
    if (rc == 0 && j.opt.preflight)
        rc = run_preflight(&j, prog);
    if (rc != 0)
        goto out;
    if (j.opt.mpi == MPI_SRUN)
        rc = job_mpi_srun(&j, prog, 0);
    else if (j.plan.per_task)
        rc = run_per_task(&j, prog);
    else if (head_wanted(&j))
        rc = run_head(&j, prog);
    else
        rc = run_launch_here(&j, prog);
out:
    job_free(&j);
    return rc;
}
