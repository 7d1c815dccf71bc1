/* pmix_host.h - a PMIx server hosted by dlrun (launch mode on one node,
 * or one per node in the agents), so that an MPI program's MPI_Init
 * (Open MPI 4.1 through libpmix) completes without mpirun.
 *
 * The server registers the job's namespace (size, node and process maps,
 * local peers, local and node ranks), gives each rank the variables of
 * PMIx_server_setup_fork, and across nodes implements fence as an
 * all-gather of every node's blob through dlrun's broker (and direct
 * modex through broker keys as well).  libpmix runs its own progress
 * thread; start the server after the signals dlrun watches are blocked.
 * Without HAVE_PMIX every call fails with "PMIx is not compiled in".
 */
#ifndef DLRUN_PMIX_HOST_H
#define DLRUN_PMIX_HOST_H

#include "util/envset.h"
#include "util/err.h"
#include "place/plan.h"

struct pmix_host;

struct pmix_host_opts {
    const struct plan *plan;    /* borrowed; must outlive the server */
    const int *ranks;           /* borrowed: the ranks started here */
    int nranks;
    const char *broker;         /* "HOST:PORT" of dlrun's broker when other
                                   nodes host the other ranks, else NULL */
    const char *token;          /* the broker's token (hex), borrowed */
    const char *job_id;         /* names the namespace: unique per job run */
    const char *dir;            /* the job's private folder, which the guard
                                   removes if dlrun is killed: the server's
                                   folder goes in it (NULL: in tmpdir_pick's) */
    /* Told of a failure in a thread of the server (a fence or a direct
     * modex across nodes), one line without "dlrun: "; NULL: not told.
     * Called from that thread. */
    void (*log)(void *ctx, const char *line);
    void *log_ctx;
};

/* 1 when this build can host a PMIx server. */
int pmix_host_available(void);

/* Start the server: once per process (libpmix cannot start a second
 * server after finalizing one).  Caller frees with pmix_host_stop.  NULL
 * with err. */
struct pmix_host *pmix_host_start(const struct pmix_host_opts *o,
                                  struct err *err);

/* Register the namespace of one attempt (restart count attempt) before
 * its ranks start.  0 / -1 with err. */
int pmix_host_job_begin(struct pmix_host *s, int attempt, struct err *err);

/* Register rank as a client and add what it needs to reach the server
 * (PMIX_* variables, and the OMPI_MCA_* ones Open MPI 4.1 needs under an
 * external server) to out.  0 / -1 with err. */
int pmix_host_rank_env(struct pmix_host *s, int rank, struct envset *out,
                   struct err *err);

/* Deregister the attempt's namespace (after its ranks ended). */
void pmix_host_job_end(struct pmix_host *s);

/* Finalize the server and remove its directory; NULL is a no-op. */
void pmix_host_stop(struct pmix_host *s);

#endif
