/* pmi_serve_int.h - inside lib/mpi/pmi_serve: the fence across nodes
 * (pmi_serve_remote.c), shared by pmi_serve.c and its unit test.
 *
 * When every rank of this node entered a fence, this node's puts since
 * the last one ("key\0value\0" pairs) go to dlrun's broker as one blob
 * (lib/rendezvous/broker_blob.h) under "PREFIX.NODE", and every other
 * node's blob of the same fence is read back.  That waits on the other
 * nodes, so it runs in a thread of its own with its own connection; the
 * supervisor's loop is never blocked: the thread hands its result back
 * over a socket that the server's epoll set watches.
 */
#ifndef DLRUN_PMI_SERVE_INT_H
#define DLRUN_PMI_SERVE_INT_H

#include <stddef.h>

#include "util/err.h"

/* What an exchange brought back; owned by whoever reads it from the
 * socket (pmi_fence_result_free). */
struct pmi_fence_result {
    int ok;                 /* 0: msg says why the fence failed */
    char msg[ERR_MSG_MAX];
    char *data;             /* the other nodes' pairs, one after another */
    size_t len;
};

/* One fence to exchange: every field copied by pmi_fence_start. */
struct pmi_fence_req {
    const char *broker, *token; /* "HOST:PORT" (or a relay's path), hex */
    const char *prefix;         /* unique per job, attempt and fence */
    int node, nnodes;           /* this node; the plan's nodes */
    const unsigned char *has_ranks; /* nnodes flags: the nodes that take
                                       part (each has ranks) */
    const char *data;           /* this node's pairs, n bytes */
    size_t n;
};

/* Start the exchange of r in a detached thread, which sends a pointer to
 * its struct pmi_fence_result on notify_fd (a stream socket: one
 * pointer's bytes; dup'ed, the caller keeps its own) and frees it itself
 * when nobody reads it any more.  0, or -1 with err. */
int pmi_fence_start(const struct pmi_fence_req *r, int notify_fd,
                    struct err *err);

/* Read one result from fd (readable): NULL when none came whole. */
struct pmi_fence_result *pmi_fence_take(int fd);

void pmi_fence_result_free(struct pmi_fence_result *res);

/* Append key and val (NUL-terminated, borrowed) to *buf (*len bytes,
 * *cap allocated) as "key\0val\0".  0, or -1 when out of memory. */
int pmi_pairs_add(char **buf, size_t *len, size_t *cap, const char *key,
                  const char *val);

/* Call fn for each pair of the n bytes at b (another node's: checked:
 * NUL-terminated, key 1..64 bytes, value at most 1024); stops at the
 * first that breaks a rule.  The count taken, or -1 when a pair broke. */
int pmi_pairs_each(const char *b, size_t n,
                   int (*fn)(void *ctx, const char *key, const char *val),
                   void *ctx);

#endif
