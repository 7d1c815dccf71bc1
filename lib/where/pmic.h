/* pmic.h - the little of the simple PMI-1 wire a per-task dlrun speaks as
 * a client under a launcher that serves it over PMI_FD (MPICH's
 * mpiexec.hydra): agree rank 0's rendezvous address through the launcher's
 * key-value space.
 *
 * The line parsing (pmic_field, pmic_reply) touches no socket, so it is
 * tested and fuzzed in-process; pmic_agree_master speaks over the fd.
 *
 * Hydra's proxy closes a rank's connection when it says cmd=finalize, so a
 * program exec'd after that cannot open PMI again (an MPI program's
 * MPI_Init fails); and a rank that said cmd=init but exits without
 * cmd=finalize is a "bad termination" that ends the whole job.  The caller
 * finalizes unless the program it execs will (an MPI program), which may
 * then say cmd=init again on the same open fd.
 */
#ifndef DLRUN_PMIC_H
#define DLRUN_PMIC_H

#include <stddef.h>

#include "util/err.h"

/* 1 when envp (borrowed) names a PMI-1 server's connection: PMI_FD a
 * file descriptor number, with PMI_RANK and PMI_SIZE. */
int pmic_server(char **envp);

/* 1 when PMI_FD in envp (borrowed) is an open socket of this process: a
 * PMI_FD exported by an outer launcher whose descriptor did not reach us
 * (closed on the way, or a captured environment) is no channel. */
int pmic_fd_open(char **envp);

/* The value of key in one wire line (space-separated key=value words, no
 * newline) into val (len bytes): 0, or -1 when the key is absent or its
 * value does not fit. */
int pmic_field(const char *line, const char *key, char *val, size_t len);

/* Check a reply line: its cmd= is want, and rc= (when present) is 0.
 * 0 / -1 with err naming what was asked (asked) and the server's msg=. */
int pmic_reply(const char *line, const char *want, const char *asked,
               struct err *err);

/* Over envp's PMI_FD: init, learn the key-value space, rank 0 puts its
 * addr and *port under dlrun.master, barrier, every task gets them back
 * into addr (len bytes) and *port; then finalize when finalize is 1, else
 * the fd stays open for the program to init again.  Collective: every
 * task must call it.  The fd is not closed.  0 / -1 with err. */
int pmic_agree_master(char **envp, int rank, char *addr, size_t len,
                      int *port, int finalize, struct err *err);

#endif
