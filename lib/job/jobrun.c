/* jobrun.c - run a prepared job the way its plan says (job.h): srun
 * starts the ranks (--mpi=srun), this process becomes its rank (per-task
 * mode), a head starts an agent on every other host, or this host's ranks
 * start here; and --wdir for the ranks started here. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "job/job.h"
#include "util/say.h"
#include "where/pmixc.h"

/* Bind this process to its rank's CPUs, when planned.  0, or the exit
 * code after saying why. */
static int bind_self(const struct job *j, int self)
{
    const struct bind_rank *b = j->bind ? &j->bind[self] : NULL;

    if (!b || !CPU_COUNT(&b->mask) ||
        sched_setaffinity(0, sizeof b->mask, &b->mask) == 0)
        return 0;
    /* --topology planned another machine's CPUs: not bound, as the ranks
     * dlrun starts itself (lib/run/proc.c) */
    if (j->opt.topology && errno == EINVAL) {
        say("rank %d: CPUs %s are not this machine's (--topology): not "
            "bound", self, b->cpus);
        return 0;
    }
    return say_fail(EXIT_FAIL, "rank %d: cannot bind to CPUs %s: %s", self,
                    b->cpus, strerror(errno));
}

int job_run_per_task(struct job *j, char **prog)
{
    struct envset s = { .no_from = 1 };
    int self = j->plan.self;
    int rc = job_rank_env(j, self, &s);

    if (j->opt.report_bindings)
        job_report_bindings(j, &self, 1);
    /* no dlrun stays to watch: say so once, not per task */
    if (j->opt.stall_timeout_ms && self == 0)
        say("warning: --stall-timeout is not watched when the scheduler "
            "starts every rank (srun/mpirun dlrun PROG): run one dlrun per "
            "allocation or per node instead");
    if (j->opt.timestamp_output && self == 0)
        say("warning: --timestamp-output is not applied when the scheduler "
            "starts every rank (srun/mpirun dlrun PROG): the scheduler "
            "forwards the output (mpirun --timestamp-output), or run one "
            "dlrun per allocation or per node");
    if (rc == 0)
        rc = bind_self(j, self);
    if (rc == 0) {
        pmixc_finalize();   /* before exec: the program may open its own */
        rc = job_exec(prog, &s, self);
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

int job_enter_wdir(struct job *j)
{
    char cwd[4096];

    if (!j->opt.wdir)
        return 0;
    if (!getcwd(cwd, sizeof cwd))
        return say_fail(EXIT_FAIL, "cannot read the current folder: %s",
                        strerror(errno));
    if (absolute(&j->opt, &j->opt.output_dir, cwd) < 0 ||
        absolute(&j->opt, &j->opt.summary, cwd) < 0)
        return say_fail(EXIT_FAIL, "out of memory");
    if (chdir(j->opt.wdir) < 0)
        return say_fail(EXIT_USAGE, "--wdir %s: cannot enter it: %s",
                        j->opt.wdir, strerror(errno));
    return 0;
}

/* The ranks on this host, each with a TORCHELASTIC_ERROR_FILE that is read
 * when the job fails. */
static int launch_here(struct job *j, char **prog)
{
    int rc;

    /* before the job's folder and its guard: nothing starts for a job
     * this host cannot hold */
    if ((rc = job_check_room(j)) != 0)
        return rc;
    j->room_checked = 1;
    job_errdir(j);
    rc = run_launch(j, prog);
    if (rc != 0)
        job_report_root_cause(j);
    return rc;
}

int job_run(struct job *j, char **prog)
{
    if (j->opt.mpi == MPI_SRUN)
        return job_mpi_srun(j, prog, 0);
    if (j->plan.per_task)
        return job_run_per_task(j, prog);
    if (head_wanted(j))
        return run_head(j, prog);
    return launch_here(j, prog);
}
