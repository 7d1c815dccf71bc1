/* pmix_host_dyn.c - the hosted server's upcalls for MPI's dynamic
 * processes (see pmix_host_int.h): publish, lookup and unpublish on the
 * table of pmix_names.h, and connect / disconnect.
 *
 * Every upcall answers: a lookup that waits (PMIX_WAIT) is answered when
 * its names are published, at its PMIX_TIMEOUT (or LOOKUP_WAIT_S when it
 * names none), or with an error when the namespace ends.  On one node the
 * names are this table's; where other nodes host ranks (a broker), names
 * and the connects that span nodes go through the broker
 * (pmix_host_dyn_remote.c), so every node sees the same.  Connects that
 * name another namespace, and spawn, are refused at once, spawn with a
 * line to the owner (pmix_host_opts.log).
 */
#ifdef HAVE_PMIX
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/clock.h"
#include "mpi/pmix_host_int.h"
#include "mpi/pmix_names.h"

#define LOOKUP_WAIT_S 300       /* a PMIX_WAIT lookup without PMIX_TIMEOUT */
#define TICK_MS 100             /* how often deadlines are checked */

pmix_status_t pmix_host_names_status(int rc)
{
    switch (rc) {
    case -1: return PMIX_ERROR;
    case NAMES_TIMEOUT: return PMIX_ERR_TIMEOUT;
    case NAMES_OK: return PMIX_SUCCESS;
    case NAMES_DUPLICATE: return PMIX_ERR_DUPLICATE_KEY;
    case NAMES_NOT_OWNER: return PMIX_ERR_NO_PERMISSIONS;
    case NAMES_NOMEM: return PMIX_ERR_NOMEM;
    default: return PMIX_ERR_NOT_FOUND;
    }
}

/* Attributes are "pmix."-named; what a program publishes is not. */
int pmix_host_is_attribute(const char *key)
{
    return strncmp(key, "pmix.", 5) == 0;
}

/* What a value publishes: a string (with its NUL) or a byte object, the
 * types MPI_Publish_name and Open MPI's connect/accept use.  0 / -1. */
int pmix_host_value_bytes(const pmix_value_t *v, const void **p, size_t *len)
{
    if (v->type == PMIX_STRING && v->data.string) {
        *p = v->data.string;
        *len = strlen(v->data.string) + 1;
        return 0;
    }
    if (v->type == PMIX_BYTE_OBJECT) {
        *p = v->data.bo.bytes;
        *len = v->data.bo.bytes ? v->data.bo.size : 0;
        return 0;
    }
    return -1;
}

int pmix_host_first_read(const pmix_info_t info[], size_t ninfo)
{
    for (size_t i = 0; i < ninfo; i++)
        if (PMIX_CHECK_KEY(&info[i], PMIX_PERSISTENCE) &&
            info[i].value.type == PMIX_PERSIST)
            return info[i].value.data.persist == PMIX_PERSIST_FIRST_READ;
    return 0;
}

static pmix_status_t publish_locked(struct pmix_host *s,
                                    const pmix_proc_t *proc,
                                    const pmix_info_t info[], size_t ninfo)
{
    pmix_status_t rc = PMIX_SUCCESS;
    int once = pmix_host_first_read(info, ninfo);

    for (size_t i = 0; i < ninfo && rc == PMIX_SUCCESS; i++) {
        const void *p = NULL;
        size_t len = 0;
        if (pmix_host_is_attribute(info[i].key))
            continue;
        if (pmix_host_value_bytes(&info[i].value, &p, &len) < 0)
            return PMIX_ERR_NOT_SUPPORTED;
        rc = pmix_host_names_status(names_publish(s->names, proc->nspace,
                                                  proc->rank, info[i].key,
                                                  info[i].value.type, once,
                                                  p, len));
    }
    return rc;
}

