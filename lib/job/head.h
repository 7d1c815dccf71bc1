/* head.h - the head (head.c: run_head in job.h) and what it gives its
 * agents: their command line and the launch job (head_args.c). */
#ifndef DLRUN_HEAD_H
#define DLRUN_HEAD_H

#include <signal.h>

#include "util/envset.h"
#include "job/job.h"
#include "launchers/launcher.h"
#include "place/planwire.h"
#include "util/strv.h"

/* run_head (j and prog borrowed) with the backend l (borrowed; one with
 * LAUNCHER_AGENTS) instead of the one the plan and --launcher select: a
 * test's fake agents.  Blocks the signals the supervisor takes (for good:
 * the caller is about to exit).  Returns the exit code, after the line
 * saying how the job ended (lib/util/say.h). */
int run_head_with(struct job *j, char **prog, const struct launcher *l);

/* Every plan node's index, 0..nnodes-1 (caller frees); NULL when out of
 * memory. */
int *head_nodes(const struct plan *p);

/* "PATH agent" into a, and --no-cgroup when j has it (the agent's guard
 * starts before the plan arrives): the launchers add --node, --lifeline,
 * --spawn and the program.  Everything else an agent takes from the plan
 * wire.  0 / -1 when out of memory. */
int agent_args(const struct job *j, struct strv *a);

/* The broker key of the plan wire, which the head puts before it starts
 * its agents and every agent gets with its token. */
#define HEAD_PLAN_KEY "dlrun.plan"

/* The head's plan and the settings its agents need (lib/place/planwire.h),
 * -x values included, as a malloc'd wire of *len bytes (the caller frees).
 * NULL with err. */
uint8_t *head_plan_wire(const struct job *j, size_t *len, struct err *err);

/* Put the plan wire into the head's broker (addr, token: borrowed) under
 * HEAD_PLAN_KEY, before any agent starts.  0 / -1 with err. */
int head_send_plan(const struct job *j, const char *addr, const char *token,
                   struct err *err);

/* dlrun agent: j's settings from the decoded wire w (j's options borrow
 * w's texts: w outlives j; the -x array and the rank filter are j's own),
 * its bindings parsed as the head's were.  0 / -1 with err. */
int agent_take_settings(struct job *j, const struct planwire *w,
                        struct err *err);

/* Fill aj to start the agents of nodes (nnodes plan nodes; borrowed)
 * with args (borrowed), the lifeline's read end and the children's mask;
 * the relays' ssh options go into relay (the caller frees it). */
void head_fill_job(const struct job *j, struct agent_job *aj,
                   const struct strv *args, struct strv *relay,
                   const int *nodes, int nnodes, int lifeline,
                   const sigset_t *child_mask);

/* --spares (head_spares.c): a node fault an attempt of the head ended
 * with, which costs its node. */
struct head_fault {
    int node;               /* its plan node, -1: none (a program fault, or
                               no --spares: nothing is classified) */
    char reason[200];       /* "no heartbeat for 10 s (link down?)" */
    long fault_ms, detect_ms, down_ms;  /* clock_ms: its last sign of
                                           life where known (else 0), the
                                           head saw it, every agent ended */
};

/* How the attempt ended, into *f (node -1 when no node is to blame or j
 * has no --spares): lost, the plan node of an agent without heartbeat, or
 * -1 (hb_s: the timeout); sv (borrowed): the agents' processes; rank,
 * status: the first failure the agents reported (rank -1: none).  A lost
 * agent, an agent process killed (a signal, or a code of 128 and more)
 * with no failure of its own node reported, or a rank the kernel ended
 * (SIGKILL, SIGBUS, SIGSEGV) is its node's fault; an exit code is the
 * program's. */
void head_classify(const struct job *j, const struct supervise *sv, int lost,
                   int hb_s, int rank, int status, struct head_fault *f);

/* When f names no node and the agents' one process (srun's step) was
 * killed (a code of 128 or more) while no rank reported a failure: the
 * one node whose agent did not say it ended (bye: nnodes flags, borrowed;
 * the others were ended by the step's end) is to blame.  Two or more
 * silent: nobody is. */
void head_classify_silent(const struct job *j, const struct supervise *sv,
                          const char *bye, int rank, struct head_fault *f);

/* Before restart number restart (of max) after f: exclude its node, take
 * a spare in its place (none left, with --nnodes MIN:MAX above MIN: no
 * node in its place), plan again on the new node set (f's moments and the
 * plan's kept in the excluded node's ns_recovery), and say so in one
 * line.  1: done and said; 0: nothing of its own (no --spares or no node
 * fault: the caller says its line); -1: the job cannot start again (said
 * why). */
int head_replace_node(struct job *j, const struct head_fault *f, int restart,
                      int max);

/* After an attempt that ended with f, which would start again (attempt:
 * its number, from 1): with --nnodes MIN:MAX, no spare left and the job on
 * MIN nodes, f's node is excluded and the job cannot go on: one line and
 * EXIT_NODES (EXIT_FAIL when out of memory).  0: not so (the restart goes
 * on, through head_replace_node). */
int head_nodes_exhausted(struct job *j, const struct head_fault *f,
                         int attempt);

/* --spares (head_reserve.c): the spares' agents of one attempt. */
struct head_reserve;
struct pf_node;

/* Start the agents of j's spares like aj's (borrowed: the same
 * environment, lifeline and relay options; the broker at addr, token),
 * each a start of its own, their processes idle in room (one sv_rank
 * each, after sv's: sv->n counts them) and watched from sv's hook.  A
 * spare whose agent does not start is dropped.  NULL when j holds no
 * spare (or in a preflight), or after saying why it cannot watch them. */
struct head_reserve *head_reserve_start(struct job *j,
                                        const struct launcher *l,
                                        const struct agent_job *aj,
                                        const char *addr, const char *token,
                                        struct supervise *sv,
                                        struct sv_rank *room);

/* After sv's run: end the spares' agents still running, free r (NULL:
 * nothing). */
void head_reserve_end(struct head_reserve *r);

/* One spare's agent as the head sees it between looks. */
struct head_spare_watch {
    long long hb;           /* its heartbeat counter at the last look */
    long seen_ms;           /* when that counter last moved */
    int judged;             /* its report was judged */
};

/* One look at a spare's agent at now_ms: running (its process) or its
 * exit code, hb (its heartbeat counter, 0 while none), rep (its report,
 * NULL while none: judged once, alone; borrowed, its why and probe
 * filled), hb_ms the heartbeat timeout.  1 with why (n bytes: "no
 * heartbeat for 10 s", "probe 'python imports' failed: ...") when the
 * spare is to be dropped, else 0. */
int head_spare_check(struct head_spare_watch *w, long now_ms, int running,
                     int code, long long hb, struct pf_node *rep, int hb_ms,
                     char *why, size_t n);

/* --spares: "DLRUN_EXCLUDED_NODES=LIST" into env (the ranks' -x values
 * the agents get).  0 / -1 when out of memory; 0 without --spares. */
int head_wire_excluded(const struct job *j, struct strv *env);

/* After the last attempt: the nodes excluded and the words for the next
 * submission without them, one line (none when nothing was excluded). */
void head_spares_end(const struct job *j);

/* dlrun agent: agree with the other agents on MASTER_ADDR/PORT and the
 * TF_CONFIG worker ports through the broker of DLRUN_BROKER (agent_rdv.c;
 * none: nothing to do), into j->rdv (worker_ports: owned by j).  0, or
 * the exit code after saying why (lib/util/say.h). */
int agent_agree_rdv(struct job *j);

#endif
