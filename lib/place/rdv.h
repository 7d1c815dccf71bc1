/* rdv.h - the rendezvous point every rank must agree on: MASTER_ADDR (the
 * address of rank 0's host) and MASTER_PORT. */
#ifndef DLRUN_RDV_H
#define DLRUN_RDV_H

#include "where/alloc.h"
#include "util/err.h"
#include "place/plan.h"

enum { RDV_PMIX_AUTO, RDV_PMIX_ON, RDV_PMIX_OFF };

struct rdv_opts {
    const char *master_addr;    /* --master-addr, or NULL */
    int master_port;            /* --master-port, or 0 */
    const char *iface;          /* --iface, or NULL */
    int collective;             /* 1: every task runs this (run, env), so a
                                   PMIx exchange may be used */
    int pmix;                   /* RDV_PMIX_AUTO, RDV_PMIX_ON
                                   (--pmix-rendezvous), RDV_PMIX_OFF
                                   (--no-pmix-rendezvous) */
    int prog_mpi;               /* auto: 1 when the program a per-task rank
                                   becomes uses MPI (or cannot be told: an
                                   MPMD line), so that dlrun leaves the
                                   PMIx server to it (rdv.c says why) */
    char prog_why[160];         /* what decided prog_mpi, for -v and env */
    int quiet;                  /* 1: this dlrun does not give the ranks
                                   their rendezvous (an agent: its head
                                   says; a head under --mpi=srun: srun's
                                   tasks decide), so it says nothing of an
                                   exported MASTER_ADDR/MASTER_PORT */
};

struct rdv {
    char addr[256];
    int port;
    char addr_from[160], port_from[240];    /* why, for `dlrun env` */
    int pmix;           /* 1: agreed through the PMIx server (not PMI-1's): this process
                           used it (job_rank_env then gives the program
                           PMIX_MCA_gds=hash, see rdv.c) */
    int *worker_ports;  /* owned: TF_CONFIG's port of each plan rank (found
                           free by its agent), or NULL: MASTER_PORT + 1 +
                           LOCAL_RANK */
};

/* Does this task agree the port through the PMIx server?  1 under one
 * (srun --mpi=pmix, mpirun) in per-task or per-node mode when the job
 * runs (o->collective) without --master-port, and --pmix-rendezvous, or
 * auto with no exported MASTER_PORT, not o->quiet and no per-task MPI
 * program (o->prog_mpi); else 0.  envp borrowed. */
int rdv_wants_pmix(const struct plan *p, const struct rdv_opts *o,
                   char **envp);

/* The same decision under a simple PMI-1 server (PMI_FD: mpiexec.hydra,
 * srun --mpi=pmi2; PMI_PORT: mpiexec.hydra -pmi-port) where no PMIx
 * server is there.  envp borrowed. */
int rdv_wants_pmi(const struct plan *p, const struct rdv_opts *o,
                  char **envp);

/* Decide addr and port for the plan, then end the process's PMI-1
 * session (where/pmic.h: finalized unless a per-task MPI program takes it
 * over).  envp is borrowed.  0 / -1 with err. */
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
