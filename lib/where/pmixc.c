/* pmixc.c - PMIx client calls (see pmixc.h).
 *
 * libpmix is opened with dlopen on first use instead of being linked:
 * linked, it and what it pulls in (libevent, munge, udev) cost about a
 * millisecond of dynamic loading at every start of dlrun, and only a task
 * started by a PMIx server (srun --mpi=pmix) ever calls it.  The header
 * still gives every type and constant; the functions come from the table
 * below, typed after the header's prototypes. */
#include "where/pmixc.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "where/alloc.h"

#ifdef HAVE_PMIX
#include <pmix.h>

#include "where/pmixdl.h"

#ifndef PMIX_LIBDIR
#define PMIX_LIBDIR ""
#endif

/* The soname of the ABI the header describes (PMIx 4, libpmix.so.2). */
#define PMIX_SONAME "libpmix.so.2"

static struct {
    void *dl;                                   /* never closed */
    __typeof__(&PMIx_Init) init;
    __typeof__(&PMIx_Finalize) finalize;
    __typeof__(&PMIx_Error_string) error_string;
    __typeof__(&PMIx_Get) get;
    __typeof__(&PMIx_Put) put;
    __typeof__(&PMIx_Commit) commit;
    __typeof__(&PMIx_Fence) fence;
    __typeof__(&PMIx_Value_load) value_load;
    __typeof__(&PMIx_Value_destruct) value_destruct;
    __typeof__(&PMIx_Info_load) info_load;
    __typeof__(&PMIx_Get_version) get_version;
} pmix;

static pmix_proc_t me;
static int initialized;

/* dlsym into *slot (a function pointer of the right type). */
static int sym(void *slot, const char *name)
{
    void *f = dlsym(pmix.dl, name);

    memcpy(slot, &f, sizeof f);
    return f ? 0 : -1;
}

/* Open libpmix once (pmixdl_handle) and find the client's functions.
 * 0 / -1 with err. */
static int pmix_open(struct err *err)
{
    if (pmix.dl)
        return 0;
    pmix.dl = pmixdl_handle(err);
    if (!pmix.dl)
        return -1;
    if (sym(&pmix.init, "PMIx_Init") < 0 ||
        sym(&pmix.finalize, "PMIx_Finalize") < 0 ||
        sym(&pmix.error_string, "PMIx_Error_string") < 0 ||
        sym(&pmix.get, "PMIx_Get") < 0 || sym(&pmix.put, "PMIx_Put") < 0 ||
        sym(&pmix.commit, "PMIx_Commit") < 0 ||
        sym(&pmix.fence, "PMIx_Fence") < 0 ||
        sym(&pmix.value_load, "PMIx_Value_load") < 0 ||
        sym(&pmix.value_destruct, "PMIx_Value_destruct") < 0 ||
        sym(&pmix.info_load, "PMIx_Info_load") < 0 ||
        sym(&pmix.get_version, "PMIx_Get_version") < 0) {
        pmix.dl = NULL;     /* the handle stays open: pmixdl keeps it */
        return err_set(err, "%s lacks a PMIx function dlrun needs: %s",
                       PMIX_SONAME, dlerror());
    }
    return 0;
}

const char *pmixc_version(void)
{
    struct err err = { "" };

    return pmix_open(&err) == 0 ? pmix.get_version() : NULL;
}

/* Not under Open MPI's mpirun: its PMIx server (Open MPI 4.1) serves a
 * rank only once, so a connection from dlrun would make MPI_Init of the
 * program dlrun execs fail ("getting local rank failed").  There the
 * OMPI_* variables are read instead (alloc_mpi.c). */
int pmixc_usable(char **envp)
{
    return alloc_getenv(envp, "PMIX_NAMESPACE") != NULL &&
           alloc_getenv(envp, "PMIX_RANK") != NULL &&
           alloc_getenv(envp, "OMPI_COMM_WORLD_RANK") == NULL;
}

int pmixc_server(char **envp)
{
    return alloc_getenv(envp, "PMIX_NAMESPACE") != NULL &&
           alloc_getenv(envp, "PMIX_RANK") != NULL;
}

