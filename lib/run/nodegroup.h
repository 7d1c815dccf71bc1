/* nodegroup.h - one dlrun per node, started by hand (torchrun's static and
 * rendezvous modes): the dlruns meet at a broker, get their node ranks,
 * agree on MASTER_ADDR/PORT, watch each other's heartbeats and end every
 * attempt together with one outcome.
 *
 * Every attempt is a generation G (the restart count); its keys are
 * ng.G.*: claim.R (static: a node rank taken once), arrive (rendezvous:
 * node ranks by arrival), m.R (node R's record), hb.R (its heartbeat),
 * endseq/end (the first outcome posted is the group's), done (nodes whose
 * ranks succeeded), left (nodes that read the outcome).  Any rank holds
 * the token too: everything read back is parsed in full and checked. */
#ifndef DLRUN_NODEGROUP_H
#define DLRUN_NODEGROUP_H

#include <stddef.h>

#include "util/err.h"

#define NG_MAX_NODES 4096
#define NG_ADDR_MAX 64
#define NG_HOST_MAX 256

/* What a node brings to the group (its record, ng.G.m.R). */
struct ng_member {
    int nproc;              /* ranks it starts, 1.. */
    int port;               /* node rank 0: MASTER_PORT, free on it; else 0 */
    int max_restarts;       /* its --max-restarts: every node must agree */
    char addr[NG_ADDR_MAX]; /* its address as the other nodes reach it */
    char host[NG_HOST_MAX]; /* its host name, for messages */
};

/* "NPROC PORT MAX_RESTARTS ADDR HOST" into buf (len bytes); -1 when it
 * does not fit. */
int ng_member_format(const struct ng_member *m, char *buf, size_t len);

/* Decode a record (len bytes at s, any bytes) into m.  0 / -1 with err. */
int ng_member_parse(const char *s, size_t len, struct ng_member *m,
                    struct err *err);

/* How an attempt of the group ended (ng.G.end). */
enum ng_kind {
    NG_OK,          /* every node's ranks succeeded */
    NG_FAIL,        /* rank failed on node: status is its wait status */
    NG_SIGNAL,      /* dlrun on node was told to stop: status = signal */
    NG_LOST,        /* node's heartbeat stopped */
    NG_ERROR,       /* dlrun on node could not run its ranks: status = code */
    NG_GROW,        /* elastic: a node waits to join: restart bigger */
};

struct ng_end {
    enum ng_kind kind;
    int node, rank, status, pid;    /* what applies to kind, else 0 */
};

/* "ok" | "fail NODE RANK STATUS PID" | "signal NODE SIG" | "lost NODE" |
 * "error NODE CODE" | "grow" into buf; -1 when it does not fit. */
int ng_end_format(const struct ng_end *e, char *buf, size_t len);

/* Decode an outcome (len bytes at s, any bytes) of a group of nnodes
 * nodes and nranks ranks into e.  0 / -1 with err. */
int ng_end_parse(const char *s, size_t len, int nnodes, int nranks,
                 struct ng_end *e, struct err *err);

struct ng_conf {
    const char *broker;     /* "HOST:PORT" (borrowed) */
    const char *token_hex;  /* 32 hex digits (borrowed) */
    int nnodes;             /* nodes in the group (elastic: at least) */
    int max_nodes;          /* elastic (> nnodes): at most; else 0 */
    int last_call_ms;       /* elastic: wait after nnodes joined */
    int node_rank;          /* static: this node's; -1: by arrival */
    int join_timeout_ms;    /* for every node to join */
    int hb_timeout_ms;      /* a node silent this long is lost */
    struct ng_member self;  /* this node's record (port: ng_join's) */
};

/* One generation of the group, as joined. */
struct ng_group {
    int gen, self, nnodes, nranks;
    struct ng_member *nodes;    /* owned, nnodes entries, by node rank */
};

struct nodegroup;

/* Connect to the group's broker (retried until join_timeout_ms, so a node
 * may start before the one that serves).  conf is copied, its strings
 * borrowed.  Free with ng_close.  NULL with err. */
struct nodegroup *ng_connect(const struct ng_conf *conf, struct err *err);

void ng_close(struct nodegroup *ng);    /* NULL is a no-op */

/* Join generation gen (-1: the one the group is in): take a node rank, publish the record (node rank 0
 * finds MASTER_PORT), wait for every node's.  stop(ctx), called about
 * once a second while waiting, returns non-zero to give up (a signal).
 * 0 and *g filled (free with ng_group_free); 1 when stop said so; -1 with
 * err. */
int ng_join(struct nodegroup *ng, int gen, int (*stop)(void *ctx), void *ctx,
            struct ng_group *g, struct err *err);

void ng_group_free(struct ng_group *g);

/* The ranks' broker of this attempt, "HOST:PORT": node rank 0 shares
 * addr (its own, fresh each attempt, so that nothing the ranks stored
 * outlives it: NCCL ids, kv keys); the others pass NULL and wait for it
 * into out (len bytes).  0, 1 when stop said so, -1 with err. */
int ng_ranks_broker(struct nodegroup *ng, const struct ng_group *g,
                    const char *addr, char *out, size_t len,
                    int (*stop)(void *ctx), void *ctx, struct err *err);

/* Start watching g's heartbeats (every node counts as seen now). */
int ng_watch_begin(struct nodegroup *ng, const struct ng_group *g,
                   struct err *err);

/* One beat: add to this node's counter, look at the others' (a node
 * silent past the timeout is posted lost), then wait up to wait_ms for
 * the outcome.  1 with *e when the attempt has ended, 0 when not yet, -1
 * with err when the broker is gone. */
int ng_watch(struct nodegroup *ng, const struct ng_group *g, int wait_ms,
             struct ng_end *e, struct err *err);

/* Post this node's outcome: e, or NULL when its ranks succeeded (the last
 * node to succeed posts NG_OK).  The first posted is the group's.  0 / -1
 * with err. */
int ng_post(struct nodegroup *ng, const struct ng_group *g,
            const struct ng_end *e, struct err *err);

/* Wait up to wait_ms for the group's outcome: 1 with *e, 0 not yet, -1
 * with err. */
int ng_outcome(struct nodegroup *ng, const struct ng_group *g, int wait_ms,
               struct ng_end *e, struct err *err);

/* Say this node read the outcome; with wait_ms > 0 (the node that serves
 * the broker) wait until `expect` nodes have.  0 / -1 with err. */
int ng_leave(struct nodegroup *ng, const struct ng_group *g, int expect,
             int wait_ms, struct err *err);

/* A token for a group no secret was given to: 16 bytes from the run id
 * and the endpoint (a fixed mix, not a secret: anyone who knows both can
 * join), as 32 hex digits with a NUL into out. */
void ng_derive_token(const char *run_id, const char *endpoint, char out[33]);

#endif