pmix_status_t pmix_host_publish(const pmix_proc_t *proc,
                                const pmix_info_t info[], size_t ninfo,
                                pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    struct pmix_host *s = pmix_host_the_server();
    pmix_status_t rc;

    if (!s || !s->names)
        return PMIX_ERR_NOT_SUPPORTED;
    if (s->o.broker)
        return pmix_host_publish_remote(s, proc, info, ninfo, cbfunc, cbdata);
    pthread_mutex_lock(&s->names_lock);
    rc = publish_locked(s, proc, info, ninfo);
    pthread_mutex_unlock(&s->names_lock);
    if (rc != PMIX_SUCCESS)
        return rc;
    cbfunc(PMIX_SUCCESS, cbdata);
    return PMIX_SUCCESS;
}

/* Load hit h into pd as the type it was published with.  0 / -1 (out
 * of memory, or a record across nodes of a type never published). */
static int load_hit(pmix_pdata_t *pd, const struct names_hit *h)
{
    const char *b = h->val;
    void *copy = NULL;

    if (h->type != PMIX_STRING && h->type != PMIX_BYTE_OBJECT)
        return -1;
    if (h->type == PMIX_STRING && (h->len == 0 || b[h->len - 1] != '\0'))
        return -1;
    copy = malloc(h->len ? h->len : 1);
    if (!copy)
        return -1;
    memcpy(copy, h->val, h->len);
    PMIX_LOAD_NSPACE(pd->proc.nspace, h->nspace);
    pd->proc.rank = h->rank;
    PMIX_LOAD_KEY(pd->key, h->key);
    pd->value.type = (pmix_data_type_t)h->type;
    if (h->type == PMIX_STRING) {
        pd->value.data.string = copy;
    } else {
        pd->value.data.bo.bytes = copy;
        pd->value.data.bo.size = h->len;
    }
    return 0;
}

static void pdata_free(pmix_pdata_t *pd, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(pd[i].value.type == PMIX_STRING ? pd[i].value.data.string :
             pd[i].value.data.bo.bytes);
    free(pd);
}

/* libpmix copies the data before its callback returns. */
void pmix_host_lookup_answer(void *ctx, int status,
                             const struct names_hit *hits, size_t nhits)
{
    struct lookup_cb *l = ctx;
    pmix_pdata_t *pd = nhits ? calloc(nhits, sizeof *pd) : NULL;
    size_t n = 0;

    while (pd && n < nhits && load_hit(&pd[n], &hits[n]) == 0)
        n++;
    if (status == NAMES_OK && n < nhits)
        status = pd ? -1 : NAMES_NOMEM;
    l->cbfunc(pmix_host_names_status(status), status == NAMES_OK ? pd : NULL,
              status == NAMES_OK ? n : 0, l->cbdata);
    pdata_free(pd, n);
    free(l);
}

/* The deadline of a lookup: -1 (answer at once) without PMIX_WAIT. */
static long lookup_deadline(const pmix_info_t info[], size_t ninfo)
{
    int wait = 0;
    long timeout_s = LOOKUP_WAIT_S;

    for (size_t i = 0; i < ninfo; i++) {
        const pmix_value_t *v = &info[i].value;
        if (PMIX_CHECK_KEY(&info[i], PMIX_WAIT))
            wait = v->type != PMIX_BOOL || v->data.flag;
        else if (PMIX_CHECK_KEY(&info[i], PMIX_TIMEOUT) &&
                 v->type == PMIX_INT && v->data.integer > 0)
            timeout_s = v->data.integer;
    }
    return wait ? clock_ms() + timeout_s * 1000 : -1;
}

pmix_status_t pmix_host_lookup(const pmix_proc_t *proc, char **keys,
                               const pmix_info_t info[], size_t ninfo,
                               pmix_lookup_cbfunc_t cbfunc, void *cbdata)
{
    struct pmix_host *s = pmix_host_the_server();
    struct lookup_cb *l = NULL;
    int rc;

    (void)proc;
    if (!s || !s->names)
        return PMIX_ERR_NOT_SUPPORTED;
    if (!keys || !keys[0])
        return PMIX_ERR_BAD_PARAM;
    l = malloc(sizeof *l);
    if (!l)
        return PMIX_ERR_NOMEM;
    l->cbfunc = cbfunc;
    l->cbdata = cbdata;
    if (s->o.broker)
        return pmix_host_lookup_remote(s, keys, lookup_deadline(info, ninfo),
                                       l);
    pthread_mutex_lock(&s->names_lock);
    rc = names_lookup(s->names, keys, lookup_deadline(info, ninfo),
                      pmix_host_lookup_answer, l);
    pthread_mutex_unlock(&s->names_lock);
    if (rc < 0) {
        free(l);
        return PMIX_ERR_NOMEM;
    }
    return PMIX_SUCCESS;
}

