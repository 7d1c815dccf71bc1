/* submit.c - `dlrun submit`: the script of `dlrun script`, handed to
 * sbatch, qsub, bsub or pjsub (lib/scripts/submit.h); the job id on
 * stdout. */
#include <stdio.h>
#include <stdlib.h>

#include "cmd.h"
#include "script.h"
#include "scripts/submit.h"

static int dry_run(const struct script_result *r)
{
    const char *file = r->output ? r->output : "SCRIPT", *argv[SUBMIT_ARGV];
    int rc = r->output ? submit_write(r->output, r->text) : EXIT_OK;
    int in = submit_reads_stdin(r->sched);

    if (rc != EXIT_OK)
        return rc;
    submit_argv(r->sched, file, argv);
    fputs(r->text, stdout);
    fflush(stdout);
    fprintf(stderr, "dlrun: dry run, nothing submitted; would run:");
    for (int i = 0; argv[i]; i++)
        fprintf(stderr, " %s", argv[i]);
    /* bsub has no file argument: it reads the script on stdin */
    fprintf(stderr, "%s%s\n", in ? " < " : "", in ? file : "");
    return EXIT_OK;
}

static int submit(const struct script_result *r)
{
    char *id = NULL;
    int rc = submit_job(r->sched, r->text, r->output, &id);

    if (rc == EXIT_OK)
        rc = printf("%s\n", id) < 0 ? EXIT_FAIL : EXIT_OK;
    free(id);
    return rc;
}

int cmd_submit(int argc, char **argv)
{
    struct script_result r;
    int rc = script_build(argc, argv, 1, &r);

    if (rc != EXIT_OK || r.done)
        return rc;
    rc = r.dry_run ? dry_run(&r) : submit(&r);
    free(r.text);
    return rc;
}
