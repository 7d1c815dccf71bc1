/* preflight_run.h - `dlrun check --nodes` and `dlrun --preflight`: the agents
 * start as a run's would, each reports its node and times TCP round trips
 * to its ring neighbour (or every node), and the head prints one table
 * and names the bad nodes (cmd/preflight.c). */
#ifndef DLRUN_PREFLIGHT_RUN_H
#define DLRUN_PREFLIGHT_RUN_H

#include "job/job.h"

struct supervise;
struct pf_collect;

/* dlrun agent --preflight: report this node (prog: the program to look
 * for, may be empty), time the links, wait until the nodes that time
 * their link to this one are done.  The exit code. */
int agent_preflight(struct job *j, char **prog);

/* The head, once the agents started (sv: their processes, supervised
 * next): note when each report arrives (the clock offsets) in a thread of
 * its own, and end the agents still running at the preflight's deadline
 * (sv's periodic hook).  NULL after printing when it cannot start. */
struct pf_collect *preflight_collect_start(const struct job *j,
                                           const char *addr,
                                           const char *token,
                                           struct supervise *sv);

/* After the agents ended (sv: their processes): print the table and the
 * verdict, free c.  0 when every node passed, EXIT_FAIL otherwise. */
int preflight_collect_end(struct pf_collect *c, const struct job *j,
                          const struct supervise *sv);

/* The preflight of j's plan for prog (may be empty): the head with its
 * agents in --preflight mode.  The signal mask is as before.  0 when
 * every node passed, else the exit code after printing. */
int run_preflight(struct job *j, char **prog);

#endif
