/* script.h - what `dlrun script` and `dlrun submit` share: the options,
 * the site profile and the rendered job script. */
#ifndef DLRUN_SCRIPT_H
#define DLRUN_SCRIPT_H

#include "scripts/sites.h"

struct script_result {
    char *text;             /* the job script (owned) */
    int sched;              /* enum sched */
    const char *output;     /* -o FILE, or NULL (borrowed from argv) */
    int dry_run;            /* submit --dry-run */
    int done;               /* help or --list-profiles printed: exit 0 */
};

/* Parse argv (argv[0] is "script" or "submit") and render the script.
 * Returns EXIT_OK with r filled (r->done: nothing more to do), or an
 * exit code after printing the one-line error. */
int script_build(int argc, char **argv, int submit, struct script_result *r);

/* Write text to path (not through a symbolic link) with the mode the
 * umask gives plus u+x.  EXIT_OK or EXIT_FAIL (printed). */
int script_write(const char *path, const char *text);

/* The same into fd, open for writing (closed here; path names it in
 * errors, borrowed). */
int script_write_fd(int fd, const char *path, const char *text);

struct bind_rank;
struct jobspec;
struct options;
struct topo;

/* The node of profile p (named name) as a topology: its topology: file,
 * or the XML its node: line makes; desc (len bytes) says which, for
 * messages.  NULL when p describes no node (desc "") or, after printing
 * the error, when it cannot be loaded (desc set).  Caller frees with
 * topo_free. */
struct topo *script_profile_topo(const struct site_profile *p,
                                 const char *name, char *desc, size_t len);

/* Place nlocal ranks with o's binding options on t, the node of profile
 * name (desc: its description), the first gpus of its GPUs granted.
 * knob: the option the user sets a node's ranks with, named in the fix of
 * a --map-by ppr:N that asks for another count ("--gpus-per-node"), or
 * NULL (dlrun run's own message).  0 with out (nlocal entries) filled, or
 * EXIT_USAGE after one line. */
int script_place(const struct topo *t, const char *desc, const char *name,
                 const struct options *o, long gpus, int nlocal,
                 const char *knob, struct bind_rank *out);

/* Check the dlrun line j makes: its words through dlrun run's parser,
 * then one node's ranks placed on profile p's node (name: p's name; p
 * NULL or without a node: the words only).  EXIT_OK, or EXIT_USAGE after
 * one line. */
int script_check_job(const struct jobspec *j, const struct site_profile *p,
                     const char *name);

/* `dlrun script --check FILE`: each line of FILE that runs dlrun through
 * dlrun run's parser, placed on the node of profile (NULL: the one FILE's
 * "# Profile:" line names, if any) from s.  Prints one line: what was
 * checked (stdout, EXIT_OK) or the first error (EXIT_USAGE). */
int script_check_file(const char *path, const struct sites *s,
                      const char *profile);

/* `dlrun plan --profile NAME ...` (argv[0] "plan"; cmd_plan hands over
 * when --profile is among its options).  An exit code. */
int script_plan(int argc, char **argv);

#endif
