/* head.h - what the head (cmd/head.c) gives its agents: their command
 * line and the launch job (cmd/head_args.c). */
#ifndef DLRUN_HEAD_H
#define DLRUN_HEAD_H

#include <signal.h>

#include "envset.h"
#include "job.h"
#include "launcher.h"
#include "strv.h"

/* Every plan node's index, 0..nnodes-1 (caller frees); NULL when out of
 * memory. */
int *head_nodes(const struct plan *p);

/* "PATH agent --hosts=EXACT --np=N [shared options]" into a (no "--", no
 * program), and the -x values for the agents' environment into env
 * (DLRUN_X_NAME, lib/run/envwire.h): no value ever goes on a command line.
 * 0 / -1 when out of memory. */
int agent_args(const struct job *j, struct strv *a, struct envset *env);

/* Fill aj to start the agents of nodes (nnodes plan nodes; borrowed)
 * with args (borrowed), the lifeline's read end and the children's mask;
 * the relays' ssh options go into relay (the caller frees it). */
void head_fill_job(const struct job *j, struct agent_job *aj,
                   const struct strv *args, struct strv *relay,
                   const int *nodes, int nnodes, int lifeline,
                   const sigset_t *child_mask);

/* dlrun agent: agree with the other agents on MASTER_ADDR/PORT and the
 * TF_CONFIG worker ports through the broker (cmd/agent_rdv.c).  0, or the
 * exit code after printing the error. */
int agent_agree_rdv(struct job *j);

#endif
