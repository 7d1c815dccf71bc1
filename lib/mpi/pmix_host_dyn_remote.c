/* pmix_host_dyn_remote.c - the dynamic-process upcalls where other nodes
 * host ranks (see pmix_host_int.h): publish, lookup, unpublish, connect
 * and disconnect through the broker (pmix_names_remote.h).
 *
 * libpmix's progress thread must not block: each request runs in a
 * detached thread with its own broker connection and answers through
 * libpmix's callback.  The threads are counted; the end of a namespace
 * (a new epoch) stops their waits, and pmix_host_dyn_drain waits until
 * every one has answered, so none calls into libpmix after it is
 * finalized.
 */
#ifdef HAVE_PMIX
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rendezvous/client.h"
#include "mpi/pmix_host_int.h"
#include "mpi/pmix_names_remote.h"

#define CONNECT_MS 10000

enum dyn_kind { DYN_PUBLISH, DYN_LOOKUP, DYN_UNPUBLISH, DYN_CONNECT };

/* One published name, copied out of libpmix's info. */
struct dyn_item {
    char *key;
    int type;
    void *val;
    size_t len;
};

/* One request handed to a thread: what it needs, copied. */
struct dyn_op {
    struct pmix_host *s;
    enum dyn_kind kind;
    unsigned epoch;             /* s->dyn_epoch when it came */
    char prefix[200];
    char nspace[PMIX_MAX_NSLEN + 1];
    uint32_t rank;
    struct dyn_item *items;     /* publish */
    size_t nitems;
    int once;                   /* publish: PMIX_PERSIST_FIRST_READ */
    char **keys;                /* lookup, unpublish: NULL-terminated */
    long deadline_ms;           /* lookup, connect; -1: none */
    char op;                    /* connect: 'c' or 'd' */
    char set[NAMES_SET_ID_LEN];
    unsigned seq;
    int nnodes;
    pmix_op_cbfunc_t opcb;
    struct lookup_cb *look;     /* lookup: libpmix's way back */
    void *cbdata;
};

static void op_free(struct dyn_op *o)
{
    for (size_t i = 0; i < o->nitems; i++) {
        free(o->items[i].key);
        free(o->items[i].val);
    }
    free(o->items);
    for (size_t i = 0; o->keys && o->keys[i]; i++)
        free(o->keys[i]);
    free(o->keys);
    free(o->look);
    free(o);
}

/* A wait stops when its namespace ended or the server stops. */
static int op_stopped(void *ctx)
{
    const struct dyn_op *o = ctx;

    return atomic_load(&o->s->dyn_epoch) != o->epoch ||
           atomic_load(&o->s->tick_stop);
}

static void tell(const struct pmix_host *s, const char *what,
                 const struct err *err)
{
    char line[700];

    if (!s->o.log)
        return;
    snprintf(line, sizeof line, "%s across nodes: %s", what, err->msg);
    s->o.log(s->o.log_ctx, line);
}

static pmix_status_t run_publish(struct dyn_op *o, struct client *c,
                                 struct err *err)
{
    int rc = NAMES_OK;

    for (size_t i = 0; i < o->nitems && rc == NAMES_OK; i++)
        rc = names_remote_publish(c, o->prefix, o->nspace, o->rank,
                                  o->items[i].key, o->items[i].type,
                                  o->once, o->items[i].val, o->items[i].len,
                                  err);
    return rc < 0 ? PMIX_ERROR : pmix_host_names_status(rc);
}

static pmix_status_t run_unpublish(struct dyn_op *o, struct client *c,
                                   struct err *err)
{
    int rc = NAMES_OK, one;

    /* like the table's: every key goes, the first refusal is told */
    for (size_t i = 0; o->keys[i] && rc >= 0; i++) {
        one = names_remote_unpublish(c, o->prefix, o->nspace, o->rank,
                                     o->keys[i], err);
        if (one != NAMES_OK && rc == NAMES_OK)
            rc = one;
    }
    return rc < 0 ? PMIX_ERROR : pmix_host_names_status(rc);
}

static void run_lookup(struct dyn_op *o, struct client *c, struct err *err)
{
    struct names_found f = { 0 };
    int rc = c ? names_remote_lookup(c, o->prefix, o->keys, o->deadline_ms,
                                     op_stopped, o, &f, err) : -1;

    if (rc < 0)
        tell(o->s, "PMIx lookup", err);
    pmix_host_lookup_answer(o->look, rc, f.hits, f.n);
    o->look = NULL;     /* freed by the answer */
    names_found_free(&f);
}

