/* agent.h - `dlrun agent`, started by a head on every node (agent.c): it
 * takes the head's plan and settings from the head's broker, starts this
 * node's ranks (and with --spawn the agents below it), and watches the
 * head.  The head's side is head.h. */
#ifndef DLRUN_AGENT_H
#define DLRUN_AGENT_H

#include "job/job.h"

/* Run the agent of j, whose options the caller parsed (j->agent set; the
 * program at argv + j->opt.prog, argc words in argv, borrowed).  j is
 * freed here (job_free): its options borrow the head's plan wire to the
 * end.  Returns the exit code, after saying why (lib/util/say.h); 0 also
 * when the plan has no rank on this node. */
int agent_run(struct job *j, int argc, char **argv);

struct headlink_conf;

/* --spare-agent (agent_spare.c): the agent of a spare node held in
 * reserve: beat (hc: the watchers' settings, filled here; its cl is
 * handed on), probe the node for prog (borrowed, may be empty) and report,
 * then run nothing until the head ends it.  The exit code, after saying
 * why it failed. */
int agent_spare(struct job *j, char **prog, struct headlink_conf *hc);

#endif
