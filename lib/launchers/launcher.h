/* launcher.h - how processes reach their nodes: one contract, four
 * backends.  `local` starts this host's ranks itself; `srun`, `flux` and
 * `ssh` start one `dlrun agent` per node, and each agent starts its node's ranks
 * with `local` (as PRRTE's plm components start daemons that fork the
 * ranks).  A backend is a static table of function pointers: detect()
 * says how well it fits the allocation (0 = cannot), the highest wins, and
 * --launcher NAME overrides.  What a backend started it can signal() and
 * destroy(), whoever supervises the processes meanwhile. */
#ifndef DLRUN_LAUNCHER_H
#define DLRUN_LAUNCHER_H

#include <signal.h>

#include "place/bind.h"
#include "util/err.h"
#include "run/output.h"
#include "place/plan.h"
#include "where/alloc.h"
#include "run/supervise.h"

/* This host's ranks: the program, and each rank's complete environment. */
struct pmi_serve;

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
    const struct pmi_serve *pmi;    /* borrowed: the simple PMI server whose
                                       socket each rank inherits, or NULL */
};

/* One `dlrun agent` per node: by the head, and by agents that start their
 * part of a tree.  The processes started are supervised like ranks;
 * sv_rank.rank is then -1 - the agent's plan node (INT_MIN for srun, one
 * process for every node). */
struct agent_job {
    const struct plan *plan;
    const int *nodes;           /* borrowed: plan nodes to cover, nnodes */
    int nnodes;
    char **agent_args;          /* borrowed: "PATH agent" (the rest comes
                                   from the plan wire, dlrun.plan),
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

/* What start() is asked for: ranks for a backend without LAUNCHER_AGENTS,
 * agents for one with it (the other pointer NULL). */
struct launch_req {
    const struct launch_job *ranks;
    const struct agent_job *agents;
};

/* The processes one start made, handed back to signal() and destroy().
 * The caller supervises them meanwhile (lib/run/supervise reaps them and
 * clears .running); destroy() ends and reaps only what still runs. */
struct launched {
    struct sv_rank *procs;      /* borrowed: room for what start() makes
                                   (nranks, or nnodes entries) */
    int n;                      /* started so far */
    int exec_errno;             /* after a failed start: exec's errno, or 0 */
    void *state;                /* the backend's own; destroy() frees it */
};

enum {
    /* It starts one agent per node (agent_job), not ranks (launch_job). */
    LAUNCHER_AGENTS = 1 << 0,
    /* signal() delivers any signal to everything it started.  Without it
     * (ssh: OpenSSH does not deliver signals to root's commands) only the
     * stop signals (TERM, INT, HUP, KILL) get through, and the head passes
     * the others through the broker. */
    LAUNCHER_SIGNALS = 1 << 1,
    /* It starts a tree: an agent it starts with --spawn starts the agents
     * below it with the same backend (ssh's fan-out). */
    LAUNCHER_TREE = 1 << 2,
};

struct launcher {
    const char *name;           /* for --launcher */
    unsigned caps;              /* LAUNCHER_* */
    const char *needs;          /* when detect() says 0: why, for humans */
    /* Priority for this plan in this allocation (NULL: none known), 0 =
     * cannot run it. */
    int (*detect)(const struct plan *p, const struct alloc *a);
    /* Start what req asks, into run->procs (run->n counts them).  On
     * failure what was started is destroyed (ended and reaped).  0 / -1
     * with err (run->exec_errno set for exec failures). */
    int (*start)(const struct launch_req *req, struct launched *run,
                 struct err *err);
    /* Deliver sig to every running process started (its process group;
     * srun forwards it to its step's tasks, an ssh relay closes its
     * agent's stdin).  Returns how many got it, -1 when this backend
     * cannot deliver sig (see LAUNCHER_SIGNALS). */
    int (*signal)(struct launched *run, int sig);
    /* End what still runs (a stop signal first where the backend's
     * processes clean up after themselves: srun ends its step, a relay its
     * agent; SIGKILL after a grace period) and reap it; free the state.
     * Idempotent. */
    void (*destroy)(struct launched *run);
};

extern const struct launcher launcher_local, launcher_srun, launcher_ssh,
    launcher_flux;

/* The backend called name (Hydra's "slurm" and "fork" too), or NULL. */
const struct launcher *launcher_find(const char *name);

/* The first backend that has all of caps, or NULL. */
const struct launcher *launcher_with(unsigned caps);

/* "local, srun, ssh or flux": the valid --launcher names, for messages. */
const char *launcher_names(void);

/* The backend with the caps `need` (0: one that starts ranks,
 * LAUNCHER_AGENTS: one that starts agents): the one named (--launcher;
 * NULL: any) or the highest detect().  NULL with err (one line: an unknown
 * name with the valid ones, a named backend that cannot run the plan and
 * why, or none that can). */
const struct launcher *launcher_select(const struct plan *p,
                                       const struct alloc *a,
                                       unsigned need, const char *name,
                                       struct err *err);

/* lib/run/supervise's forward hook (ctx: a struct launcher_fwd): the signals
 * dlrun receives go to what each start made, through its signal(). */
struct launcher_fwd {
    const struct launcher *l[2];
    struct launched *run[2];    /* borrowed; NULL: unused */
};
void launcher_forward(void *ctx, int sig);

/* The plan node of an agent's process (sv_rank.rank < 0). */
int agent_proc_node(int rank);

/* For backends: end run's running processes, first_sig to each process
 * group, then after grace_ms (0: at once) SIGKILL, and reap them.  Their
 * status and end time are kept. */
void launcher_end(struct launched *run, int first_sig, int grace_ms);

/* For backends: killpg(sig) to each running process; how many got it. */
int launcher_signal_groups(struct launched *run, int sig);

/* For backends whose one process starts every agent (srun, flux run):
 * spawn argv (borrowed) with job's environment and signal mask as run's
 * only process.  0 / -1 with err. */
int launcher_start_step(const struct agent_job *job, char **argv,
                        struct launched *run, struct err *err);

/* For such backends: sig to that process's group, a SIGINT as SIGTERM
 * (srun's first SIGINT only prints the step's status; flux run's
 * likewise does not end the job). */
int launcher_signal_step(struct launched *run, int sig);

/* For such backends: SIGTERM through it ends the agents; one still there
 * after 5 s is killed (its agents then end when the head's heartbeats
 * stop). */
void launcher_end_step(struct launched *run);

/* detect() of a launcher that a scheduler's row names: 20 in that
 * scheduler's job (not inside one of its tasks), 1 elsewhere. */
int launcher_sched_default(const struct alloc *a, const char *name);

#endif