pmix_status_t pmix_host_unpublish(const pmix_proc_t *proc, char **keys,
                                  const pmix_info_t info[], size_t ninfo,
                                  pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    struct pmix_host *s = pmix_host_the_server();
    int rc;

    (void)info;
    (void)ninfo;
    if (!s || !s->names)
        return PMIX_ERR_NOT_SUPPORTED;
    /* across nodes only named keys: this node does not know which names
     * its ranks published through the broker */
    if (s->o.broker && (!keys || !keys[0]))
        return PMIX_ERR_NOT_SUPPORTED;
    if (s->o.broker)
        return pmix_host_unpublish_remote(s, proc, keys, cbfunc, cbdata);
    pthread_mutex_lock(&s->names_lock);
    rc = names_unpublish(s->names, proc->nspace, proc->rank,
                         keys && keys[0] ? keys : NULL);
    pthread_mutex_unlock(&s->names_lock);
    if (rc != NAMES_OK)
        return pmix_host_names_status(rc);
    cbfunc(PMIX_SUCCESS, cbdata);
    return PMIX_SUCCESS;
}

/* The ranks of procs (*ranks malloc'd, caller frees; a wildcard stands
 * for every rank) and the number of nodes that host them.  0, or -1 when
 * a process is of another namespace, not a rank of the job, or memory
 * is short. */
int pmix_host_set_of(const struct pmix_host *s, const pmix_proc_t procs[],
                     size_t nprocs, uint32_t **ranks, size_t *n, int *nnodes)
{
    const struct plan *p = s->o.plan;
    unsigned char *on = calloc((size_t)p->nnodes + 1, 1);
    size_t cap = nprocs + (size_t)p->nranks;

    *n = 0;
    *nnodes = 0;
    *ranks = malloc(cap * sizeof **ranks);
    if (!on || !*ranks)
        goto fail;
    for (size_t i = 0; i < nprocs; i++) {
        pmix_rank_t r = procs[i].rank;
        if (!PMIX_CHECK_NSPACE(procs[i].nspace, s->nspace))
            goto fail;
        if (r == PMIX_RANK_WILDCARD) {
            for (int k = 0; k < p->nranks; k++)
                (*ranks)[(*n)++] = (uint32_t)k;
            continue;
        }
        if (r >= (pmix_rank_t)p->nranks)
            goto fail;
        (*ranks)[(*n)++] = r;
    }
    for (size_t i = 0; i < *n; i++)
        if (!on[p->rank_node[(*ranks)[i]]]++)
            (*nnodes)++;
    free(on);
    return 0;
fail:
    free(on);
    free(*ranks);
    *ranks = NULL;
    return -1;
}

/* A PMIX_TIMEOUT among info: its deadline (clock_ms), else -1. */
static long info_deadline(const pmix_info_t info[], size_t ninfo)
{
    for (size_t i = 0; i < ninfo; i++)
        if (PMIX_CHECK_KEY(&info[i], PMIX_TIMEOUT) &&
            info[i].value.type == PMIX_INT && info[i].value.data.integer > 0)
            return clock_ms() + info[i].value.data.integer * 1000L;
    return -1;
}

/* Connect (op 'c') or disconnect ('d').  libpmix has gathered this
 * node's participants before it calls: a set of this node's ranks alone
 * is complete; one that spans nodes meets the others through the broker.
 * Without a broker every rank is here. */
