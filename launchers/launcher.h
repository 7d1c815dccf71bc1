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

/* Starting one `dlrun agent` per node: by the head, and by agents that
 * start their part of a tree.  The processes started are supervised like
 * ranks; sv_rank.rank is then -1 - the agent's plan node (INT_MIN for
 * srun, one process for every node). */
struct agent_job {
    const struct plan *plan;
    const int *nodes;           /* borrowed: plan nodes to cover, nnodes */
    int nnodes;
    char **agent_args;          /* borrowed: "PATH agent --hosts=... OPTS",
                                   without --node/--spawn and without -- */
    char **prog;                /* borrowed: the program, after "--" */
    const sigset_t *child_mask; /* the mask children start with */
    char **envp;                /* borrowed: the children's environment,
                                   with DLRUN_BROKER and DLRUN_TOKEN */
    int lifeline;               /* read end of the spawner's lifeline pipe:
                                   the children's stdin (EOF = spawner gone) */
    /* ssh only */
    int fanout;                 /* processes started here at most */
    char **relay_opts;          /* borrowed: "--ssh-port=22"... for relays */
    const char *remote_dlrun;   /* NULL: the path in agent_args */
};

struct agent_launcher {
    const char *name;
    /* Start the agents of job->nodes; fill procs (room for job->nnodes)
     * and *nprocs.  On failure the processes already started are killed
     * and reaped.  0 / -1 with err (*exec_errno set for exec failures). */
    int (*start)(const struct agent_job *job, struct sv_rank *procs,
                 int *nprocs, int *exec_errno, struct err *err);
};

extern const struct agent_launcher agents_srun, agents_ssh;

/* The agent launcher named (srun, ssh), or for NULL the one for the
 * allocation source: srun inside a Slurm job, else ssh.  NULL with err
 * ("local" cannot start agents). */
const struct agent_launcher *agent_launcher_select(const char *name,
                                                   const char *alloc_source,
                                                   struct err *err);

/* A start that failed half way: SIGKILL the process groups of the n
 * processes already started and reap them (launchers' shared clean-up). */
void launcher_kill_started(struct sv_rank *procs, int n);

/* The plan node of an agent's process (sv_rank.rank < 0), and back. */
int agent_proc_node(int rank);

/* The usable launcher with the highest priority (or the one named, when
 * name is not NULL).  NULL with err when none can run the plan. */
const struct launcher *launcher_select(const struct launch_job *job,
                                       const char *name, struct err *err);

#endif