static int pmixc_init(struct err *err)
{
    pmix_status_t rc;

    if (initialized)
        return 0;
    if (pmix_open(err) < 0)
        return -1;
    rc = pmix.init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS)
        return err_set(err, "PMIx_Init failed: %s (PMIX_NAMESPACE is set but "
                       "the PMIx server cannot be reached)", pmix.error_string(rc));
    initialized = 1;
    return 0;
}

void pmixc_finalize(void)
{
    if (initialized)
        pmix.finalize(NULL, 0);
    initialized = 0;
}

/* PMIX_VALUE_RELEASE through the table: free a value PMIx_Get returned. */
static void value_release(pmix_value_t *v)
{
    pmix.value_destruct(v);
    free(v);
}

/* An unsigned value of KEY for proc (rank r, or PMIX_RANK_WILDCARD). */
static int get_uint(pmix_rank_t r, const char *key, unsigned *out,
                    struct err *err)
{
    pmix_proc_t p;
    pmix_value_t *v = NULL;
    pmix_status_t rc;
    int ret = 0;

    PMIX_LOAD_PROCID(&p, me.nspace, r);
    rc = pmix.get(&p, key, NULL, 0, &v);
    if (rc != PMIX_SUCCESS)
        return err_set(err, "PMIx_Get(%s): %s", key, pmix.error_string(rc));
    switch (v->type) {
    case PMIX_UINT32: *out = v->data.uint32; break;
    case PMIX_UINT16: *out = v->data.uint16; break;
    case PMIX_UINT8: *out = v->data.uint8; break;
    case PMIX_INT: *out = (unsigned)v->data.integer; break;
    case PMIX_UINT: *out = v->data.uint; break;
    default: ret = err_set(err, "PMIx_Get(%s): unexpected type %d", key, v->type);
    }
    value_release(v);
    return ret;
}

static char *get_string(pmix_rank_t r, const char *key, struct err *err)
{
    pmix_proc_t p;
    pmix_value_t *v = NULL;
    pmix_status_t rc;
    char *s = NULL;

    PMIX_LOAD_PROCID(&p, me.nspace, r);
    rc = pmix.get(&p, key, NULL, 0, &v);
    if (rc != PMIX_SUCCESS) {
        err_set(err, "PMIx_Get(%s) for rank %u: %s", key, r,
                pmix.error_string(rc));
        return NULL;
    }
    if (v->type == PMIX_STRING && v->data.string)
        s = strdup(v->data.string);
    else
        err_set(err, "PMIx_Get(%s): not a string", key);
    value_release(v);
    return s;
}

/* Nodes in order of first appearance among ranks, and each rank's node. */
static int read_hosts(struct alloc *a, unsigned size, struct err *err)
{
    a->task_node = calloc(size, sizeof *a->task_node);
    if (!a->task_node)
        return err_set(err, "out of memory");
    for (unsigned r = 0; r < size; r++) {
        char *h = get_string(r, PMIX_HOSTNAME, err);
        int i;
        if (!h)
            return -1;
        i = alloc_add_node(a, h, 1, 1, err);
        free(h);
        if (i < 0)
            return err_prefix(err, "PMIx: PMIX_HOSTNAME of rank %u", r);
        a->task_node[r] = i;
    }
    return 0;
}

int pmixc_read_alloc(struct alloc *a, struct err *err)
{
    struct alloc_task *t = &a->task;
    unsigned size = 0, lrank = 0;

    if (pmixc_init(err) < 0 ||
        get_uint(PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, &size, err) < 0 ||
        get_uint(me.rank, PMIX_LOCAL_RANK, &lrank, err) < 0)
        return -1;
    if (size == 0 || size > (1u << 24) || me.rank >= size)
        return err_set(err, "PMIx: job size %u and rank %u make no sense",
                       size, me.rank);
    if (read_hosts(a, size, err) < 0)
        return -1;
    t->size = (int)size;
    t->rank = (int)me.rank;
    t->local_rank = (int)lrank;
    t->node_rank = a->task_node[me.rank];
    t->local_size = a->nodes[t->node_rank].slots;
    t->rank_from = "PMIx rank";
    t->size_from = "PMIx " PMIX_JOB_SIZE;
    t->local_rank_from = "PMIx " PMIX_LOCAL_RANK;
    t->local_size_from = "PMIx " PMIX_HOSTNAME " of every rank";
    t->node_rank_from = "PMIx " PMIX_HOSTNAME " of every rank";
    a->has_task = 1;
    snprintf(a->why, sizeof a->why, "PMIX_NAMESPACE=%.100s (a PMIx server "
             "started this task)", me.nspace);
    a->jobid = strdup(me.nspace);
    return a->jobid ? 0 : err_set(err, "out of memory");
}

