/* scriptcheck.h - the dlrun line of a job script checked before the job
 * waits in a queue: its words through dlrun run's own option parser
 * (which cmd/ owns and hands in as a callback), then the ranks of one
 * node placed on the profile's node (sites.yaml's node: or topology:) by
 * the binding planner the job will use (lib/place/bind.h).  What would
 * stop the job at its start stops the script's generation instead, with
 * the same line.  Every failure is said (lib/util/say.h) as one line and
 * its exit code returned. */
#ifndef DLRUN_SCRIPTCHECK_H
#define DLRUN_SCRIPTCHECK_H

#include <stddef.h>

#include "place/bind.h"
#include "scripts/jobscript.h"
#include "scripts/sites.h"

struct strv;
struct topo;

/* What dlrun run's parser made of a dlrun line: what is placed. */
struct dlrun_line {
    struct bind_opts bind;  /* --map-by, --bind-to, --gpu-bind */
    int bind_given;         /* any of them was given */
    int per_node;           /* --nproc-per-node, 0: not given */
    int ranks;              /* -np, 0: not given */
    int nodes;              /* -N, 0: not given */
};

/* dlrun run's parser, given by cmd/: words ("run", then the words after
 * dlrun's name; borrowed) parsed, every message after context (borrowed:
 * "" for the script being made, "FILE:LINE: " for a file checked), out
 * filled.  EXIT_OK, or the exit code after saying why. */
typedef int (*scriptcheck_parse_fn)(void *ctx, const struct strv *words,
                                    const char *context,
                                    struct dlrun_line *out);

/* The node of profile p (named name) as a topology: its topology: file,
 * or the XML its node: line makes; desc (len bytes) says which, for
 * messages.  NULL when p describes no node (desc "") or, after saying
 * the error, when it cannot be loaded (desc set).  Caller frees with
 * topo_free. */
struct topo *scriptcheck_profile_topo(const struct site_profile *p,
                                      const char *name, char *desc,
                                      size_t len);

/* Place nlocal ranks with binding b on t, the node of profile name
 * (desc: its description), the first gpus of its GPUs granted.  knob: the
 * option the user sets a node's ranks with, named in the fix of a
 * --map-by ppr:N that asks for another count ("--gpus-per-node"), or NULL
 * (dlrun run's own message).  0 with out (nlocal entries, the caller's)
 * filled, or EXIT_USAGE after one line. */
int scriptcheck_place(const struct topo *t, const char *desc,
                      const char *name, const struct bind_opts *b, long gpus,
                      int nlocal, const char *knob, struct bind_rank *out);

/* Check the dlrun line j makes: its words through parse (ctx its own),
 * then one node's ranks placed on profile p's node (name: p's name; p
 * NULL or without a node: the words only).  EXIT_OK, or the exit code
 * after one line. */
int scriptcheck_job(const struct jobspec *j, const struct site_profile *p,
                    const char *name, scriptcheck_parse_fn parse, void *ctx);

/* `dlrun script --check FILE`: each line of FILE that runs dlrun through
 * parse, placed on the node of profile (NULL: the one FILE's "# Profile:
 * NAME [-p PARTITION]" line names, if any, with that partition) from s.
 * EXIT_OK with *n the lines checked, *p the profile they were checked
 * against (NULL: none; borrowed from s) and *with_node whether on its
 * node, or EXIT_USAGE after saying the first error. */
int scriptcheck_file(const char *path, const struct sites *s,
                     const char *profile, scriptcheck_parse_fn parse,
                     void *ctx, int *n, const struct site_profile **p,
                     int *with_node);

#endif
