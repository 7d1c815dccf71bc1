/* pmix_names.c - see pmix_names.h.  Few names and fewer waiters (MPI
 * programs publish a port or two): plain lists. */
#include "mpi/pmix_names.h"

#include <stdlib.h>
#include <string.h>

struct name {
    struct name *next;
    char *key, *nspace;
    int type;
    void *val;
    size_t len;
    uint32_t rank;
    int once;               /* gone with the first lookup that finds it */
};

struct waiter {
    struct waiter *next;
    char **keys;            /* NULL-terminated, owned */
    size_t nkeys;
    long deadline_ms;
    names_answer_fn answer;
    void *ctx;
};

struct pmix_names {
    struct name *names;
    struct waiter *waiters;
};

struct pmix_names *names_new(void)
{
    return calloc(1, sizeof(struct pmix_names));
}

static struct name *find(const struct pmix_names *t, const char *key)
{
    for (struct name *n = t->names; n; n = n->next)
        if (strcmp(n->key, key) == 0)
            return n;
    return NULL;
}

static void name_free(struct name *n)
{
    free(n->key);
    free(n->val);
    free(n->nspace);
    free(n);
}

static void waiter_free(struct waiter *w)
{
    for (size_t i = 0; i < w->nkeys; i++)
        free(w->keys[i]);
    free(w->keys);
    free(w);
}

/* Unlink name m from t (it is still to be freed). */
static void unlink_name(struct pmix_names *t, const struct name *m)
{
    for (struct name **p = &t->names; *p; p = &(*p)->next)
        if (*p == m) {
            *p = m->next;
            return;
        }
}

static int listed(struct name *const *v, size_t n, const struct name *m)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == m)
            return 1;
    return 0;
}

/* Answer with the hits among keys (n of them); only_all: none unless
 * every key is there.  1 when it answered.  The names that go with their
 * first read are unlinked before the answer and freed after it (keys may
 * be the asker's, gone once it is answered). */
static int answer_found(struct pmix_names *t, char *const *keys,
                        size_t n, int only_all, names_answer_fn answer,
                        void *ctx)
{
    struct names_hit *hits = calloc(n ? n : 1, sizeof *hits);
    struct name **gone = calloc(n ? n : 1, sizeof *gone);
    size_t nhits = 0, ngone = 0;

    if (!hits || !gone) {
        free(hits);
        free(gone);
        answer(ctx, NAMES_NOMEM, NULL, 0);
        return 1;
    }
    for (size_t i = 0; i < n; i++) {
        struct name *m = find(t, keys[i]);
        if (m)
            hits[nhits++] = (struct names_hit){ m->key, m->type, m->val,
                                                m->len, m->nspace, m->rank,
                                                m->once };
        if (m && m->once && !listed(gone, ngone, m))
            gone[ngone++] = m;
    }
    if (only_all && nhits < n) {
        free(hits);
        free(gone);
        return 0;
    }
    for (size_t i = 0; i < ngone; i++)
        unlink_name(t, gone[i]);
    answer(ctx, nhits ? NAMES_OK : NAMES_NOT_FOUND, hits, nhits);
    for (size_t i = 0; i < ngone; i++)
        name_free(gone[i]);
    free(hits);
    free(gone);
    return 1;
}

/* Answer and drop the waiters that have all their keys now. */
static void wake(struct pmix_names *t)
{
    struct waiter **p = &t->waiters;

    while (*p) {
        struct waiter *w = *p;
        if (answer_found(t, w->keys, w->nkeys, 1, w->answer, w->ctx)) {
            *p = w->next;
            waiter_free(w);
        } else {
            p = &w->next;
        }
    }
}