int pmixc_read_hosts(struct alloc *a, int rank, int size, struct err *err)
{
    unsigned jsize = 0;

    if (pmixc_init(err) < 0 ||
        get_uint(PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, &jsize, err) < 0)
        return -1;
    if (jsize != (unsigned)size || me.rank != (unsigned)rank)
        return err_set(err, "the launcher's PMIx server says rank %u of %u, "
                       "its variables rank %d of %d: they disagree; start "
                       "dlrun from a fresh mpirun", me.rank, jsize, rank, size);
    return read_hosts(a, jsize, err);
}

static int fence_all(struct err *err)
{
    pmix_proc_t all;
    pmix_info_t info;
    bool collect = true;
    pmix_status_t rc;

    PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
    memset(&info, 0, sizeof info);
    pmix.info_load(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    rc = pmix.fence(&all, 1, &info, 1);
    pmix.value_destruct(&info.value);
    if (rc != PMIX_SUCCESS)
        return err_set(err, "PMIx_Fence: %s", pmix.error_string(rc));
    return 0;
}

int pmixc_agree_master(int rank, char *addr, size_t len, int *port,
                       struct err *err)
{
    char buf[300];
    pmix_value_t v;
    char *got = NULL;
    int rc = -1;

    if (pmixc_init(err) < 0)
        return -1;
    if (rank == 0) {
        snprintf(buf, sizeof buf, "%s %d", addr, *port);
        pmix.value_load(&v, buf, PMIX_STRING);
        if (pmix.put(PMIX_GLOBAL, "dlrun.master", &v) != PMIX_SUCCESS ||
            pmix.commit() != PMIX_SUCCESS) {
            pmix.value_destruct(&v);
            return err_set(err, "PMIx_Put of the master address failed");
        }
        pmix.value_destruct(&v);
    }
    if (fence_all(err) < 0 || !(got = get_string(0, "dlrun.master", err)))
        goto out;
    if (sscanf(got, "%255s %d", buf, port) != 2 || strlen(buf) >= len) {
        err_set(err, "PMIx: bad master address from rank 0: %s", got);
        goto out;
    }
    strcpy(addr, buf);
    rc = 0;
out:
    free(got);
    return rc;
}

#else /* !HAVE_PMIX */

int pmixc_server(char **envp)
{
    (void)envp;
    return 0;
}

int pmixc_usable(char **envp)
{
    (void)envp;
    return 0;
}

int pmixc_read_alloc(struct alloc *a, struct err *err)
{
    (void)a;
    return err_set(err, "PMIx support is not compiled in (install "
                   "libpmix-dev and rebuild)");
}

int pmixc_read_hosts(struct alloc *a, int rank, int size, struct err *err)
{
    (void)a, (void)rank, (void)size;
    return err_set(err, "PMIx support is not compiled in (install "
                   "libpmix-dev and rebuild)");
}

int pmixc_agree_master(int rank, char *addr, size_t len, int *port,
                       struct err *err)
{
    (void)rank, (void)addr, (void)len, (void)port;
    return err_set(err, "PMIx support is not compiled in");
}

void pmixc_finalize(void)
{
}

const char *pmixc_version(void)
{
    return NULL;
}

#endif

static int pmix_detect(const struct alloc_request *req, char **envp)
{
    (void)req;
    return pmixc_usable(envp);
}

static int pmix_read(const struct alloc_request *req, char **envp,
                     struct alloc *a, struct err *err)
{
    (void)req;
    (void)envp;
    return pmixc_read_alloc(a, err);
}

const struct alloc_source alloc_source_pmix = {
    .name = "pmix", .kind = ALLOC_PMIX,
    .detect = pmix_detect, .read = pmix_read,
};
