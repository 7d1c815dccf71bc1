/* pmix_host.c - see pmix_host.h. */
#include "mpi/pmix_host.h"

#include <stdlib.h>

#ifndef HAVE_PMIX

int pmix_host_available(void) { return 0; }

struct pmix_host *pmix_host_start(const struct pmix_host_opts *o,
                                  struct err *err)
{
    (void)o;
    err_set(err, "PMIx is not compiled in (install libpmix-dev and rebuild "
            "dlrun)");
    return NULL;
}

int pmix_host_job_begin(struct pmix_host *s, int attempt, struct err *err)
{
    (void)s;
    (void)attempt;
    return err_set(err, "PMIx is not compiled in");
}

int pmix_host_rank_env(struct pmix_host *s, int rank, struct envset *out,
                   struct err *err)
{
    (void)s;
    (void)rank;
    (void)out;
    return err_set(err, "PMIx is not compiled in");
}

void pmix_host_job_end(struct pmix_host *s) { (void)s; }
void pmix_host_stop(struct pmix_host *s) { (void)s; }

#else

#include <ctype.h>
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "util/privdirs.h"
#include "util/tmpdir.h"
#include "place/hwlocdl.h"
#include "mpi/pmix_host_int.h"

/* libpmix calls the host functions with no pointer of ours: one server
 * per process, as libpmix allows. */
static struct pmix_host *the_server;
/* libpmix cannot initialize a server again after finalizing one (it
 * aborts on a stale descriptor): one per process lifetime. */
static int server_started;
atomic_int pmix_host_running;

int pmix_host_available(void) { return 1; }

struct pmix_host *pmix_host_the_server(void) { return the_server; }

/* A libpmix operation that completes through a callback, waited for. */
struct waiter {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int done;
    pmix_status_t status;
};

static void waiter_init(struct waiter *w)
{
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->cond, NULL);
    w->done = 0;
    w->status = PMIX_SUCCESS;
}

static void op_done(pmix_status_t status, void *cbdata)
{
    struct waiter *w = cbdata;

    pthread_mutex_lock(&w->lock);
    w->status = status;
    w->done = 1;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->lock);
}

/* rc from the call that takes op_done: wait when it will be called. */
static pmix_status_t waiter_wait(struct waiter *w, pmix_status_t rc)
{
    if (rc == PMIX_SUCCESS) {
        pthread_mutex_lock(&w->lock);
        while (!w->done)
            pthread_cond_wait(&w->cond, &w->lock);
        pthread_mutex_unlock(&w->lock);
        rc = w->status;
    } else if (rc == PMIX_OPERATION_SUCCEEDED) {
        rc = PMIX_SUCCESS;
    }
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->cond);
    return rc;
}

/* Fence: every local rank contributed (data: their packed blobs).  On one
 * node that is everybody; across nodes every node's blob is gathered
 * through the broker in a thread (libpmix's must not block). */
static pmix_status_t host_fence(const pmix_proc_t procs[], size_t nprocs,
                                const pmix_info_t info[], size_t ninfo,
                                char *data, size_t ndata,
                                pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    struct pmix_host *s = the_server;

    (void)info;
    (void)ninfo;
    if (!s || !s->o.broker) {
        cbfunc(PMIX_SUCCESS, data, ndata, cbdata, NULL, NULL);
        return PMIX_SUCCESS;
    }
    return pmix_host_fence_remote(s, procs, nprocs, data, ndata, cbfunc,
                                  cbdata) == 0 ?
           PMIX_SUCCESS : PMIX_ERROR;
}

static pmix_status_t host_dmodex(const pmix_proc_t *proc,
                                 const pmix_info_t info[], size_t ninfo,
                                 pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    struct pmix_host *s = the_server;

    (void)info;
    (void)ninfo;
    if (!s || !s->o.broker)
        return PMIX_ERR_NOT_FOUND;
    return pmix_host_dmodex_remote(s, proc->rank, cbfunc, cbdata) == 0 ?
           PMIX_SUCCESS : PMIX_ERROR;
}

/* MPI_Abort: the rank exits with its code once this returns, and dlrun's
 * supervisor ends the job with that code. */
static pmix_status_t host_abort(const pmix_proc_t *proc, void *server_object,
                                int status, const char msg[],
                                pmix_proc_t procs[], size_t nprocs,
                                pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void)proc;
    (void)server_object;
    (void)status;
    (void)msg;
    (void)procs;
    (void)nprocs;
    (void)cbfunc;
    (void)cbdata;
    return PMIX_OPERATION_SUCCEEDED;
}