static pmix_status_t run_connect(struct dyn_op *o, struct client *c,
                                 struct err *err)
{
    int rc = names_remote_connect(c, o->prefix, o->op, o->set, o->seq,
                                  o->nnodes, o->deadline_ms, op_stopped, o,
                                  err);

    if (rc == NAMES_TIMEOUT)
        return PMIX_ERR_TIMEOUT;
    return rc == NAMES_OK ? PMIX_SUCCESS : PMIX_ERROR;
}

static void *dyn_thread(void *arg)
{
    struct dyn_op *o = arg;
    struct pmix_host *s = o->s;
    struct err err = { "" };
    struct client *c = client_connect(s->o.broker, s->o.token, CONNECT_MS,
                                      &err);
    pmix_status_t st = PMIX_ERROR;

    if (o->kind == DYN_LOOKUP) {
        run_lookup(o, c, &err);
    } else {
        if (c && o->kind == DYN_PUBLISH)
            st = run_publish(o, c, &err);
        else if (c && o->kind == DYN_UNPUBLISH)
            st = run_unpublish(o, c, &err);
        else if (c)
            st = run_connect(o, c, &err);
        if (st == PMIX_ERROR && err.msg[0])
            tell(s, o->kind == DYN_CONNECT ? "PMIx connect" : "PMIx publish",
                 &err);
        o->opcb(st, o->cbdata);
    }
    client_close(c);
    op_free(o);
    atomic_fetch_sub(&s->dyn_threads, 1);
    return NULL;
}

/* Run o in a thread.  PMIX_SUCCESS (o is the thread's), or an error (o
 * freed, no callback). */
static pmix_status_t start(struct dyn_op *o)
{
    struct pmix_host *s = o->s;
    pthread_attr_t a;
    pthread_t t;
    int rc;

    atomic_fetch_add(&s->dyn_threads, 1);
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    rc = pthread_create(&t, &a, dyn_thread, o);
    pthread_attr_destroy(&a);
    if (rc == 0)
        return PMIX_SUCCESS;
    atomic_fetch_sub(&s->dyn_threads, 1);
    op_free(o);
    return PMIX_ERR_OUT_OF_RESOURCE;
}

static struct dyn_op *op_new(struct pmix_host *s, enum dyn_kind kind,
                             const pmix_proc_t *proc)
{
    struct dyn_op *o = calloc(1, sizeof *o);

    if (!o)
        return NULL;
    o->s = s;
    o->kind = kind;
    o->epoch = atomic_load(&s->dyn_epoch);
    o->deadline_ms = -1;
    snprintf(o->prefix, sizeof o->prefix, "pmix.%.150s", s->nspace);
    if (proc) {
        PMIX_LOAD_NSPACE(o->nspace, proc->nspace);
        o->rank = proc->rank;
    }
    return o;
}

/* Copy keys (NULL-terminated) into o.  0 / -1. */
static int copy_keys(struct dyn_op *o, char **keys)
{
    size_t n = 0;

    while (keys[n])
        n++;
    o->keys = calloc(n + 1, sizeof *o->keys);
    if (!o->keys)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (!(o->keys[i] = strdup(keys[i])))
            return -1;
    return 0;
}

/* Copy the names to publish (not the attributes) into o.  PMIX_SUCCESS,
 * or the error to answer at once. */
static pmix_status_t copy_items(struct dyn_op *o, const pmix_info_t info[],
                                size_t ninfo)
{
    o->items = calloc(ninfo ? ninfo : 1, sizeof *o->items);
    if (!o->items)
        return PMIX_ERR_NOMEM;
    o->once = pmix_host_first_read(info, ninfo);
    for (size_t i = 0; i < ninfo; i++) {
        struct dyn_item *it = &o->items[o->nitems];
        const void *p = NULL;
        size_t len = 0;
        if (pmix_host_is_attribute(info[i].key))
            continue;
        if (pmix_host_value_bytes(&info[i].value, &p, &len) < 0)
            return PMIX_ERR_NOT_SUPPORTED;
        it->key = strdup(info[i].key);
        it->val = malloc(len ? len : 1);
        if (!it->key || !it->val)
            return PMIX_ERR_NOMEM;
        memcpy(it->val, p, len);
        it->len = len;
        it->type = info[i].value.type;
        o->nitems++;
    }
    return PMIX_SUCCESS;
}

