/* pmic.h - the simple PMI-1 wire a per-task dlrun speaks as a client
 * under a launcher that serves it: MPICH's mpiexec.hydra (PMI_FD, or
 * PMI_PORT with -pmi-port), Flux's job shell (PMI_FD), Slurm's pmi2
 * plugin (PMI_FD).  From it dlrun takes its rank and size (PMI_PORT's
 * server says them; PMI_FD's launcher exports PMI_RANK and PMI_SIZE),
 * the node layout (PMI_process_mapping, where/pmimap.h), and agrees rank
 * 0's rendezvous address through the launcher's key-value space.
 *
 * The line parsing (pmic_field, pmic_reply) touches no socket, so it is
 * tested and fuzzed in-process; the rest speaks over the connection.
 * Every wait for the server (each reply, a barrier above all: it waits
 * for every task) has a limit, DLRUN_PMI_TIMEOUT seconds
 * (PMIC_TIMEOUT_S by default), so a task that never came is one line,
 * not a hang.
 *
 * Hydra's proxy closes a rank's PMI_FD when it says cmd=finalize, so a
 * program exec'd after that cannot open PMI again (an MPI program's
 * MPI_Init fails); and a rank that said cmd=init but exits without
 * cmd=finalize is a "bad termination" that ends the whole job.  The
 * caller finalizes unless the program it execs will (an MPI program),
 * which may then say cmd=init again on the same open fd.  A PMI_PORT
 * connection is dlrun's own: it is always finalized and closed, and the
 * program connects anew (Hydra takes a second connection of one PMI_ID).
 */
#ifndef DLRUN_PMIC_H
#define DLRUN_PMIC_H

#include <stddef.h>

#include "util/err.h"

#define PMIC_TIMEOUT_S 600

/* One connection to a PMI-1 server. */
struct pmic {
    int fd;                 /* -1 when closed */
    int own;                /* a PMI_PORT socket: pmic_close closes it */
    int rank, size;         /* this task's, from the launcher */
    int inited;             /* said cmd=init, not yet cmd=finalize */
    int timed_out;          /* a wait ran past timeout_ms */
    int missing;            /* the last get: the server has no such key */
    long long timeout_ms;   /* each wait's limit */
    char kvs[257];          /* the key-value space's name */
    char where[128];        /* "PMI_FD 5", "PMI_PORT host:port" */
    const char *launcher;   /* static: who serves it, for messages */
};

/* 1 when envp (borrowed) names a PMI-1 server's connection: PMI_FD a
 * file descriptor number with PMI_RANK and PMI_SIZE, or PMI_PORT
 * (host:port) with PMI_ID. */
int pmic_server(char **envp);

/* 1 when the server envp names can be reached: PMI_PORT, or a PMI_FD
 * that is an open socket of this process (a PMI_FD exported by an outer
 * launcher whose descriptor did not reach us, or a captured environment,
 * is no channel). */
int pmic_fd_open(char **envp);

/* 1 when envp's server is reached over PMI_PORT (no PMI_FD): dlrun's
 * own connection. */
int pmic_is_port(char **envp);

/* Who serves PMI to a task with envp, for messages: "flux run",
 * "srun --mpi=pmi2", "mpiexec.hydra" or "the PMI launcher" (static). */
const char *pmic_launcher(char **envp);

/* The value of key in one wire line (space-separated key=value words, no
 * newline) into val (len bytes): 0, or -1 when the key is absent or its
 * value does not fit. */
int pmic_field(const char *line, const char *key, char *val, size_t len);

/* Check a reply line: its cmd= is want, and rc= (when present) is 0.
 * 0 / -1 with err naming what was asked (asked) and the server's msg=. */
int pmic_reply(const char *line, const char *want, const char *asked,
               struct err *err);

/* Connect to envp's server (PMI_PORT: connect and learn rank and size
 * from its cmd=set lines), say cmd=init and learn the key-value space;
 * each wait at most timeout_ms.  c is the caller's; pmic_close frees
 * nothing but the socket.  0 / -1 with err (c->timed_out when the server
 * did not answer in time). */
int pmic_open(char **envp, long long timeout_ms, struct pmic *c,
              struct err *err);

/* key's value in the key-value space into val (len bytes).  0 / -1
 * (c->missing when the server answered that it has no such key). */
int pmic_get(struct pmic *c, const char *key, char *val, size_t len,
             struct err *err);

/* Put key=val (both borrowed) into the key-value space.  0 / -1. */
int pmic_put(struct pmic *c, const char *key, const char *val,
             struct err *err);

/* Wait until every task reached the barrier.  0 / -1. */
int pmic_barrier(struct pmic *c, struct err *err);

/* cmd=finalize when initialised.  0 / -1. */
int pmic_finalize(struct pmic *c, struct err *err);

/* Close a PMI_PORT socket (never PMI_FD: the program inherits it). */
void pmic_close(struct pmic *c);

/* Rank 0 puts its addr and *port under dlrun.master, barrier, every task
 * gets them back into addr (len bytes) and *port.  Collective: every task
 * must call it.  0 / -1 with err. */
int pmic_agree_master(struct pmic *c, int rank, char *addr, size_t len,
                      int *port, struct err *err);

/* The process's one connection to envp's server, opened on the first
 * call (DLRUN_PMI_TIMEOUT in envp, seconds, else PMIC_TIMEOUT_S): the
 * same one after.  Borrowed; NULL with err. */
struct pmic *pmic_the(char **envp, struct err *err);

/* End the process's connection when open: cmd=finalize when finalize is
 * 1 or it is a PMI_PORT socket (closed then), else the fd stays open and
 * initialised for the program to init again.  0 / -1 with err. */
int pmic_the_end(int finalize, struct err *err);

/* dlrun fails before it runs the program: end the process's connection
 * cleanly (cmd=finalize, so that the launcher reports dlrun's exit status
 * rather than a task that vanished), unless a wait timed out there (the
 * server may not answer). */
void pmic_the_abandon(void);

/* 1 when a wait on the process's connection ran past its limit (the exit
 * code EXIT_PMI_TIMEOUT). */
int pmic_the_timed_out(void);

#endif
