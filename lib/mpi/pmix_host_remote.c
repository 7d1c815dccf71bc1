/* pmix_host_remote.c - fence and direct modex across nodes through dlrun's
 * broker (see pmix_host_int.h).
 *
 * Keys, under "pmix.NSPACE.":
 *   fSEQ.NODE         fence number SEQ, node NODE's blob
 *   dm.NODE.n         counter of the requests to node NODE's agent
 *   dm.NODE.ID        request ID: the rank whose data is wanted
 *   dm.NODE.ID.a      the answer
 * A blob is stored as "LEN NCHUNKS STATUS" under its key and its bytes
 * under KEY.0, KEY.1, ... (the broker limits one value's size).
 * libpmix's progress thread must not block: every exchange runs in a
 * thread of its own with its own connection (a client is not shared).
 */
#ifdef HAVE_PMIX
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rendezvous/client_blob.h"
#include "rendezvous/broker_proto.h"
#include "rendezvous/client.h"
#include "mpi/pmix_host_int.h"

#define KEY_ROOM (BP_MAX_KEY + 1)
#define CONNECT_MS 10000
#define DMODEX_WAIT_MS 60000
#define POLL_MS 100

/* One exchange handed to a thread: what it needs, copied. */
struct exchange {
    char broker[300], token[80], prefix[200];
    int node;                   /* fence: this node; dmodex: the owner's */
    int nnodes;
    unsigned char *has_ranks;   /* fence: the nodes that take part */
    char *data;                 /* fence: this node's blob */
    size_t ndata;
    pmix_rank_t rank;           /* dmodex: the rank asked for */
    pmix_modex_cbfunc_t cbfunc;
    void *cbdata;
    void (*log)(void *ctx, const char *line);   /* pmix_host_opts' */
    void *log_ctx;
};

/* A failure in one of our threads: there is no caller to return it to,
 * so the server's owner is told (pmix_host_opts.log). */
static void tell(void (*log)(void *, const char *), void *ctx,
                 const char *what, const char *why)
{
    char line[600];

    if (!log)
        return;
    snprintf(line, sizeof line, "%s: %s", what, why);
    log(ctx, line);
}

static void release_buf(void *cbdata)
{
    free(cbdata);
}

static void exchange_free(struct exchange *x)
{
    free(x->has_ranks);
    free(x->data);
    free(x);
}

/* Hand the result to libpmix (which calls release_buf when done); not
 * once the server is finalized (an exchange the job's end cut short). */
static void exchange_done(struct exchange *x, int ok, char *buf, size_t len)
{
    if (!atomic_load(&pmix_host_running)) {
        free(buf);
        return;
    }
    if (!ok) {
        free(buf);
        x->cbfunc(PMIX_ERROR, NULL, 0, x->cbdata, NULL, NULL);
        return;
    }
    x->cbfunc(PMIX_SUCCESS, buf, len, x->cbdata, release_buf, buf);
}

static void *fence_thread(void *arg)
{
    struct exchange *x = arg;
    struct err err = { "" };
    struct client *c = client_connect(x->broker, x->token, CONNECT_MS, &err);
    char key[KEY_ROOM], *buf = NULL;
    size_t len = 0;
    int rc = c ? CLIENT_OK : CLIENT_ERROR, status = 0;

    snprintf(key, sizeof key, "%.199s.%d", x->prefix, x->node);
    if (rc == CLIENT_OK)
        rc = client_put_blob(c, key, x->data, x->ndata, 0, &err);
    for (int i = 0; rc == CLIENT_OK && i < x->nnodes; i++) {
        if (!x->has_ranks[i])
            continue;
        snprintf(key, sizeof key, "%.199s.%d", x->prefix, i);
        rc = client_get_blob(c, key, CLIENT_FOREVER, &buf, &len, &status,
                             &err);
    }
    if (rc != CLIENT_OK)
        tell(x->log, x->log_ctx, "PMIx fence across nodes failed", err.msg);
    client_close(c);
    exchange_done(x, rc == CLIENT_OK, buf, len);
    exchange_free(x);
    return NULL;
}

static int start_thread(void *(*fn)(void *), struct exchange *x)
{
    pthread_t t;
    pthread_attr_t a;
    int rc;

    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    rc = pthread_create(&t, &a, fn, x);
    pthread_attr_destroy(&a);
    if (rc != 0) {
        exchange_free(x);
        return -1;
    }
    return 0;
}

static struct exchange *exchange_new(const struct pmix_host *s)
{
    struct exchange *x = calloc(1, sizeof *x);

    if (!x)
        return NULL;
    snprintf(x->broker, sizeof x->broker, "%s", s->o.broker);
    snprintf(x->token, sizeof x->token, "%s", s->o.token);
    x->nnodes = s->o.plan->nnodes;
    x->log = s->o.log;
    x->log_ctx = s->o.log_ctx;
    return x;
}

