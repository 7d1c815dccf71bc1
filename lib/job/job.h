/* job.h - the steps run, env and plan share: find the allocation, make
 * the plan, agree on the rendezvous, and compute a rank's environment. */
#ifndef DLRUN_JOB_H
#define DLRUN_JOB_H

#include <signal.h>

#include "where/alloc.h"
#include "util/envset.h"
#include "job/jobopts.h"
#include "place/plan.h"
#include "place/rdv.h"
#include "util/strv.h"
#include "run/supervise.h"
#include "job/stall_watch.h"

struct pmix_host;
struct pmi_serve;
struct nodeset;
struct launcher;
struct pf_show;

struct job {
    struct options opt;
    struct alloc alloc;
    struct plan plan;
    struct rdv rdv;
    int restart;            /* attempts so far (--max-restarts) */
    struct nodeset *nodeset;    /* owned: --spares' nodes (the allocation's
                                   reordered, lib/place/nodeset.h), or NULL */
    struct status_watch *status;    /* owned while ranks run: what
                                       `dlrun status` reads, or NULL */
    int preflight;          /* the head runs the preflight (its agents only
                               report their nodes: job/preflight_run.h) */
    const struct pf_show *pf_show;  /* borrowed: how the caller shows the
                               preflight's table while it runs, or NULL */
    int pf_quiet;           /* the preflight says no verdict (the head's
                               probes between attempts: its lines) */
    struct bind_rank *bind; /* owned: per plan rank, or NULL (not bound);
                               entries of nodes not planned here are empty */
    int agent;              /* dlrun agent: start one node's ranks for a head */
    struct agent_job *subtree;  /* borrowed: agents this agent starts too
                                   (--spawn), or NULL */
    struct pmix_host *pmix; /* owned: the PMIx server hosted here, or NULL */
    int pmi_version;        /* the simple PMI wire served to the ranks: 1 or
                               2 (--mpi=pmi1|pmi2, auto for MPICH's ABI),
                               0: not served (job_mpi_resolve) */
    struct pmi_serve *pmi;  /* owned: its server here, or NULL */
    char head_broker[256];  /* an agent: the head's broker address, before
                               DLRUN_BROKER became this node's relay; every
                               agent names the PMIx namespace after it */
    struct strv xvalues;    /* owned: the -x values that came in the
                               environment (DLRUN_X_*), in opt.exports */
    char *errdir;           /* owned: the folder of the ranks'
                               TORCHELASTIC_ERROR_FILEs started here (removed
                               by job_free), or NULL */
    /* one dlrun per node by hand (lib/job/nodes.h) */
    int by_hand_ok;         /* run: job_prepare may find that mode */
    int by_hand;            /* found: job_prepare stopped after the
                               allocation; run_nodes plans each attempt */
    int one_attempt;        /* run_launch runs once, fills last, restarts
                               and failure lines are the caller's */
    int room_checked;       /* job_check_room passed before the job's first
                               process: run_launch need not again */
    const sigset_t *child_mask; /* borrowed: the ranks' signal mask when
                               the caller blocked signals before, or NULL */
    const struct launcher *launcher;    /* borrowed: the backend run_launch
                               starts this host's ranks with; NULL: the
                               one launcher_select picks.  The hook through
                               which a unit test drives the attempts with
                               a launcher of its own */
    struct {
        int rank, status, pid;  /* the rank that failed first, or -1 */
        int signal;             /* the signal dlrun was told to stop by */
    } last;
};

/* One dlrun per node started by hand (torchrun's static and rendezvous
 * modes): meet the other nodes, run this node's ranks, end every attempt
 * together (lib/job/nodes_run.c).  Returns the exit code. */
int run_nodes(struct job *j, char **prog);

/* --mpi (job/jobmpi.c): resolve auto for prog (never PMIx in per-task
 * mode, where the scheduler serves it); 0 or the exit code, printed. */
int job_mpi_resolve(struct job *j, char **prog);

/* The run-time guard of --mpi=auto (job/jobmpi.c): when dlrun hosts no PMIx
 * server for ranks it decided are not MPI programs, a rank that maps a
 * libmpi anyway (a module of its own, ctypes) would be an MPI job of its
 * own; the guard looks for one while the job starts (growing intervals,
 * ten minutes) and stops the ranks with one line naming --mpi=pmix. */
struct supervise;
struct mpi_guard {
    struct job *j;                      /* borrowed */
    struct supervise *sv;               /* borrowed */
    struct sv_hook inner;               /* the hook it wraps */
    long start_ms, next_ms;
    int interval_ms, done;
    int tripped;                        /* 1: it stopped the ranks */
    int at_failure;                     /* 1: it looked when a rank failed */
};

/* After dlrun was told to stop (INT, TERM, HUP, QUIT): say one line
 * naming what it did with the signal and the exit code rc; agents: sv
 * (borrowed) holds the agents of every node (the head).  Nothing for
 * other signals (lib/job/interrupt_report.c). */
