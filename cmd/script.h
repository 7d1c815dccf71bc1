/* script.h - what `dlrun script`, `dlrun submit` and `dlrun plan
 * --profile` share in cmd/: the parsed command line's script, and dlrun
 * run's parser as lib/scripts/scriptcheck.h takes it. */
#ifndef DLRUN_SCRIPT_H
#define DLRUN_SCRIPT_H

#include "scripts/scriptcheck.h"
#include "scripts/sites.h"

struct script_result {
    char *text;             /* the job script (owned) */
    const struct sched *sched;  /* static: the scheduler's row */
    const char *output;     /* -o FILE, or NULL (borrowed from argv) */
    int dry_run;            /* submit --dry-run */
    int done;               /* help or --list-profiles printed: exit 0 */
};

/* Parse argv (argv[0] is "script" or "submit") and render the script.
 * Returns EXIT_OK with r filled (r->done: nothing more to do), or an
 * exit code after printing the one-line error (cmd/script.c). */
int script_build(int argc, char **argv, int submit, struct script_result *r);

struct options;

/* What lib/scripts/ places of dlrun run's options o: into l. */
void script_line_of(const struct options *o, struct dlrun_line *l);

/* dlrun run's parser on a script's dlrun line: a scriptcheck_parse_fn
 * (ctx unused; cmd/script_check.c). */
int script_parse_line(void *ctx, const struct strv *words,
                      const char *context, struct dlrun_line *out);

/* `dlrun script --check FILE` against profile (NULL: the one FILE's
 * "# Profile:" line names) from s: prints one line, what was checked
 * (stdout, EXIT_OK), or the first error (EXIT_USAGE). */
int script_check_file(const char *path, const struct sites *s,
                      const char *profile);

/* `dlrun plan --profile NAME ...` (argv[0] "plan"; cmd_plan hands over
 * when --profile is among its options).  An exit code
 * (cmd/script_plan.c). */
int script_plan(int argc, char **argv);

#endif