/* Mark in x->has_ranks the nodes of ranks (n); set *whole when they are
 * every rank of the job, *here_only when they are all on this node. */
static void fence_nodes(const struct pmix_host *s, struct exchange *x,
                        const uint32_t *ranks, size_t n, int *whole,
                        int *here_only)
{
    const struct plan *p = s->o.plan;
    unsigned char *seen = calloc((size_t)p->nranks, 1);
    int distinct = 0;

    *here_only = 1;
    for (size_t i = 0; i < n; i++) {
        x->has_ranks[p->rank_node[ranks[i]]] = 1;
        if (p->rank_node[ranks[i]] != s->self_node)
            *here_only = 0;
        if (seen && !seen[ranks[i]]++)
            distinct++;
    }
    /* no memory to count: treat it as a part (numbered per set) */
    *whole = seen && distinct == p->nranks;
    free(seen);
}

/* Name x's keys: fences of the whole namespace count in fence_seq, a
 * part's in its own sequence.  0 / -1. */
static int fence_prefix(struct pmix_host *s, struct exchange *x,
                        const uint32_t *ranks, size_t n, int whole)
{
    char set[NAMES_SET_ID_LEN];
    unsigned seq = 0;

    if (whole) {
        /* the whole namespace: every node counts the same fences in the
         * same order */
        snprintf(x->prefix, sizeof x->prefix, "pmix.%.150s.f%u", s->nspace,
                 ++s->fence_seq);
        return 0;
    }
    names_set_id(ranks, n, set);
    if (pmix_host_next_seq(s, 'f', set, &seq) < 0)
        return -1;
    snprintf(x->prefix, sizeof x->prefix, "pmix.%.150s.fs.%s.%u", s->nspace,
             set, seq);
    return 0;
}

int pmix_host_fence_remote(struct pmix_host *s, const pmix_proc_t procs[],
                           size_t nprocs, const char *data, size_t ndata,
                           pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    struct exchange *x = exchange_new(s);
    uint32_t *ranks = NULL;
    size_t n = 0;
    int nnodes = 0, whole = 0, here_only = 0;

    if (!x || pmix_host_set_of(s, procs, nprocs, &ranks, &n, &nnodes) < 0)
        goto fail;
    x->has_ranks = calloc((size_t)s->o.plan->nnodes, 1);
    x->data = malloc(ndata + 1);
    if (!x->has_ranks || !x->data)
        goto fail;
    fence_nodes(s, x, ranks, n, &whole, &here_only);
    if (!whole && here_only) {
        /* libpmix gathered this node's part: nothing else takes part */
        free(ranks);
        exchange_free(x);
        cbfunc(PMIX_SUCCESS, data, ndata, cbdata, NULL, NULL);
        return 0;
    }
    if (fence_prefix(s, x, ranks, n, whole) < 0)
        goto fail;
    free(ranks);
    if (ndata)
        memcpy(x->data, data, ndata);
    x->ndata = ndata;
    x->node = s->self_node;
    x->cbfunc = cbfunc;
    x->cbdata = cbdata;
    return start_thread(fence_thread, x);
fail:
    free(ranks);
    if (x)
        exchange_free(x);
    return -1;
}

/* Ask: take a request number from the owner's counter, post the rank,
 * wait for the answer. */
static void *dmodex_ask_thread(void *arg)
{
    struct exchange *x = arg;
    struct err err = { "" };
    struct client *c = client_connect(x->broker, x->token, CONNECT_MS, &err);
    char key[KEY_ROOM], val[32], *buf = NULL;
    size_t len = 0;
    int64_t id = 0;
    int rc = c ? CLIENT_OK : CLIENT_ERROR, status = PMIX_ERROR;

    snprintf(key, sizeof key, "%.199s.%d.n", x->prefix, x->node);
    if (rc == CLIENT_OK)
        rc = client_add(c, key, 1, &id, &err);
    snprintf(key, sizeof key, "%.199s.%d.%" PRId64, x->prefix, x->node, id);
    snprintf(val, sizeof val, "%u", (unsigned)x->rank);
    if (rc == CLIENT_OK)
        rc = client_put(c, key, val, strlen(val), &err);
    snprintf(key, sizeof key, "%.199s.%d.%" PRId64 ".a", x->prefix, x->node,
             id);
    if (rc == CLIENT_OK)
        rc = client_get_blob(c, key, DMODEX_WAIT_MS, &buf, &len, &status,
                             &err);
    client_close(c);
    if (rc == CLIENT_OK && status != PMIX_SUCCESS) {
        free(buf);
        x->cbfunc(status, NULL, 0, x->cbdata, NULL, NULL);
    } else {
        exchange_done(x, rc == CLIENT_OK, buf, len);
    }
    exchange_free(x);
    return NULL;
}

