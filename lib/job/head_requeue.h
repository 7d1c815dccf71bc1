/* head_requeue.h - --spares inside a scheduler's job that may requeue
 * itself (Slurm's sbatch --requeue, or its site's JobRequeue=1): a node
 * fault with no spare left to take the node's place ends the attempt and
 * puts the job back in its queue excluding the nodes found bad (those it
 * excluded before kept), instead of restarting on the same nodes.  What
 * the scheduler's commands are is its row's (lib/where/sched.h:
 * job_show, requeueable, excluded_key, requeue_without). */
#ifndef DLRUN_HEAD_REQUEUE_H
#define DLRUN_HEAD_REQUEUE_H

#include "job/head.h"

struct head_requeue {
    int wanted;             /* the job ends to be requeued */
    char id[64];            /* its job id */
    char host[256];         /* the node at fault */
    char reason[200];       /* why */
    char bad[2048];         /* the nodes this run found bad, comma list */
    char nodes[4096];       /* what the job excludes from now on: those it
                               excluded before, then bad */
};

/* After an attempt that ended with f and would start again: when f is a
 * node fault, no spare is left to take its node's place and j runs in a
 * scheduler's job whose row can requeue it and which its scheduler says
 * may be requeued (job_show run now), fill *rq (wanted 1) and return 1:
 * the job is to end and head_requeue to put it back.  0 (rq->wanted 0):
 * not so, the restart goes on. */
int head_requeue_check(const struct job *j, const struct head_fault *f,
                       struct head_requeue *rq);

/* The node at fault of rq (head_requeue_check's, wanted) recorded among
 * j's excluded nodes, failed in attempt (from 1), for --summary and the
 * last line. */
void head_requeue_exclude(struct job *j, const struct head_requeue *rq,
                          int attempt);

/* Requeue the job of rq (head_requeue_check's) without rq->nodes through
 * its row's requeue_without commands (each tried again a few times: the
 * requeue's TERM may end one), and say so in one line, or say why it
 * could not.  Returns rc, the attempt's exit code (the scheduler ends
 * the job's script in any case). */
int head_requeue(const struct job *j, const struct head_requeue *rq, int rc);

#endif
