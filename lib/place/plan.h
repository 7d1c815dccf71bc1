/* plan.h - the rank plan: which rank runs on which node, with which local
 * rank.  Pure: computed from an allocation and the request, nothing is
 * started or looked up, so a plan can be made for any machine.
 */
#ifndef DLRUN_PLAN_H
#define DLRUN_PLAN_H

#include "where/alloc.h"
#include "util/err.h"

struct plan_request {
    int ranks;          /* -np, 0 = the allocation's default */
    int nodes;          /* -N, 0 = every node */
    int per_node;       /* --nproc-per-node, 0 = each node's slots */
    int oversubscribe;  /* allow more ranks than slots */
    int deal;           /* Hydra's -hosts/-ppn: more ranks than slots start
                           again at the first node, in blocks of each node's
                           slots, as many rounds as it takes (never refused) */
};

struct plan_node {
    const char *host;   /* borrowed from the allocation; NULL = unknown */
    const char *login;  /* borrowed: user@host's user (ssh), or NULL */
    const char *addr_name;  /* borrowed: the name to resolve for the node's
                               address (an ssh alias's HostName), or NULL:
                               host */
    int first_rank;     /* lowest rank on the node */
    int nranks;         /* LOCAL_WORLD_SIZE */
};

struct plan {
    int nranks;
    struct plan_node *nodes;    /* owned, nnodes entries, node rank order */
    int nnodes;
    int *rank_node;     /* owned: node rank of each rank */
    int *rank_local;    /* owned: local rank of each rank */
    int per_task;       /* 1: the scheduler started every rank (srun, mpirun) */
    int self;           /* per-task: this process's rank; else -1 */
    int self_node;      /* per-node: the scheduler started one dlrun per node
                           (srun --ntasks-per-node=1 dlrun --nproc-per-node 4)
                           and this one starts the ranks of this node; else -1 */
    int partial;        /* per-task without other hosts' names (mpirun) */
    const char *layout; /* static: how ranks were laid out, for humans */
};

/* 1 when the scheduler already started one task per rank and the request
 * asks for nothing else: dlrun then becomes that rank (exec in place). */
int plan_is_per_task(const struct alloc *a, const struct plan_request *req);

/* Build the plan (caller frees with plan_free).  a must outlive p.
 * 0 / -1 with err. */
int plan_build(const struct alloc *a, const struct plan_request *req,
               struct plan *p, struct err *err);

void plan_free(struct plan *p);  /* frees members; p may be NULL */

/* The name to resolve for node's address, as other nodes must reach it:
 * an ssh alias's HostName, else its host (NULL when unknown).  Borrowed. */
const char *plan_addr_name(const struct plan *p, int node);

/* For plans made elsewhere (lib/place/planwire.h: the head's, decoded): room
 * for nranks ranks on nnodes nodes (zeroed; free with plan_free, also
 * after a failure), 0 / -1 with err; and, once rank_node is filled, each
 * node's rank count and first rank and each rank's local rank. */
int plan_alloc(struct plan *p, int nranks, int nnodes, struct err *err);
void plan_count_local(struct plan *p);

#endif
