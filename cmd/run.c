/* run.c - `dlrun [run]`: the launcher.  Parse the options, prepare the
 * job, check it, and run it (lib/job/job.h: job_run): per-task mode when
 * srun or mpirun already started one task per rank and no option asks
 * for another layout (this process becomes its rank: same pid, so the
 * scheduler's signals and exit codes stay); otherwise dlrun starts the
 * ranks itself.
 */
#include <stdio.h>

#include "cmd.h"
#include "options.h"
#include "job/horovod.h"
#include "job/job.h"
#include "job/preflight_run.h"
#include "job/runopts.h"

static const char usage_head[] =
    "usage: dlrun [run] [OPTIONS] [--] PROG [ARGS...]\n"
    "Run PROG as every rank of a distributed job.  Under srun/mpirun (one\n"
    "task per rank) dlrun becomes the rank in place.\n\n";

int cmd_run(int argc, char **argv)
{
    char usage[4096];
    struct job j = { 0 };
    char **prog;
    int rc;

    snprintf(usage, sizeof usage, "%s%s", usage_head, options_help());
    rc = options_parse(argc, argv, &j.opt, usage);
    if (rc != 0)
        return rc == 1 ? EXIT_OK : rc;
    runopts_warn_exports(&j.opt);
    if (j.opt.prog >= argc) {
        rc = cmd_fail(EXIT_USAGE, "no program to run (usage: dlrun [OPTIONS] "
                      "PROG [ARGS...]; dlrun --help)");
        goto out;
    }
    prog = j.opt.progv;
    j.by_hand_ok = 1;
    rc = job_prepare(&j, 1);
    if (rc == 0)
        job_tf_resolve(&j, j.opt.mpmd_first ? j.opt.mpmd_first : prog);
    if (rc == 0)
        rc = job_check_hosts(&j);
    if (rc == 0 && j.by_hand) {     /* one dlrun per node by hand */
        if ((rc = job_enter_wdir(&j)) == 0 &&
            (rc = dialect_check_program(prog)) == 0)
            rc = run_nodes(&j, prog);
        goto out;
    }
    /* the head's agents enter --wdir on their nodes */
    if (rc == 0 && (j.plan.per_task || !head_wanted(&j))) {
        rc = job_enter_wdir(&j);
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
    rc = job_run(&j, prog);
out:
    job_free(&j);
    return rc;
}