void job_report_interrupt(const struct job *j, const struct supervise *sv,
                          int rc, int agents);

/* 1 when --mpi=auto resolved to hosting nothing for several ranks: the
 * head passes --mpi=auto to its agents, which then host nothing and
 * guard (an agent never resolves auto itself: the head decided). */
int job_mpi_guarded(void);

/* Put the guard g (zeroed by the caller, alive while sv runs) into sv's
 * periodic hook when this launch wants it. */
void job_mpi_guard(struct job *j, struct supervise *sv, struct mpi_guard *g);

/* mpirun bound this task for one rank; a dlrun that starts a node's ranks
 * or binds its rank itself takes every CPU the cgroup allows back first
 * (a note under --report-bindings).  Call before job_bind.  Cannot fail. */
void job_launcher_affinity(struct job *j);

/* --mpi=srun: exec srun --mpi=pmix with one task per rank, each a dlrun
 * in per-task mode.  Returns only on failure, with the exit code. */
int job_mpi_srun(struct job *j, char **argv, int prog);

/* Host PMIx for ranks (n of them) when --mpi resolved to pmix: start the
 * server / register an attempt's namespace / end it / stop the server.
 * 0 or the exit code after printing. */
int job_pmix_start(struct job *j, const int *ranks, int n);
int job_pmix_begin(struct job *j);
void job_pmix_end(struct job *j);
void job_pmix_stop(struct job *j);

/* The simple PMI wire for programs of MPICH's family (job/jobpmi.c), when
 * job_mpi_resolve set pmi_version: the server for the ranks (n of them:
 * every rank of the plan) / an attempt's sockets / the ranks started (their
 * ends closed here) / the attempt's end / the server's.  0 or the exit code
 * after printing. */
int job_pmi_start(struct job *j, const int *ranks, int n);
int job_pmi_begin(struct job *j);
void job_pmi_started(struct job *j);
void job_pmi_end(struct job *j);
void job_pmi_stop(struct job *j);

/* 1 when the plan puts ranks on more than one node, or on another host. */
int job_pmi_multinode(const struct job *j);

/* PMI_FD, PMI_RANK, PMI_SIZE... of rank into out; 0 or the exit code. */
int job_pmi_rank_env(const struct job *j, int rank, struct envset *out);

/* The ranks' PMI requests served from sv's loop, beside the hook already
 * there (a one-node broker's fd and the PMI sockets polled as one epoll
 * set).  h: zeroed by nobody, alive while sv runs; job_pmi_unwatch after. */
struct pmi_hook {
    struct sv_hook inner;
    struct pmi_serve *s;    /* borrowed */
    struct supervise *sv;   /* borrowed */
    int mux;                /* owned: the epoll set over both, or -1 */
    int failed;             /* its one line was said */
    int abort_code;         /* a rank called MPI_Abort: the job's exit
                               code (said in one line), else 0 */
    int abort_rank;         /* that rank */
};
int job_pmi_watch(struct job *j, struct supervise *sv, struct pmi_hook *h);
/* After sv ran: the epoll set closed; a rank killed for its MPI_Abort gets
 * the abort's code as its exit status. */
void job_pmi_unwatch(struct pmi_hook *h);

/* The head: the plan spans other hosts inside a Slurm allocation, so one
 * `dlrun agent` per node is started with srun (lib/job/head.c). */
int run_head(struct job *j, char **prog);

/* Is this a plan for run_head (ranks on other hosts, inside Slurm)? */
int head_wanted(const struct job *j);

/* One line on stderr: "rank R (host H, pid P) exited with code C" or
 * "... was killed by signal S (NAME)" from the wait status, then "; " and
 * what_stopped (job/launch.c). */
void job_report_failure(int rank, const char *host, int pid, int status,
                        const char *what_stopped);

/* dlrun agent: tell the head which rank failed (lib/job/agent.c). */
struct supervise;
void agent_report_failure(const struct job *j, const struct supervise *sv);

/* dlrun agent with --summary: put how this node's ranks ended into the
 * broker (dlrun.ranks.NODE) for the head's summary (lib/job/agent.c). */
void agent_report_ranks(const struct job *j, const struct supervise *sv);

/* --spares (DLRUN_AGENT_BYE in its environment): an agent that ends of
 * its own (its ranks ended, or it was told to stop) says so under
 * dlrun.bye.NODE, so that the head can tell the one that was killed when
 * a single srun step holds every agent.  Nothing without it. */
void agent_report_end(const struct job *j);

/* The head's --summary: every node's ranks as the agents reported them
 * through the broker at addr (token: hex); failed_rank is the rank that
 * failed first, or -1.  0, or -1 after printing. */