static pmix_status_t connect_op(char op, const pmix_proc_t procs[],
                                size_t nprocs, const pmix_info_t info[],
                                size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                void *cbdata)
{
    struct pmix_host *s = pmix_host_the_server();
    uint32_t *ranks = NULL;
    size_t n = 0;
    int nnodes = 0;
    pmix_status_t rc = PMIX_SUCCESS;

    if (!s || pmix_host_set_of(s, procs, nprocs, &ranks, &n, &nnodes) < 0)
        return PMIX_ERR_NOT_SUPPORTED;
    if (s->o.broker && nnodes > 1)
        rc = pmix_host_connect_remote(s, op, ranks, n, nnodes,
                                      info_deadline(info, ninfo), cbfunc,
                                      cbdata);
    else
        cbfunc(PMIX_SUCCESS, cbdata);
    free(ranks);
    return rc;
}

pmix_status_t pmix_host_connect(const pmix_proc_t procs[], size_t nprocs,
                                const pmix_info_t info[], size_t ninfo,
                                pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    return connect_op('c', procs, nprocs, info, ninfo, cbfunc, cbdata);
}

pmix_status_t pmix_host_disconnect(const pmix_proc_t procs[], size_t nprocs,
                                   const pmix_info_t info[], size_t ninfo,
                                   pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    return connect_op('d', procs, nprocs, info, ninfo, cbfunc, cbdata);
}

/* MPI_Comm_spawn: not served.  The root gets the error at once; the
 * owner is told, because Open MPI 4.1 leaves the spawning communicator's
 * other ranks waiting for that root inside MPI_Comm_spawn. */
pmix_status_t pmix_host_spawn(const pmix_proc_t *proc,
                              const pmix_info_t job_info[], size_t ninfo,
                              const pmix_app_t apps[], size_t napps,
                              pmix_spawn_cbfunc_t cbfunc, void *cbdata)
{
    struct pmix_host *s = pmix_host_the_server();
    char line[300];

    (void)job_info;
    (void)ninfo;
    (void)apps;
    (void)napps;
    (void)cbfunc;
    (void)cbdata;
    if (s && s->o.log) {
        snprintf(line, sizeof line, "rank %u called MPI_Comm_spawn, which "
                 "dlrun's PMIx server does not serve: it fails, and Open "
                 "MPI's other ranks of that communicator may wait for ever; "
                 "run a program that spawns under mpirun", proc->rank);
        s->o.log(s->o.log_ctx, line);
    }
    return PMIX_ERR_NOT_SUPPORTED;
}

static void *tick_thread(void *arg)
{
    struct pmix_host *s = arg;
    const struct timespec tick = { 0, TICK_MS * 1000000L };

    while (!atomic_load(&s->tick_stop)) {
        nanosleep(&tick, NULL);
        pthread_mutex_lock(&s->names_lock);
        names_expire(s->names, clock_ms());
        pthread_mutex_unlock(&s->names_lock);
    }
    return NULL;
}

int pmix_host_names_start(struct pmix_host *s, struct err *err)
{
    s->names = names_new();
    if (!s->names)
        return err_set(err, "out of memory");
    pthread_mutex_init(&s->names_lock, NULL);
    atomic_store(&s->tick_stop, 0);
    if (pthread_create(&s->tick_thread, NULL, tick_thread, s) != 0) {
        names_free(s->names);
        s->names = NULL;
        pthread_mutex_destroy(&s->names_lock);
        return err_set(err, "cannot start the PMIx lookup timer thread");
    }
    return 0;
}

void pmix_host_names_clear(struct pmix_host *s)
{
    if (!s->names)
        return;
    pmix_host_dyn_drain(s);
    pthread_mutex_lock(&s->names_lock);
    names_clear(s->names);
    pthread_mutex_unlock(&s->names_lock);
}

void pmix_host_names_stop(struct pmix_host *s)
{
    if (!s->names)
        return;
    atomic_store(&s->tick_stop, 1);
    pthread_join(s->tick_thread, NULL);
    pmix_host_names_clear(s);
    names_free(s->names);
    s->names = NULL;
    pthread_mutex_destroy(&s->names_lock);
}
#endif