/* A client connected or finalized: nothing to do (the supervisor sees
 * the process itself); one function serves both callbacks. */
static pmix_status_t host_client_event(const pmix_proc_t *proc, void *obj,
                                       pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void)proc;
    (void)obj;
    (void)cbfunc;
    (void)cbdata;
    return PMIX_OPERATION_SUCCEEDED;
}

static pmix_server_module_t host_module = {
    .client_connected = host_client_event,
    .client_finalized = host_client_event,
    .abort = host_abort,
    .fence_nb = host_fence,
    .direct_modex = host_dmodex,
    .publish = pmix_host_publish,
    .lookup = pmix_host_lookup,
    .unpublish = pmix_host_unpublish,
    .connect = pmix_host_connect,
    .disconnect = pmix_host_disconnect,
    .spawn = pmix_host_spawn,
};

static int remove_entry(const char *path, const struct stat *st, int flag,
                        struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

/* One topology for the server and every rank: Open MPI 4.1 adopts the XML
 * of PMIX_LOCAL_TOPO instead of discovering the machine in each rank, and
 * libpmix does not load its own.  Without I/O devices: their discovery
 * (PCI, OpenCL, GL plugins) costs more than the rest together. */
static int load_topology(struct pmix_host *s, struct err *err)
{
    int len = 0;

    if (hwlocdl_open(err) < 0)      /* a missing library said plainly */
        return -1;
    if (hwloc_topology_init(&s->topo) < 0)
        return err_set(err, "hwloc_topology_init failed");
    if (hwloc_topology_set_io_types_filter(s->topo,
                                           HWLOC_TYPE_FILTER_KEEP_NONE) < 0 ||
        hwloc_topology_load(s->topo) < 0 ||
        hwloc_topology_export_xmlbuffer(s->topo, &s->topo_xml, &len, 0) < 0)
        return err_set(err, "cannot read this machine's topology (hwloc)");
    return 0;
}

static void free_topology(struct pmix_host *s)
{
    if (s->topo_xml)
        hwloc_free_xmlbuffer(s->topo, s->topo_xml);
    if (s->topo)
        hwloc_topology_destroy(s->topo);
    s->topo_xml = NULL;
    s->topo = NULL;
}

/* PMIx_server_init with our directory and topology. */
static int server_init(struct pmix_host *s, struct err *err)
{
    pmix_topology_t topo = { .source = "hwloc", .topology = s->topo };
    pmix_info_t info[3];
    pmix_status_t rc;

    if (pmixdl_server(err) < 0)
        return -1;
    PMIX_INFO_LOAD(&info[0], PMIX_SERVER_TMPDIR, s->dir, PMIX_STRING);
    PMIX_INFO_LOAD(&info[1], PMIX_SYSTEM_TMPDIR, s->dir, PMIX_STRING);
    PMIX_INFO_LOAD(&info[2], PMIX_TOPOLOGY2, &topo, PMIX_TOPO);
    rc = PMIx_server_init(&host_module, info, 3);
    atomic_store(&pmix_host_running, rc == PMIX_SUCCESS);
    for (int i = 0; i < 3; i++)
        PMIX_INFO_DESTRUCT(&info[i]);
    if (rc != PMIX_SUCCESS)
        return err_set(err, "PMIx_server_init failed: %s",
                       PMIx_Error_string(rc));
    return 0;
}

struct pmix_host *pmix_host_start(const struct pmix_host_opts *o,
                                  struct err *err)
{
    struct pmix_host *s = NULL;
    char tmp[PATH_MAX - 32];

    if (server_started) {
        err_set(err, "libpmix serves one server per process; this one "
                "already started it");
        return NULL;
    }
    s = calloc(1, sizeof *s);
    if (!s) {
        err_set(err, "out of memory");
        return NULL;
    }
    s->o = *o;
    snprintf(s->job_id, sizeof s->job_id, "%s", o->job_id);
    /* Open MPI's connect/accept joins "JOBID:NSPACE" pairs with ':' and
     * splits them again: a broker's "HOST:PORT" in the namespace broke
     * it.  Every agent maps the id alike. */
    for (char *c = s->job_id; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '.' && *c != '-' &&
            *c != '_')
            *c = '-';
    s->o.job_id = s->job_id;
    s->self_node = o->plan->rank_node[o->ranks[0]];
    if (o->dir && strlen(o->dir) < sizeof tmp)
        snprintf(tmp, sizeof tmp, "%s", o->dir);
    else if (tmpdir_pick(tmp, sizeof tmp, sizeof tmp - 1, err) < 0) {
        free(s);
        return NULL;
    }
    snprintf(s->dir, sizeof s->dir, "%s/dlrun-pmix.XXXXXX", tmp);
    if (!privdirs_mkdtemp(s->dir)) {
        err_set(err, "cannot create the PMIx server's directory %s: %s",
                s->dir, strerror(errno));
        free(s);
        return NULL;
    }
    the_server = s;
    server_started = 1;
    if (load_topology(s, err) < 0 || pmix_host_names_start(s, err) < 0 ||
        server_init(s, err) < 0) {
        the_server = NULL;
        pmix_host_names_stop(s);
        free_topology(s);
        privdirs_forget(s->dir);
        nftw(s->dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
        free(s);
        return NULL;
    }
    return s;
}

int pmix_host_job_begin(struct pmix_host *s, int attempt, struct err *err)
{
    struct waiter w;
    pmix_info_t *info = NULL;
    size_t ninfo = 0;
    pmix_status_t rc;

    snprintf(s->nspace, sizeof s->nspace, "dlrun.%s.%d", s->job_id,
             attempt);
    s->fence_seq = 0;
    if (pmix_host_job_info(s, &info, &ninfo, err) < 0)
        return -1;
    waiter_init(&w);
    rc = waiter_wait(&w, PMIx_server_register_nspace(s->nspace, s->o.nranks,
                                                     info, ninfo, op_done, &w));
    PMIX_INFO_FREE(info, ninfo);
    if (rc != PMIX_SUCCESS)
        return err_set(err, "PMIx_server_register_nspace: %s",
                       PMIx_Error_string(rc));
    s->registered = 1;
    if (s->o.broker && pmix_host_dmodex_serve(s, err) < 0) {
        pmix_host_job_end(s);
        return -1;
    }
    return 0;
}

static int add_setup_fork(const pmix_proc_t *proc, struct envset *out,
                          struct err *err)
{
    char **env = NULL;
    pmix_status_t rc = PMIx_server_setup_fork(proc, &env);
    int ret = 0;

    if (rc != PMIX_SUCCESS)
        return err_set(err, "PMIx_server_setup_fork(rank %u): %s", proc->rank,
                       PMIx_Error_string(rc));
    for (char **e = env; e && *e && ret == 0; e++) {
        char *eq = strchr(*e, '=');
        if (!eq)
            continue;
        *eq = '\0';
        ret = envset_set(out, *e, eq + 1, err, "the PMIx server (--mpi=pmix)");
    }
    for (char **e = env; e && *e; e++)
        free(*e);
    free(env);
    return ret;
}

int pmix_host_rank_env(struct pmix_host *s, int rank, struct envset *out,
                   struct err *err)
{
    struct waiter w;
    pmix_proc_t proc;
    pmix_status_t rc;

    PMIX_LOAD_PROCID(&proc, s->nspace, (pmix_rank_t)rank);
    waiter_init(&w);
    rc = waiter_wait(&w, PMIx_server_register_client(&proc, getuid(), getgid(),
                                                     NULL, op_done, &w));
    if (rc != PMIX_SUCCESS)
        return err_set(err, "PMIx_server_register_client(rank %d): %s", rank,
                       PMIx_Error_string(rc));
    if (add_setup_fork(&proc, out, err) < 0)
        return -1;
    return pmix_host_ompi_env(s, out, err);
}

void pmix_host_job_end(struct pmix_host *s)
{
    struct waiter w;

    if (!s || !s->registered)
        return;
    pmix_host_dmodex_stop(s);
    pmix_host_names_clear(s);
    waiter_init(&w);
    PMIx_server_deregister_nspace(s->nspace, op_done, &w);
    waiter_wait(&w, PMIX_SUCCESS);
    s->registered = 0;
}

void pmix_host_stop(struct pmix_host *s)
{
    if (!s)
        return;
    pmix_host_job_end(s);
    pmix_host_names_stop(s);
    atomic_store(&pmix_host_running, 0);
    PMIx_server_finalize();
    the_server = NULL;
    free_topology(s);
    privdirs_forget(s->dir);
    nftw(s->dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
    free(s);
}

#endif
