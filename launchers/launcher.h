/* launcher.h - how rank processes reach their nodes.  A backend is a
 * static table of function pointers; the one whose usable() returns the
 * highest priority for the plan wins, --launcher overrides. */
#ifndef DLRUN_LAUNCHER_H
#define DLRUN_LAUNCHER_H

#include <signal.h>

#include "err.h"
#include "plan.h"
#include "supervise.h"

/* What to start: the program, and each rank's complete environment. */
struct launch_job {
    const struct plan *plan;
    char **argv;                /* borrowed, NULL-terminated */
    char ***rank_envp;          /* borrowed: environ-style array per rank */
    sigset_t child_mask;        /* the signal mask children start with */
};

struct launcher {
    const char *name;
    /* Priority for this plan, 0 = cannot run it. */
    int (*usable)(const struct plan *p);
    /* Start every rank; fill ranks (caller-provided, plan->nranks entries).
     * On failure the ranks already started are killed and reaped, and
     * *exec_errno tells an exec failure apart.  0 / -1 with err. */
    int (*start)(const struct launch_job *job, struct sv_rank *ranks,
                 int *exec_errno, struct err *err);
};

extern const struct launcher launcher_local;

/* The usable launcher with the highest priority (or the one named, when
 * name is not NULL).  NULL with err when none can run the plan. */
const struct launcher *launcher_select(const struct plan *p, const char *name,
                                       struct err *err);

#endif
