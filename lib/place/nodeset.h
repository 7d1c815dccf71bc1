/* nodeset.h - which of an allocation's nodes the job runs on (--spares,
 * --nnodes MIN:MAX): the active nodes the plan is made on, the spares held
 * in reserve, the nodes excluded after a node fault (and why), the fewest
 * nodes the job may shrink to, and each attempt's world.
 * Pure: it reorders the allocation's nodes, nothing is started.
 *
 * The allocation's node array keeps every node (its strings stay where
 * they are, so a plan's borrowed names live on): the active nodes first,
 * in their order, then the spares, then the excluded; a->nnodes counts
 * only the active ones while the job runs (nodeset_restore before
 * alloc_free). */
#ifndef DLRUN_NODESET_H
#define DLRUN_NODESET_H

#include <stddef.h>

#include "place/plan.h"
#include "util/err.h"
#include "where/alloc.h"

/* How long the job took to run again after a node fault: moments on
 * clock_ms's clock, 0 while not reached. */
struct ns_recovery {
    long fault_ms;          /* the fault itself where known (the node's
                               last heartbeat seen), else detect_ms */
    long detect_ms;         /* the head saw the attempt fail */
    long down_ms;           /* every agent of the attempt ended */
    long planned_ms;        /* the new node set planned */
    long up_ms;             /* every node's ranks running again */
};

/* A node taken out after a fault. */
struct ns_excluded {
    char host[256];
    char reason[200];       /* "no heartbeat for 10 s (link down?)" */
    int attempt;            /* the attempt it failed in, from 1 */
    char spare[256];        /* the spare that took its place, "" none */
    double time;            /* wall clock (clock_wall) */
    struct ns_recovery rec;
};

/* One attempt's world, for --summary. */
struct ns_attempt {
    int world_size;
    char *nodes;            /* owned: "node1,node2,node4" */
};

struct nodeset {
    struct alloc *a;        /* borrowed, reordered (see above) */
    size_t total;           /* the allocation's nodes */
    size_t nactive, nspare;
    size_t min_nodes, max_nodes;    /* --nnodes MIN:MAX (nodeset_limit);
                                       0: the job never shrinks */
    struct ns_excluded *excl;   /* owned, nexcl entries */
    size_t nexcl;
    struct ns_attempt *att;     /* owned, natt entries */
    size_t natt;
};

/* Hold spares of a's nodes (the last ones) in reserve: a->nnodes becomes
 * the rest.  ns is zeroed here.  0 / -1 with err (spares < 0, or none
 * left to run on). */
int nodeset_init(struct nodeset *ns, struct alloc *a, int spares,
                 struct err *err);

/* Exclude the active node host (reason, attempt, time: recorded): the
 * first spare takes its place in the node order.  Returns 1 with *spare
 * (borrowed from a, or NULL) the node that came in, 0 when no spare was
 * left (nothing changes: the node stays active), -1 with err when host
 * is not active or out of memory. */
int nodeset_exclude(struct nodeset *ns, const char *host, const char *reason,
                    int attempt, double time, const char **spare,
                    struct err *err);

/* --nnodes MIN:MAX in an allocation: the job runs on at most max nodes,
 * and the active nodes past max join the spares (held in reserve before
 * the --spares ones, as torchrun's agents past MAX wait to join); with no
 * spare left a node fault shrinks the job down to min nodes
 * (nodeset_shrink).  Call after nodeset_init.  0 / -1 with err (fewer than
 * min nodes to run on, or not 1 <= min <= max). */
int nodeset_limit(struct nodeset *ns, int min, int max, struct err *err);

/* Exclude the active node host without a spare in its place (when
 * nodeset_exclude found none): the job runs on one node fewer (host
 * recorded as nodeset_exclude does).  1: at least min_nodes remain, the
 * job may go on; 0: fewer remain (host excluded all the same: the job
 * cannot go on); -1 with err when host is not active or out of memory. */
int nodeset_shrink(struct nodeset *ns, const char *host, const char *reason,
                   int attempt, double time, struct err *err);

/* Is the next node fault the end: --nnodes MIN:MAX given, no spare left
 * and the job on min_nodes nodes? */
int nodeset_exhausted(const struct nodeset *ns);
/* Drop the spare host from the reserve before it was needed (its agent
 * lost, or a probe failed: reason, attempt and time recorded as for an
 * excluded node): it goes with the excluded nodes, the other spares keep
 * their order.  0 / -1 with err when host is not a spare or out of
 * memory. */
int nodeset_drop_spare(struct nodeset *ns, const char *host,
                       const char *reason, int attempt, double time,
                       struct err *err);

/* Record an attempt's world from its plan p.  0 / -1 when out of memory. */
int nodeset_add_attempt(struct nodeset *ns, const struct plan *p);

/* The excluded hosts, comma separated, into buf (n bytes; "" for none).
 * Returns buf. */
char *nodeset_excluded_list(const struct nodeset *ns, char *buf, size_t n);

/* The words for the next submission without the excluded nodes, into buf:
 * the scheduler's exclude (borrowed: "sbatch/salloc --exclude=") and the
 * excluded list, or when exclude is NULL "-H " and the allocation's other
 * nodes.  Returns buf ("" when nothing was excluded, or no node is left
 * for the host list). */
char *nodeset_next_submission(const struct nodeset *ns, const char *exclude,
                              char *buf, size_t n);

/* The parts of r in milliseconds: detection (fault to detect), teardown
 * (to down), plan (to planned), start (to up); and the whole, fault to
 * up.  Returns the whole, -1 while r is not complete (no up_ms). */
long nodeset_recovery_parts(const struct ns_recovery *r, long part[4]);

/* "recovered in 2.4 s: detection 2.0 s, teardown 0.2 s, plan 0.0 s,
 * start 0.2 s" into buf (n bytes; "" while r is not complete).  Returns
 * buf. */
char *nodeset_recovery_line(const struct ns_recovery *r, char *buf,
                            size_t n);

/* Is a rank's wait status one the kernel ended it with for its node's
 * sake (SIGKILL: the OOM killer; SIGBUS, SIGSEGV: memory or a driver)? */
int nodeset_node_signal(int status);

/* a->nnodes back to every node, for alloc_free; ns's own memory freed.
 * ns may be zeroed (nothing held). */
void nodeset_free(struct nodeset *ns);

#endif
