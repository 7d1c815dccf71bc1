/* launcher.h - how rank processes reach their nodes.  A backend is a
 * static table of function pointers; the one whose usable() returns the
 * highest priority for the plan wins, --launcher overrides. */
#ifndef DLRUN_LAUNCHER_H
#define DLRUN_LAUNCHER_H

#include <signal.h>

#include "bind.h"
#include "err.h"
#include "output.h"
#include "plan.h"
#include "supervise.h"

/* What to start: the program, and each rank's complete environment. */
struct launch_job {
    const struct plan *plan;
    const int *ranks;           /* borrowed: the ranks to start, nranks of them
                                   (all, or this node's in per-node mode) */
    int nranks;
    char **argv;                /* borrowed, NULL-terminated */
    char ***rank_envp;          /* borrowed: environ-style array per rank of
                                   the plan (NULL where not started here) */
    sigset_t child_mask;        /* the signal mask children start with */
    struct output *out;         /* borrowed: the ranks' stdout/stderr pipes
                                   (i-th started rank = i-th of out), or NULL */
    const struct bind_rank *bind;   /* borrowed: per plan rank, or NULL */
};

struct launcher {
    const char *name;
    /* Priority for this plan, 0 = cannot run it. */
    int (*usable)(const struct launch_job *job);
    /* Start job->ranks; fill ranks (caller-provided, job->nranks entries).
     * On failure the ranks already started are killed and reaped, and
     * *exec_errno tells an exec failure apart.  0 / -1 with err. */
    int (*start)(const struct launch_job *job, struct sv_rank *ranks,
                 int *exec_errno, struct err *err);
};

extern const struct launcher launcher_local;

/* The usable launcher with the highest priority (or the one named, when
 * name is not NULL).  NULL with err when none can run the plan. */
const struct launcher *launcher_select(const struct launch_job *job,
                                       const char *name, struct err *err);

#endif
