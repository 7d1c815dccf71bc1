/* pmix_host_int.h - the parts of the hosted PMIx server shared by its
 * files (pmix_host.c: the server and the ranks; pmix_host_info.c: what
 * the namespace says; pmix_host_remote.c: fence and direct modex across
 * nodes through the broker; pmix_host_dyn.c: names and connections;
 * pmix_host_dyn_remote.c: those across nodes).  Only with HAVE_PMIX. */
#ifndef DLRUN_PMIX_HOST_INT_H
#define DLRUN_PMIX_HOST_INT_H

#include <hwloc.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <pmix.h>
#include <pmix_server.h>

#include "where/pmixdl.h"

/* libpmix is opened with dlopen (pmixdl.h): its functions, those the
 * PMIx macros call included, are reached through the table. */
#define PMIx_Error_string pmixdl.Error_string
#define PMIx_Info_load pmixdl.Info_load
#define PMIx_Value_destruct pmixdl.Value_destruct
#define PMIx_generate_regex pmixdl.generate_regex
#define PMIx_generate_ppn pmixdl.generate_ppn
#define PMIx_server_init pmixdl.server_init
#define PMIx_server_finalize pmixdl.server_finalize
#define PMIx_server_register_nspace pmixdl.server_register_nspace
#define PMIx_server_deregister_nspace pmixdl.server_deregister_nspace
#define PMIx_server_register_client pmixdl.server_register_client
#define PMIx_server_setup_fork pmixdl.server_setup_fork
#define PMIx_server_dmodex_request pmixdl.server_dmodex_request

#include "mpi/pmix_host.h"
#include "mpi/pmix_names.h"
#include "mpi/pmix_names_remote.h"

/* How many connects (op 'c') or disconnects ('d') of one process set
 * this node has served in the namespace (pmix_host_dyn_remote.c). */
struct dyn_seq {
    char op;
    char set[NAMES_SET_ID_LEN];
    unsigned seq;
};

struct pmix_host {
    struct pmix_host_opts o;
    char dir[PATH_MAX];             /* the server's rendezvous directory */
    char nspace[PMIX_MAX_NSLEN + 1];
    char job_id[80];                /* o.job_id, copied */
    int registered;
    unsigned fence_seq;             /* fences so far (libpmix's thread) */
    int self_node;                  /* plan node of the ranks here */
    hwloc_topology_t topo;          /* this node without I/O devices */
    char *topo_xml;                 /* its XML for the ranks (hwloc frees) */
    pthread_t dmodex_thread;        /* answers other nodes' requests */
    int dmodex_running;
    atomic_int dmodex_stop;
    struct pmix_names *names;       /* published names (pmix_host_dyn.c) */
    pthread_mutex_t names_lock;     /* held around every use of names */
    pthread_t tick_thread;          /* expires waiting lookups */
    atomic_int tick_stop;
    atomic_uint dyn_epoch;          /* namespaces ended: stops the waits of
                                       pmix_host_dyn_remote.c's threads */
    atomic_int dyn_threads;         /* those threads running now */
    struct dyn_seq *seqs;           /* under names_lock */
    size_t nseqs;
};

/* The server libpmix's upcalls serve (one per process), or NULL. */
struct pmix_host *pmix_host_the_server(void);

/* The upcalls of MPI's dynamic processes (pmix_host_dyn.c): publish,
 * lookup and unpublish names, and connect / disconnect (one function). */
pmix_status_t pmix_host_publish(const pmix_proc_t *proc,
                                const pmix_info_t info[], size_t ninfo,
                                pmix_op_cbfunc_t cbfunc, void *cbdata);
pmix_status_t pmix_host_lookup(const pmix_proc_t *proc, char **keys,
                               const pmix_info_t info[], size_t ninfo,
                               pmix_lookup_cbfunc_t cbfunc, void *cbdata);
pmix_status_t pmix_host_unpublish(const pmix_proc_t *proc, char **keys,
                                  const pmix_info_t info[], size_t ninfo,
                                  pmix_op_cbfunc_t cbfunc, void *cbdata);
pmix_status_t pmix_host_connect(const pmix_proc_t procs[], size_t nprocs,
                                const pmix_info_t info[], size_t ninfo,
                                pmix_op_cbfunc_t cbfunc, void *cbdata);
pmix_status_t pmix_host_disconnect(const pmix_proc_t procs[], size_t nprocs,
                                   const pmix_info_t info[], size_t ninfo,
                                   pmix_op_cbfunc_t cbfunc, void *cbdata);
/* Refuses MPI_Comm_spawn at once, telling the owner (o.log) why. */
pmix_status_t pmix_host_spawn(const pmix_proc_t *proc,
                              const pmix_info_t job_info[], size_t ninfo,
                              const pmix_app_t apps[], size_t napps,
                              pmix_spawn_cbfunc_t cbfunc, void *cbdata);

/* pmix_host_dyn.c's helpers for pmix_host_dyn_remote.c: a NAMES_* code
 * (-1: an error) as libpmix's status; 1 for a "pmix."-named attribute;
 * the bytes a published value carries (0 / -1: a type not published). */