int pmix_host_dmodex_remote(struct pmix_host *s, pmix_rank_t rank,
                            pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    const struct plan *p = s->o.plan;
    struct exchange *x = NULL;

    if (rank >= (pmix_rank_t)p->nranks)
        return -1;
    x = exchange_new(s);
    if (!x)
        return -1;
    snprintf(x->prefix, sizeof x->prefix, "pmix.%.150s.dm", s->nspace);
    x->node = p->rank_node[rank];
    x->rank = rank;
    x->cbfunc = cbfunc;
    x->cbdata = cbdata;
    return start_thread(dmodex_ask_thread, x);
}

/* The local server's answer to one request, handed from libpmix's thread
 * to the serving one. */
struct answer {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int done;
    pmix_status_t status;
    char *data;
    size_t len;
};

static void answer_cb(pmix_status_t status, char *data, size_t sz, void *cbdata)
{
    struct answer *a = cbdata;

    pthread_mutex_lock(&a->lock);
    a->status = status;
    a->data = status == PMIX_SUCCESS && sz ? malloc(sz) : NULL;
    a->len = a->data ? sz : 0;
    if (a->data)
        memcpy(a->data, data, sz);
    a->done = 1;
    pthread_cond_signal(&a->cond);
    pthread_mutex_unlock(&a->lock);
}

/* The rank in a direct modex request (val: decimal text from a peer),
 * if it is one of this node's.  0 / -1. */
static int own_rank(const struct pmix_host *s, const char *val,
                    pmix_rank_t *rank)
{
    const struct plan *p = s->o.plan;
    char *end = NULL;
    unsigned long r;

    if (!val || *val < '0' || *val > '9')
        return -1;
    errno = 0;
    r = strtoul(val, &end, 10);
    if (errno || *end || r >= (unsigned long)p->nranks ||
        p->rank_node[r] != s->self_node)
        return -1;
    *rank = (pmix_rank_t)r;
    return 0;
}

/* Answer request key (rank in val) with the local server's data. */
static int dmodex_answer(struct pmix_host *s, struct client *c,
                         const char *key, const char *val, struct err *err)
{
    struct answer a = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
                        0, PMIX_SUCCESS, NULL, 0 };
    char akey[KEY_ROOM];
    pmix_proc_t proc;
    pmix_status_t prc;
    pmix_rank_t rank = 0;
    int rc;

    /* the asker is any token holder: only a rank of this node is asked
     * for, and anything else is answered with an error, not left waiting */
    if (own_rank(s, val, &rank) < 0) {
        snprintf(akey, sizeof akey, "%.240s.a", key);
        return client_put_blob(c, akey, NULL, 0, PMIX_ERR_BAD_PARAM, err);
    }
    PMIX_LOAD_PROCID(&proc, s->nspace, rank);
    prc = PMIx_server_dmodex_request(&proc, answer_cb, &a);
    pthread_mutex_lock(&a.lock);
    while (prc == PMIX_SUCCESS && !a.done)
        pthread_cond_wait(&a.cond, &a.lock);
    pthread_mutex_unlock(&a.lock);
    if (prc != PMIX_SUCCESS)
        a.status = prc;
    snprintf(akey, sizeof akey, "%.240s.a", key);
    rc = client_put_blob(c, akey, a.data, a.len, a.status, err);
    free(a.data);
    return rc;
}

static void *dmodex_serve_thread(void *arg)
{
    struct pmix_host *s = arg;
    struct err err = { "" };
    struct client *c = client_connect(s->o.broker, s->o.token, CONNECT_MS,
                                      &err);
    char key[KEY_ROOM];
    int64_t id = 1;
    int rc = c ? CLIENT_OK : CLIENT_ERROR;

    while (!atomic_load(&s->dmodex_stop) &&
           (rc == CLIENT_OK || rc == CLIENT_TIMEOUT)) {
        void *v = NULL;
        size_t n = 0;
        snprintf(key, sizeof key, "pmix.%.150s.dm.%d.%" PRId64, s->nspace,
                 s->self_node, id);
        rc = client_get(c, key, POLL_MS, &v, &n, &err);
        if (rc == CLIENT_OK) {
            rc = dmodex_answer(s, c, key, v, &err);
            id++;
        }
        free(v);
    }
    if (rc != CLIENT_OK && rc != CLIENT_TIMEOUT)
        tell(s->o.log, s->o.log_ctx, "PMIx direct modex", err.msg);
    client_close(c);
    return NULL;
}

int pmix_host_dmodex_serve(struct pmix_host *s, struct err *err)
{
    atomic_store(&s->dmodex_stop, 0);
    if (pthread_create(&s->dmodex_thread, NULL, dmodex_serve_thread, s) != 0)
        return err_set(err, "cannot start the PMIx direct modex thread");
    s->dmodex_running = 1;
    return 0;
}

void pmix_host_dmodex_stop(struct pmix_host *s)
{
    if (!s->dmodex_running)
        return;
    atomic_store(&s->dmodex_stop, 1);
    pthread_join(s->dmodex_thread, NULL);
    s->dmodex_running = 0;
}
#endif
