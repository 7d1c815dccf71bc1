/* pmi_serve.h - the simple PMI wire (lib/mpi/pmi_wire.h) served to the
 * ranks dlrun starts on this node, so that a program of MPICH's family
 * (MPICH, Intel MPI, MVAPICH: their simple PMI client) gets its world
 * without mpiexec.
 *
 * Each rank inherits one end of a socketpair as PMI_FD (with PMI_RANK,
 * PMI_SIZE, as Hydra sets them); dlrun keeps the other, in one epoll set
 * that the caller's loop watches (pmi_serve_fd) and serves without
 * waiting (pmi_serve_step), as it serves its broker.  The job's store and
 * fence are here: a fence ends when every rank started here entered it
 * and, with ranks on other nodes (an agent's server), every other node's
 * server sent the puts of its ranks through dlrun's broker
 * (pmi_serve_int.h).  A new set of sockets and an empty store per attempt
 * (pmi_serve_begin .. pmi_serve_end).
 */
#ifndef DLRUN_PMI_SERVE_H
#define DLRUN_PMI_SERVE_H

#include "util/envset.h"
#include "util/err.h"
#include "place/plan.h"

struct pmi_serve;

struct pmi_serve_opts {
    const struct plan *plan;    /* borrowed; outlives the server */
    const int *ranks;           /* borrowed: the ranks started here (all of
                                   the plan's without a broker) */
    int nranks;
    const char *broker;         /* the broker of the job's nodes, with
                                   token (hex), when other nodes serve the
                                   other ranks; NULL: every rank is here */
    const char *token;
    const char *job_id;         /* names the fences' keys alike on every
                                   node, unique per run of the job (at most
                                   150 bytes used) */
    const char *kvsname;        /* the job's KVS name, unique per run
                                   (copied; at most 200 bytes) */
    int version;                /* 2: ask for PMI-2 where the client lets
                                   the launcher choose; else 0 */
    /* A rank's connection broke the wire (msg says how) and was closed:
     * one line for the user.  Called from pmi_serve_step. */
    void (*note)(void *ctx, int rank, const char *msg);
    void *note_ctx;
};

/* A server for o's ranks (the plan's process mapping computed once).
 * Caller frees with pmi_serve_destroy.  NULL with err. */
struct pmi_serve *pmi_serve_create(const struct pmi_serve_opts *o,
                                   struct err *err);

/* NULL is a no-op; ends an attempt still open. */
void pmi_serve_destroy(struct pmi_serve *s);

/* Open an attempt: a socketpair per rank, empty store.  0 / -1 with err
 * (out of files: one line naming the limit). */
int pmi_serve_begin(struct pmi_serve *s, struct err *err);

/* What rank needs to reach the server: PMI_FD, PMI_RANK, PMI_SIZE and the
 * local rank variables MPICH's Hydra sets, added to out.  0 / -1 with err. */
int pmi_serve_rank_env(const struct pmi_serve *s, int rank,
                       struct envset *out, struct err *err);

/* The fd rank must inherit (its PMI_FD), -1 when rank is not served. */
int pmi_serve_child_fd(const struct pmi_serve *s, int rank);

/* The ranks started: dlrun closes its copies of their ends, so that a
 * rank's exit reads as its connection's end. */
void pmi_serve_started(struct pmi_serve *s);

/* The fd to watch for readable (an epoll set), -1 outside an attempt. */
int pmi_serve_fd(const struct pmi_serve *s);

/* Serve what the ranks sent, without waiting.  A rank whose bytes break
 * the wire is dropped (note says why); 0, or -1 with err when epoll
 * itself failed. */
int pmi_serve_step(struct pmi_serve *s, struct err *err);

/* 1 when a rank of this attempt called MPI_Abort (PMI_Abort), the first
 * one's rank and code (1 for PMI-2, which sends none) set; else 0.  The
 * rank waits to be killed, as under Hydra: the caller ends the job. */
int pmi_serve_aborted(const struct pmi_serve *s, int *rank, int *code);

/* Close the attempt's sockets and empty the store. */
void pmi_serve_end(struct pmi_serve *s);

#endif