pmix_status_t pmix_host_publish_remote(struct pmix_host *s,
                                       const pmix_proc_t *proc,
                                       const pmix_info_t info[], size_t ninfo,
                                       pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    struct dyn_op *o = op_new(s, DYN_PUBLISH, proc);
    pmix_status_t rc = o ? copy_items(o, info, ninfo) : PMIX_ERR_NOMEM;

    if (rc != PMIX_SUCCESS) {
        if (o)
            op_free(o);
        return rc;
    }
    o->opcb = cbfunc;
    o->cbdata = cbdata;
    return start(o);
}

pmix_status_t pmix_host_unpublish_remote(struct pmix_host *s,
                                         const pmix_proc_t *proc,
                                         char **keys,
                                         pmix_op_cbfunc_t cbfunc,
                                         void *cbdata)
{
    struct dyn_op *o = op_new(s, DYN_UNPUBLISH, proc);

    if (!o || copy_keys(o, keys) < 0) {
        if (o)
            op_free(o);
        return PMIX_ERR_NOMEM;
    }
    o->opcb = cbfunc;
    o->cbdata = cbdata;
    return start(o);
}

pmix_status_t pmix_host_lookup_remote(struct pmix_host *s, char **keys,
                                      long deadline_ms, struct lookup_cb *l)
{
    struct dyn_op *o = op_new(s, DYN_LOOKUP, NULL);

    if (o)
        o->look = l;
    else
        free(l);
    if (!o || copy_keys(o, keys) < 0) {
        if (o)
            op_free(o);
        return PMIX_ERR_NOMEM;
    }
    o->deadline_ms = deadline_ms;
    return start(o);
}

/* next_seq without the lock. */
static int next_seq_locked(struct pmix_host *s, char op, const char *set,
                           unsigned *seq)
{
    struct dyn_seq *grown;

    for (size_t i = 0; i < s->nseqs; i++)
        if (s->seqs[i].op == op && strcmp(s->seqs[i].set, set) == 0) {
            *seq = ++s->seqs[i].seq;
            return 0;
        }
    grown = realloc(s->seqs, (s->nseqs + 1) * sizeof *grown);
    if (!grown)
        return -1;
    s->seqs = grown;
    grown[s->nseqs].op = op;
    snprintf(grown[s->nseqs].set, sizeof grown[s->nseqs].set, "%s", set);
    grown[s->nseqs].seq = *seq = 0;
    s->nseqs++;
    return 0;
}

int pmix_host_next_seq(struct pmix_host *s, char op, const char *set,
                       unsigned *seq)
{
    int rc;

    pthread_mutex_lock(&s->names_lock);
    rc = next_seq_locked(s, op, set, seq);
    pthread_mutex_unlock(&s->names_lock);
    return rc;
}

pmix_status_t pmix_host_connect_remote(struct pmix_host *s, char op,
                                       const uint32_t *ranks, size_t n,
                                       int nnodes, long deadline_ms,
                                       pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    struct dyn_op *o = op_new(s, DYN_CONNECT, NULL);
    int rc;

    if (!o)
        return PMIX_ERR_NOMEM;
    names_set_id(ranks, n, o->set);
    rc = pmix_host_next_seq(s, op, o->set, &o->seq);
    if (rc < 0) {
        op_free(o);
        return PMIX_ERR_NOMEM;
    }
    o->op = op;
    o->nnodes = nnodes;
    o->deadline_ms = deadline_ms;
    o->opcb = cbfunc;
    o->cbdata = cbdata;
    return start(o);
}

void pmix_host_dyn_drain(struct pmix_host *s)
{
    const struct timespec pause = { 0, 10 * 1000000L };

    atomic_fetch_add(&s->dyn_epoch, 1);
    while (atomic_load(&s->dyn_threads) > 0)
        nanosleep(&pause, NULL);
    pthread_mutex_lock(&s->names_lock);
    free(s->seqs);
    s->seqs = NULL;
    s->nseqs = 0;
    pthread_mutex_unlock(&s->names_lock);
}
#endif
