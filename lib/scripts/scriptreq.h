/* scriptreq.h - what `dlrun script` and `dlrun submit` were asked for,
 * and the job script it makes.
 *
 * Precedence, lowest first: the template's defaults, the profile (merged
 * from /etc/dlrun/sites.yaml, ~/.config/dlrun/sites.yaml, $DLRUN_CONFIG,
 * --config: lib/scripts/profiles.h), the command line.  cmd/ parses the
 * options and hands each value to a setter here, which checks it as
 * sites.yaml's key of the same meaning (lib/scripts/jobspec.h).  Every
 * refusal is said (lib/util/say.h) as one line. */
#ifndef DLRUN_SCRIPTREQ_H
#define DLRUN_SCRIPTREQ_H

#include "scripts/scriptcheck.h"
#include "scripts/sites.h"
#include "util/strv.h"

/* The command line, zeroed before the first setter; scriptreq_free. */
struct script_req {
    const char *v[SITE_KEY_COUNT];  /* values by profile key, checked
                                       (borrowed from argv); v[SITE_REQUEUE]
                                       "1" or "0" when given */
    struct strv dlrun_args;         /* words for the script's dlrun (owned) */
    /* script lines given on the command line, added to the profile's */
    struct strv directives, drops, modules, env;
    const char *setup;              /* --setup CODE, or NULL (borrowed) */
    const char *node;               /* --node SHAPE, or NULL (borrowed):
                                       the profile was picked with it */
    char *const *command;           /* PROG ARGS (borrowed from argv) */
    int spares;                     /* --spares N: the script's dlrun holds
                                       N nodes in reserve (and the job is
                                       kept when a node fails) */
};

/* The value s of option opt (named in the error) for profile key key,
 * checked as sites.yaml's.  0, or -1 after one line (exit 2). */
int scriptreq_set(struct script_req *r, enum site_key key, const char *opt,
                  const char *s);

/* --map-by, --bind-to or --gpu-bind (opt) s, checked by dlrun's own
 * parser now rather than when the job starts, for the script's dlrun.
 * 0, or -1 after one line (exit 2). */
int scriptreq_bind(struct script_req *r, const char *opt, const char *s);

/* One word s for the script's dlrun (--dlrun-arg); opt names it in
 * errors.  0, or -1 after one line (exit 2). */
int scriptreq_word(struct script_req *r, const char *opt, const char *s);

/* Option opt and its value s (NULL: none) for the script's dlrun (-x,
 * --iface, --tag-output).  0, or -1 after one line (exit 2). */
int scriptreq_arg(struct script_req *r, const char *opt, const char *s);

/* --spares s: "--spares N" on the script's dlrun line, and the
 * scheduler's directive that keeps the job when a node fails (Slurm's
 * --no-kill).  0, or -1 after one line (exit 2). */
int scriptreq_spares(struct script_req *r, const char *s);

/* A line s of option opt for the script, into v (r's directives, drops
 * or modules): one line of visible text.  0, or -1 after one line. */
int scriptreq_line(struct strv *v, const char *opt, const char *s);

/* --env NAME=VALUE, checked as sites.yaml's env.  0, or -1 after one
 * line (exit 2). */
int scriptreq_env(struct script_req *r, const char *s);

/* -o FILE names the script file: a name with the scheduler's %x or %j is
 * the job's output asked for of the wrong program.  0, or -1 after one
 * line (exit 2). */
int scriptreq_check_output(const char *s);

/* Whether an allocation of r's lists failed (exit 1, out of memory). */
int scriptreq_failed(const struct script_req *r);

void scriptreq_free(struct script_req *r);  /* r's lists; r may be NULL */

/* Profile p (NULL: none) and r into the job script: *text (caller frees)
 * and *sched (its row), its dlrun line checked through parse (ctx its
 * own: lib/scripts/scriptcheck.h) before anyone waits in a queue.
 * EXIT_OK, or the exit code after one line (*text NULL). */
int scriptreq_render(const struct script_req *r, const struct site_profile *p,
                     scriptcheck_parse_fn parse, void *ctx, char **text,
                     const struct sched **sched);

#endif