int head_summary(const struct job *j, const char *addr, const char *token,
                 int failed_rank, int signal_received, int rc);

/* mpirun's --map-by ppr:N:OBJ (socket, numa, core, hwthread) without -np
 * or ranks per node, on this host alone (no scheduler, no host list: its
 * slots are only dlrun's guess): N times this host's OBJs (or
 * --topology's), into j->opt.plan.per_node (job/bindings.c).  Where slots
 * were given mpirun starts them and checks the ppr, as dlrun does.
 * 0, or the exit code after saying why. */
int job_ppr_ranks(struct job *j);

/* Plan each rank's CPUs and GPU where dlrun binds (job/bindings.c).
 * 0, or the exit code after printing the error. */
int job_bind(struct job *j);

/* --report-bindings: one line per rank of ranks (n of them) on stderr. */
void job_report_bindings(const struct job *j, const int *ranks, int n);

/* Detect, plan and (collective: run/env, where every task takes part)
 * resolve the rendezvous.  Prints the error and returns its exit code
 * (2) on failure, 0 on success.  Free with job_free. */
int job_prepare(struct job *j, int collective);

/* The rest of job_prepare once j->alloc and j->plan are made (an agent
 * takes them from the head's plan wire): the error folder, the binding,
 * the rendezvous.  0 or the exit code after printing. */
int job_prepare_planned(struct job *j, int collective);

/* dlrun run: a host of -H or of a host file that does not resolve is
 * refused (exit 2 naming it) before anything starts; 0 otherwise.  Not in
 * job_prepare: plan and env show hosts that only the cluster knows. */
int job_check_hosts(const struct job *j);

/* Make j->errdir, the folder of the ranks' TORCHELASTIC_ERROR_FILEs
 * (in TMPDIR), before their environments are computed; left NULL when it
 * cannot be made (the ranks run without one). */
void job_errdir(struct job *j);

/* Start the guard (lib/run/guard.h) once per process, with a cgroup of
 * the job's own where one can be made, unless --no-cgroup or
 * DLRUN_CGROUP=0; -v says why there is none.  A guard that cannot start
 * is not an error. */
void job_guard_start(const struct job *j);

/* After a failed run: the first failure the ranks started here wrote into
 * their error files (torch's @record), as one line on stderr; nothing
 * when none wrote one. */
void job_report_root_cause(const struct job *j);

/* --tf-config=auto (the default): TF_CONFIG only for a program that
 * imports TensorFlow (where/mpidetect.h; prog borrowed, NULL: none), so
 * that no other job carries a variable that grows with the world; -v
 * says what decided.  Sets j->opt.tf_config to TF_YES or TF_NO. */
void job_tf_resolve(struct job *j, char **prog);

/* Environment of rank (caller frees out).  Prints the error; 0 / code. */
int job_rank_env(const struct job *j, int rank, struct envset *out);

/* Replace this process with argv[0] in the environment plus s (the
 * per-task mode: same pid, so the scheduler's signals and exit codes
 * stay).  Returns only on failure, after printing "rank R: cannot run":
 * 127 when not found, 126 when not executable. */
int job_exec(char **argv, const struct envset *s, int rank);

struct supervise;

/* Write --summary FILE for the last attempt (job/summary.c).  0, or -1
 * after printing the error. */
int summary_write(const struct job *j, const struct supervise *sv, int rc);

/* dlrun starts the ranks itself (job/launch.c); returns the exit code. */
int run_launch(struct job *j, char **prog);

/* Whether this host can hold the ranks this process starts (all, or its
 * node's in per-node mode) and the agents below it (--spawn): processes,
 * open files, memory (dlrun(1), Limits; lib/run/hostroom.h).  run_launch
 * checks before its ranks start; a caller that forks first (the guard)
 * checks before that and sets j->room_checked.  0, or EXIT_USAGE after
 * saying which limit. */
int job_check_room(const struct job *j);

/* Run the prepared job j (after job_prepare, its checks and
 * job_mpi_resolve; prog borrowed) the way its plan says (job/jobrun.c):
 * --mpi=srun execs srun; per-task mode becomes rank j->plan.self
 * (job_run_per_task); ranks on other hosts: the head (run_head); else
 * this host's ranks (run_launch), their root cause said when they failed.
 * Returns dlrun's exit code. */
int job_run(struct job *j, char **prog);

/* Per-task mode: this process becomes its rank (its environment, its
 * CPUs) and execs prog.  Returns only on failure, with the exit code
 * after saying why. */
int job_run_per_task(struct job *j, char **prog);

/* --wdir on this node: --output-dir and --summary, which dlrun opens
 * later, made absolute against where it started, then the folder entered
 * (the ranks started here run there; a head's agents enter it on their
 * nodes).  0 without --wdir; else 0, or the exit code after saying why. */
int job_enter_wdir(struct job *j);

void job_free(struct job *j);

#endif