pmix_status_t pmix_host_names_status(int rc);
int pmix_host_is_attribute(const char *key);
/* 1 when a publish's info asks PMIX_PERSIST_FIRST_READ: the names go
 * with the first lookup that finds them. */
int pmix_host_first_read(const pmix_info_t info[], size_t ninfo);
int pmix_host_value_bytes(const pmix_value_t *v, const void **p,
                          size_t *len);

/* One lookup's way back to libpmix. */
struct lookup_cb {
    pmix_lookup_cbfunc_t cbfunc;
    void *cbdata;
};

/* Answer lookup l (then freed) with status (a NAMES_* code, or -1) and
 * hits (borrowed; a hit of a type that was never published, or a string
 * without its NUL, is an error). */
void pmix_host_lookup_answer(void *l, int status,
                             const struct names_hit *hits, size_t nhits);

/* Across nodes (pmix_host_dyn_remote.c), each served in a thread through
 * the broker and answered through the callback given; PMIX_SUCCESS, or an
 * error at once (then no callback).  lookup_remote takes l (freed by its
 * answer) and a deadline (clock_ms; -1: answer at once); connect_remote
 * serves op 'c' (connect) or 'd' (disconnect) of the job's ranks (n,
 * borrowed) on nnodes nodes, waiting until deadline_ms (-1: no limit). */
pmix_status_t pmix_host_publish_remote(struct pmix_host *s,
                                       const pmix_proc_t *proc,
                                       const pmix_info_t info[], size_t ninfo,
                                       pmix_op_cbfunc_t cbfunc, void *cbdata);
pmix_status_t pmix_host_unpublish_remote(struct pmix_host *s,
                                         const pmix_proc_t *proc,
                                         char **keys,
                                         pmix_op_cbfunc_t cbfunc,
                                         void *cbdata);
pmix_status_t pmix_host_lookup_remote(struct pmix_host *s, char **keys,
                                      long deadline_ms, struct lookup_cb *l);
pmix_status_t pmix_host_connect_remote(struct pmix_host *s, char op,
                                       const uint32_t *ranks, size_t n,
                                       int nnodes, long deadline_ms,
                                       pmix_op_cbfunc_t cbfunc, void *cbdata);

/* The ranks of procs (*ranks malloc'd, caller frees; a wildcard stands
 * for every rank) and how many nodes host them.  0, or -1 when a process
 * is of another namespace or not a rank of the job, or memory is short. */
int pmix_host_set_of(const struct pmix_host *s, const pmix_proc_t procs[],
                     size_t nprocs, uint32_t **ranks, size_t *n, int *nnodes);

/* The number of this node's next operation op ('c' connect, 'd'
 * disconnect, 'f' fence) of process set set (names_set_id): every node
 * sees one set's operations in the same order.  0 / -1 (no memory). */
int pmix_host_next_seq(struct pmix_host *s, char op, const char *set,
                       unsigned *seq);

/* End every wait of those threads (the namespace ended) and return once
 * each has answered; forget the connect counts. */
void pmix_host_dyn_drain(struct pmix_host *s);

/* The name table and its timer thread: started with the server, cleared
 * (every waiting lookup answered with an error) when a namespace ends,
 * stopped before libpmix is finalized.  0 / -1 with err. */
int pmix_host_names_start(struct pmix_host *s, struct err *err);
void pmix_host_names_clear(struct pmix_host *s);
void pmix_host_names_stop(struct pmix_host *s);

/* 1 from PMIx_server_init to PMIx_server_finalize: the exchange threads
 * must not call into libpmix after it. */
extern atomic_int pmix_host_running;

/* The namespace's job, node and process information (caller frees with
 * PMIX_INFO_FREE).  0 / -1 with err. */
int pmix_host_job_info(const struct pmix_host *s, pmix_info_t **info,
                       size_t *ninfo, struct err *err);

/* What Open MPI 4.1 needs under a server it did not start. */
int pmix_host_ompi_env(const struct pmix_host *s, struct envset *out,
                       struct err *err);

/* The fence of procs: gather data (ndata bytes, copied) of every node
 * that hosts one of them through the broker in a thread, then call
 * cbfunc; a fence of this node's ranks alone is answered at once.
 * Fences of the whole namespace are numbered in one sequence, those of
 * a part of it (Open MPI's MPI_Comm_disconnect) in one per set.  0 / -1
 * (cbfunc is then not called). */
int pmix_host_fence_remote(struct pmix_host *s, const pmix_proc_t procs[],
                           size_t nprocs, const char *data, size_t ndata,
                           pmix_modex_cbfunc_t cbfunc, void *cbdata);

/* Ask the agent of rank's node for its data, in a thread, then call
 * cbfunc.  0 / -1 (cbfunc is then not called). */
int pmix_host_dmodex_remote(struct pmix_host *s, pmix_rank_t rank,
                            pmix_modex_cbfunc_t cbfunc, void *cbdata);

struct client;

/* Start / stop the thread that answers other nodes' direct modex
 * requests for the ranks here.  0 / -1 with err. */
int pmix_host_dmodex_serve(struct pmix_host *s, struct err *err);
void pmix_host_dmodex_stop(struct pmix_host *s);

#endif
