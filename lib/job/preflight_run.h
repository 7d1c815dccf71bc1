/* preflight_run.h - `dlrun check --nodes` and `dlrun --preflight`: the
 * agents start as a run's would, each reports its node and times TCP
 * round trips to its ring neighbour (or every node), and the head judges
 * the nodes, has the caller show one table and names the bad nodes
 * (lib/job/preflight_agent.c, preflight_collect.c, preflight_judge.c). */
#ifndef DLRUN_PREFLIGHT_RUN_H
#define DLRUN_PREFLIGHT_RUN_H

#include "job/job.h"
#include "job/preflight_judge.h"

struct supervise;
struct pf_collect;

/* dlrun agent --preflight: report this node (prog: the program to look
 * for, may be empty; borrowed), time the links, wait until the nodes that
 * time their link to this one are done.  The exit code, after saying why
 * it failed. */
int agent_preflight(struct job *j, char **prog);

/* The head, once the agents started (sv: their processes, supervised
 * next, borrowed until preflight_collect_end; addr and token of the
 * head's broker, borrowed for the call): note when each report arrives
 * (the clock offsets) in a thread of its own, and end the agents still
 * running at the preflight's deadline (sv's periodic hook).  NULL after
 * saying why when it cannot start. */
struct pf_collect *preflight_collect_start(const struct job *j,
                                           const char *addr,
                                           const char *token,
                                           struct supervise *sv);

/* After the agents ended (sv: their processes): judge the nodes, show
 * the table through j->pf_show (when set), say the verdict (not with
 * j->pf_quiet: the caller's lines), free c (NULL:
 * "no results").  0 when every node passed, EXIT_FAIL otherwise. */
int preflight_collect_end(struct pf_collect *c, const struct job *j,
                          const struct supervise *sv);

/* The preflight of j's plan for prog (may be empty; borrowed): the head
 * with its agents in --preflight mode, the table shown through show
 * (borrowed for the call; NULL: not shown).  The signal mask is as
 * before.  0 when every node passed, else the exit code after saying
 * why. */
int job_preflight(struct job *j, char **prog, const struct pf_show *show);

#endif
