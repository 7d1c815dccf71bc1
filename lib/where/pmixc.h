/* pmixc.h - the little of the PMIx client API dlrun uses: read who this
 * task is, and let rank 0 publish the rendezvous address to all tasks.
 *
 * Compiled to stubs that fail when PMIx is not compiled in (HAVE_PMIX).
 * libpmix itself is loaded (dlopen) on first use, not at every start.
 * The connection is opened on first use and must be closed with
 * pmixc_finalize() before exec, so that the program can open its own.
 */
#ifndef DLRUN_PMIXC_H
#define DLRUN_PMIXC_H

#include <stddef.h>

#include "util/err.h"

struct alloc;

/* 1 when PMIx is compiled in and envp carries a PMIx server's namespace. */
int pmixc_usable(char **envp);

/* 1 when PMIx is compiled in and envp carries a PMIx server's namespace
 * and rank, mpirun's too: a server dlrun could agree the rendezvous
 * through (--pmix-rendezvous). */
int pmixc_server(char **envp);

/* Fill a (zeroed by the caller) with this task and every rank's host.
 * 0 / -1 with err. */
int pmixc_read_alloc(struct alloc *a, struct err *err);

/* Under a launcher that also sets its own rank variables (mpirun): every
 * rank's host from the launcher's PMIx server into a (no nodes yet):
 * nodes in order of first appearance, one slot per rank, and
 * a->task_node.  rank and size are the launcher's variables, checked
 * against the server's.  Only for a dlrun that will not exec the program
 * in place (the server serves a rank once).  0 / -1 with err. */
int pmixc_read_hosts(struct alloc *a, int rank, int size, struct err *err);

/* Rank 0 passes its address and port; every task gets rank 0's back in
 * addr (len bytes) and *port.  Collective: every task must call it.
 * 0 / -1 with err. */
int pmixc_agree_master(int rank, char *addr, size_t len, int *port,
                       struct err *err);

/* Close the connection if open (idempotent). */
void pmixc_finalize(void);

/* The PMIx library's version string (borrowed, static), loading the
 * library if needed; NULL when PMIx is not compiled in or cannot be
 * loaded. */
const char *pmixc_version(void);

#endif
