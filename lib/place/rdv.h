/* rdv.h - the rendezvous point every rank must agree on: MASTER_ADDR (the
 * address of rank 0's host) and MASTER_PORT. */
#ifndef DLRUN_RDV_H
#define DLRUN_RDV_H

#include "where/alloc.h"
#include "util/err.h"
#include "place/plan.h"

struct rdv_opts {
    const char *master_addr;    /* --master-addr, or NULL */
    int master_port;            /* --master-port, or 0 */
    const char *iface;          /* --iface, or NULL */
    int collective;             /* 1: every task runs this (run, env), so a
                                   PMIx exchange may be used */
    int pmix;                   /* --pmix-rendezvous: agree on the port
                                   through the PMIx server (off by default:
                                   Open MPI 4.1 cannot MPI_Init in a process
                                   whose rank already used the server) */
    int quiet;                  /* 1: this dlrun does not give the ranks
                                   their rendezvous (an agent: its head
                                   says; a head under --mpi=srun: srun's
                                   tasks decide), so it says nothing of an
                                   exported MASTER_ADDR/MASTER_PORT */
};

struct rdv {
    char addr[256];
    int port;
    char addr_from[160], port_from[160];    /* why, for `dlrun env` */
    int *worker_ports;  /* owned: TF_CONFIG's port of each plan rank (found
                           free by its agent), or NULL: MASTER_PORT + 1 +
                           LOCAL_RANK */
};

/* Decide addr and port for the plan.  envp is borrowed.  0 / -1 with err. */
int rdv_resolve(const struct alloc *a, const struct plan *p,
                const struct rdv_opts *o, char **envp, struct rdv *out,
                struct err *err);

/* When dlrun gives the ranks their rendezvous itself (launch mode; by_hand:
 * one dlrun per node started by hand) and the job runs (o->collective,
 * not o->quiet), one line saying that an exported MASTER_ADDR/MASTER_PORT
 * (envp, borrowed) is not what the ranks get, and what would keep it.
 * rdv_resolve says it in launch mode. */
void rdv_say_unused(const struct rdv_opts *o, char **envp, int by_hand);

#endif
