/* pmi_wire.h - the simple PMI wire (PMI-1 and PMI-2) of one rank's
 * connection, as an engine without sockets: feed it the bytes the rank
 * sent, in pieces of any size; it answers through ops->respond and hands
 * the key-value store, the fence and abort to the caller's callbacks.
 * Nothing here touches a file descriptor or a clock, so the unit test and
 * the fuzzer drive it directly and lib/mpi/pmi_serve serves it on sockets.
 *
 * What MPICH, Intel MPI and MVAPICH send (their simple PMI client, the one
 * Hydra's mpiexec, Flux and Slurm's pmi2 plugin serve):
 *
 *  - PMI-1: one line per request, "cmd=NAME key=value ...\n", the reply
 *    the same ("cmd=response_to_init pmi_version=1 pmi_subversion=1
 *    rc=0\n").  Values are words (no space; a client that escapes one
 *    writes "\ "): they are stored and handed back as they came.
 *  - PMI-2: a PMI-1 "cmd=init pmi_version=2 ..." line first, then
 *    messages of a 6-character decimal length and that many bytes,
 *    "cmd=NAME;key=value;...;" (fullinit, job-getid, info-getjobattr,
 *    kvs-put, kvs-fence, kvs-get, finalize, abort).  A "thrid" key is
 *    echoed in the reply, as threaded clients match replies by it.
 *
 * A put is the caller's to keep until a fence ends; get reads the
 * caller's store as it is (MPI gets only after a fence).  Publish, lookup
 * and spawn are answered with an error at once: nothing waits on them.
 */
#ifndef DLRUN_PMI_WIRE_H
#define DLRUN_PMI_WIRE_H

#include <stddef.h>

#include "util/err.h"

#define PMI_WIRE_KEY_MAX 64         /* bytes of a key (get_maxes says so) */
#define PMI_WIRE_VAL_MAX 1024       /* bytes of a value */
#define PMI_WIRE_KVSNAME_MAX 256    /* bytes of the job's KVS name */
#define PMI_WIRE_MSG_MAX 4096       /* bytes of one request: more is a
                                       protocol error, the rank dropped */

/* What every rank of the job is told.  Strings borrowed: they outlive the
 * engines. */
struct pmi_wire_job {
    int size;                   /* ranks in the job */
    int appnum;                 /* 0: one program */
    const char *kvsname;        /* the job's KVS name (PMI-2's job id) */
    const char *mapping;        /* PMI_process_mapping, "(vector,(...))" */
};

/* The caller's side; rank is the engine's.  Strings passed in are
 * borrowed for the call. */
struct pmi_wire_ops {
    /* Store key=val for the job: 0, or -1 when the store refuses it
     * (full): the rank is told rc=-1. */
    int (*put)(void *ctx, int rank, const char *key, const char *val);
    /* The value of key (borrowed until the next put), or NULL. */
    const char *(*get)(void *ctx, int rank, const char *key);
    /* The rank entered a barrier (PMI-1) or fence (PMI-2): when every
     * rank has, the caller calls pmi_wire_fence_done on each engine. */
    void (*fence)(void *ctx, int rank);
    /* Send these len bytes to the rank: 0, or -1 (the connection failed:
     * pmi_wire_feed returns -1). */
    int (*respond)(void *ctx, int rank, const char *buf, size_t len);
    /* The rank called PMI_Abort (MPI_Abort) with code and a message ("" if
     * none); it exits by itself after. */
    void (*abort)(void *ctx, int rank, int code, const char *msg);
};

struct pmi_wire;

/* An engine for the connection of rank (0 <= rank < job->size); job and
 * ops borrowed, ctx handed to ops.  Caller frees with pmi_wire_destroy.
 * NULL with err (out of memory, a rank outside the job). */
struct pmi_wire *pmi_wire_create(const struct pmi_wire_job *job,
                                 const struct pmi_wire_ops *ops, void *ctx,
                                 int rank, struct err *err);

/* NULL is a no-op. */
void pmi_wire_destroy(struct pmi_wire *w);

/* The n bytes the rank sent next (any split): each complete request is
 * answered or handed on.  0, or -1 with err at a request that breaks the
 * wire (no "cmd=", a bad length, a request over PMI_WIRE_MSG_MAX, an
 * unknown PMI-1 command, a second fence before the first ended) or when
 * respond failed: drop the rank's connection then. */
int pmi_wire_feed(struct pmi_wire *w, const char *buf, size_t n,
                  struct err *err);

/* The fence the rank is in ended (rc 0; else the rank is told it failed):
 * its barrier_out or kvs-fence-response is sent.  0; -1 with err when the
 * rank was not in a fence or respond failed. */
int pmi_wire_fence_done(struct pmi_wire *w, int rc, struct err *err);

/* 1 once the rank sent finalize (its connection may close), else 0. */
int pmi_wire_finalized(const struct pmi_wire *w);

/* 1 while the rank waits in a fence. */
int pmi_wire_in_fence(const struct pmi_wire *w);

/* PMI_process_mapping for ranks placed on nodes: rank_node[r] is the node
 * of rank r (n ranks): "(vector,(first node,nodes,ranks each),...)" with
 * blocks of consecutive ranks on one node, neighbours of the same size on
 * consecutive nodes merged ("(vector,(0,2,4))" for 2 nodes of 4).  Into
 * buf (len bytes); 0, or -1 when it does not fit or n < 1 (MPICH then
 * finds its node mates by itself). */
int pmi_wire_mapping(const int *rank_node, int n, char *buf, size_t len);

#endif