int names_publish(struct pmix_names *t, const char *nspace, uint32_t rank,
                  const char *key, int type, int once, const void *val,
                  size_t len)
{
    struct name *n = NULL;

    if (find(t, key))
        return NAMES_DUPLICATE;
    n = calloc(1, sizeof *n);
    if (!n)
        return NAMES_NOMEM;
    n->key = strdup(key);
    n->val = malloc(len ? len : 1);
    n->nspace = strdup(nspace);
    n->type = type;
    n->once = once != 0;
    n->len = len;
    n->rank = rank;
    if (n->val && len)
        memcpy(n->val, val, len);
    if (!n->key || !n->val || !n->nspace) {
        name_free(n);
        return NAMES_NOMEM;
    }
    n->next = t->names;
    t->names = n;
    wake(t);
    return NAMES_OK;
}

/* Remove key if nspace:rank published it. */
static int unpublish_one(struct pmix_names *t, const char *nspace,
                         uint32_t rank, const char *key)
{
    for (struct name **p = &t->names; *p; p = &(*p)->next) {
        struct name *n = *p;
        if (key && strcmp(n->key, key) != 0)
            continue;
        if (n->rank != rank || strcmp(n->nspace, nspace) != 0)
            return NAMES_NOT_OWNER;
        *p = n->next;
        name_free(n);
        return NAMES_OK;
    }
    return NAMES_NOT_FOUND;
}

int names_unpublish(struct pmix_names *t, const char *nspace, uint32_t rank,
                    char *const *keys)
{
    int rc = NAMES_OK;

    if (!keys) {
        struct name **p = &t->names;
        while (*p) {
            struct name *n = *p;
            if (n->rank == rank && strcmp(n->nspace, nspace) == 0) {
                *p = n->next;
                name_free(n);
            } else {
                p = &n->next;
            }
        }
        return NAMES_OK;
    }
    for (size_t i = 0; keys[i]; i++) {
        int one = unpublish_one(t, nspace, rank, keys[i]);
        if (rc == NAMES_OK)
            rc = one;
    }
    return rc;
}

static struct waiter *waiter_new(char *const *keys, size_t n)
{
    struct waiter *w = calloc(1, sizeof *w);

    if (!w)
        return NULL;
    w->keys = calloc(n + 1, sizeof *w->keys);
    if (!w->keys) {
        free(w);
        return NULL;
    }
    for (; w->nkeys < n; w->nkeys++) {
        w->keys[w->nkeys] = strdup(keys[w->nkeys]);
        if (!w->keys[w->nkeys]) {
            waiter_free(w);
            return NULL;
        }
    }
    return w;
}

int names_lookup(struct pmix_names *t, char *const *keys, long deadline_ms,
                 names_answer_fn answer, void *ctx)
{
    struct waiter *w = NULL;
    size_t n = 0;

    while (keys[n])
        n++;
    if (deadline_ms < 0 || n == 0) {
        answer_found(t, keys, n, 0, answer, ctx);
        return 0;
    }
    if (answer_found(t, keys, n, 1, answer, ctx))
        return 0;
    w = waiter_new(keys, n);
    if (!w)
        return -1;
    w->deadline_ms = deadline_ms;
    w->answer = answer;
    w->ctx = ctx;
    w->next = t->waiters;
    t->waiters = w;
    return 0;
}

void names_expire(struct pmix_names *t, long now_ms)
{
    struct waiter **p = &t->waiters;

    while (*p) {
        struct waiter *w = *p;
        if (w->deadline_ms <= now_ms) {
            *p = w->next;
            w->answer(w->ctx, NAMES_NOT_FOUND, NULL, 0);
            waiter_free(w);
        } else {
            p = &w->next;
        }
    }
}

size_t names_waiting(const struct pmix_names *t)
{
    size_t n = 0;

    for (const struct waiter *w = t->waiters; w; w = w->next)
        n++;
    return n;
}

void names_clear(struct pmix_names *t)
{
    while (t->names) {
        struct name *n = t->names;
        t->names = n->next;
        name_free(n);
    }
    while (t->waiters) {
        struct waiter *w = t->waiters;
        t->waiters = w->next;
        w->answer(w->ctx, NAMES_CLEARED, NULL, 0);
        waiter_free(w);
    }
}

void names_free(struct pmix_names *t)
{
    if (!t)
        return;
    names_clear(t);
    free(t);
}
