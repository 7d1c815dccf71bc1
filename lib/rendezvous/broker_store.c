/* broker_store.c - see broker_store.h. */
#include "rendezvous/broker_store.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_MAX_BYTES ((size_t)1 << 30)
#define DEFAULT_MAX_PARKED 1024
#define NO_HEAP SIZE_MAX
#define FIRST_BUCKETS 64

/* A key (in keys) or a barrier (in barriers).  A key entry lives while it
 * has a value or parked GETs; a barrier entry lives on, to keep counting
 * generations. */
struct entry {
    struct entry *next;             /* hash chain */
    uint64_t hash;
    struct bs_value *val;           /* NULL: no value yet */
    struct bs_waiter *whead, *wtail;/* parked requests, oldest first */
    uint32_t count, arrived;        /* barrier: size, arrivals so far */
    int64_t gen;                    /* barrier: releases so far */
    size_t klen;
    uint8_t key[];
};

struct bs_waiter {
    struct entry *e;
    struct bs_waiter *eprev, *enext;    /* on e */
    struct bs_peer *peer;
    struct bs_waiter *pprev, *pnext;    /* on peer */
    uint32_t id;
    uint8_t op;
    uint32_t weight;                    /* barrier: arrivals it stands for */
    uint64_t deadline;                  /* UINT64_MAX: none */
    size_t hidx;                        /* in the heap, or NO_HEAP */
};

struct table {
    struct entry **b;
    size_t nb, n;
};

struct bs_store {
    struct bs_limits lim;
    uint64_t seed;
    struct table keys, barriers;
    struct bs_waiter **heap;            /* min-heap on deadline */
    size_t nheap, capheap;
    size_t bytes, nvalues, nparked;
    size_t orphans;                     /* see bs_orphan_bytes */
    bs_reply_fn reply;
    void *ctx;
};

/* ---- values ---- */

void bs_value_ref(struct bs_value *v)
{
    if (v)
        v->refs++;
}

static size_t value_cost(const struct bs_value *v)
{
    return v ? sizeof *v + v->len : 0;
}

void bs_value_unref(struct bs_value *v)
{
    if (!v || --v->refs > 0)
        return;
    if (v->orphans)
        *v->orphans -= value_cost(v);
    free(v);
}

/* The store lets go of v: if answers still hold it, count it as theirs. */
static void let_go(struct bs_store *s, struct bs_value *v)
{
    if (v && v->refs > 1) {
        v->orphans = &s->orphans;
        s->orphans += value_cost(v);
    }
    bs_value_unref(v);
}

static struct bs_value *value_new(const uint8_t *data, size_t len)
{
    struct bs_value *v = malloc(sizeof *v + len);

    if (!v)
        return NULL;
    v->refs = 1;
    v->len = len;
    v->orphans = NULL;
    if (len)
        memcpy(v->data, data, len);
    return v;
}

/* ---- the hash table ---- */

static uint64_t hash_key(uint64_t seed, const uint8_t *k, size_t n)
{
    uint64_t h = 14695981039346656037ull ^ seed;   /* FNV-1a, seeded */

    for (size_t i = 0; i < n; i++)
        h = (h ^ k[i]) * 1099511628211ull;
    h ^= h >> 33;       /* spread the low bits the bucket mask uses */
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 33);
}

static struct entry *table_find(const struct table *t, uint64_t h,
                                const uint8_t *k, size_t n)
{
    struct entry *e;

    if (!t->nb)
        return NULL;
    for (e = t->b[h & (t->nb - 1)]; e; e = e->next)
        if (e->hash == h && e->klen == n && memcmp(e->key, k, n) == 0)
            return e;
    return NULL;
}

/* Double the buckets when the table is full (load factor 1); on failure
 * the table keeps working, only with longer chains. */
static void table_grow(struct table *t)
{
    size_t nb = t->nb ? 2 * t->nb : FIRST_BUCKETS;
    struct entry **b = calloc(nb, sizeof *b), *e, *next;

    if (!b)
        return;
    for (size_t i = 0; i < t->nb; i++)
        for (e = t->b[i]; e; e = next) {
            next = e->next;
            e->next = b[e->hash & (nb - 1)];
            b[e->hash & (nb - 1)] = e;
        }
    free(t->b);
    t->b = b;
    t->nb = nb;
}

/* t has buckets: bs_create made the first ones. */
static void table_insert(struct table *t, struct entry *e)
{
    if (t->n >= t->nb)
        table_grow(t);
    e->next = t->b[e->hash & (t->nb - 1)];
    t->b[e->hash & (t->nb - 1)] = e;
    t->n++;
}

static void table_remove(struct table *t, struct entry *e)
{
    struct entry **p = &t->b[e->hash & (t->nb - 1)];

    while (*p && *p != e)
        p = &(*p)->next;
    if (*p) {
        *p = e->next;
        t->n--;
    }
}

static void table_free(struct table *t)
{
    struct entry *e, *next;

    for (size_t i = 0; i < t->nb; i++)
        for (e = t->b[i]; e; e = next) {
            next = e->next;
            bs_value_unref(e->val);
            free(e);
        }
    free(t->b);
    t->b = NULL;
    t->nb = t->n = 0;
}

/* ---- accounting and entries ---- */

/* What a parked request costs: itself and its slot in the heap. */
#define WAITER_COST (sizeof(struct bs_waiter) + sizeof(struct bs_waiter *))

static size_t entry_cost(size_t klen)
{
    return sizeof(struct entry) + klen;
}

static int fits(const struct bs_store *s, size_t more)
{
    return s->bytes <= s->lim.max_bytes && more <= s->lim.max_bytes - s->bytes;
}

/* The entry for m's key in t; with create, a new empty one when there is
 * none (NULL when over the byte limit or out of memory). */
static struct entry *entry_get(struct bs_store *s, struct table *t,
                               const struct bp_msg *m, int create)
{
    uint64_t h = hash_key(s->seed, m->key, m->klen);
    struct entry *e = table_find(t, h, m->key, m->klen);

    if (e || !create || !fits(s, entry_cost(m->klen)))
        return e;
    e = calloc(1, sizeof *e + m->klen);
    if (!e)
        return NULL;
    e->hash = h;
    e->klen = m->klen;
    memcpy(e->key, m->key, m->klen);
    table_insert(t, e);
    s->bytes += entry_cost(m->klen);
    return e;
}

/* A key entry with neither a value nor parked GETs goes. */
static void key_maybe_free(struct bs_store *s, struct entry *e)
{
    if (e->val || e->whead)
        return;
    table_remove(&s->keys, e);
    s->bytes -= entry_cost(e->klen);
    free(e);
}

/* Replace e's value with a copy of data.  0, or -1 (limit, memory) with
 * the old value kept. */
static int set_value(struct bs_store *s, struct entry *e, const uint8_t *data,
                     size_t len)
{
    size_t need = sizeof(struct bs_value) + len, freed = value_cost(e->val);
    struct bs_value *v;

    if (need > freed && !fits(s, need - freed))
        return -1;
    v = value_new(data, len);
    if (!v)
        return -1;
    s->nvalues += e->val == NULL;
    s->bytes = s->bytes - freed + need;
    let_go(s, e->val);
    e->val = v;
    return 0;
}

/* ---- answers ---- */

static void reply_to(struct bs_store *s, struct bs_peer *p,
                     const struct bp_msg *m, uint8_t status, int64_t arg,
                     struct bs_value *val)
{
    struct bs_reply r = { m->op, status, m->id, arg, val };

    s->reply(s->ctx, p, &r);
}

static void reply_waiter(struct bs_store *s, const struct bs_waiter *w,
                         uint8_t status, int64_t arg, struct bs_value *val)
{
    struct bs_reply r = { w->op, status, w->id, arg, val };

    s->reply(s->ctx, w->peer, &r);
}

/* ---- the deadline heap ---- */

static void heap_set(struct bs_store *s, size_t i, struct bs_waiter *w)
{
    s->heap[i] = w;
    w->hidx = i;
}

static void heap_up(struct bs_store *s, size_t i)
{
    struct bs_waiter *w = s->heap[i];

    while (i > 0 && s->heap[(i - 1) / 2]->deadline > w->deadline) {
        heap_set(s, i, s->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    heap_set(s, i, w);
}

static void heap_down(struct bs_store *s, size_t i)
{
    struct bs_waiter *w = s->heap[i];

    for (;;) {
        size_t c = 2 * i + 1;

        if (c >= s->nheap)
            break;
        if (c + 1 < s->nheap && s->heap[c + 1]->deadline < s->heap[c]->deadline)
            c++;
        if (s->heap[c]->deadline >= w->deadline)
            break;
        heap_set(s, i, s->heap[c]);
        i = c;
    }
    heap_set(s, i, w);
}

static int heap_push(struct bs_store *s, struct bs_waiter *w)
{
    if (s->nheap == s->capheap) {
        size_t cap = s->capheap ? 2 * s->capheap : 64;
        struct bs_waiter **h = realloc(s->heap, cap * sizeof *h);

        if (!h)
            return -1;
        s->heap = h;
        s->capheap = cap;
    }
    heap_set(s, s->nheap++, w);
    heap_up(s, s->nheap - 1);
    return 0;
}

static void heap_remove(struct bs_store *s, struct bs_waiter *w)
{
    size_t i = w->hidx;
    struct bs_waiter *last = s->heap[--s->nheap];

    if (last != w) {
        heap_set(s, i, last);
        heap_up(s, i);
        heap_down(s, last->hidx);
    }
    w->hidx = NO_HEAP;
}

/* ---- parked requests ---- */

/* Park m from p on e until an event or m's deadline.  0, or -1 when p has
 * too many parked already, the store is full or memory is short. */
static int park(struct bs_store *s, struct bs_peer *p, struct entry *e,
                const struct bp_msg *m, uint64_t now)
{
    struct bs_waiter *w = NULL;

    if (p->nparked >= s->lim.max_parked || !fits(s, WAITER_COST) ||
        !(w = calloc(1, sizeof *w)))
        return -1;
    w->e = e;
    w->peer = p;
    w->id = m->id;
    w->op = m->op;
    w->weight = m->op == BP_BARRIER ? bs_barrier_weight(m) : 0;
    w->hidx = NO_HEAP;
    w->deadline = m->timeout_ms == BP_WAIT_FOREVER ? UINT64_MAX
                                                   : now + m->timeout_ms;
    if (w->deadline != UINT64_MAX && heap_push(s, w) < 0) {
        free(w);
        return -1;
    }
    w->eprev = e->wtail;
    *(e->wtail ? &e->wtail->enext : &e->whead) = w;
    e->wtail = w;
    w->pnext = p->parked;
    if (p->parked)
        p->parked->pprev = w;
    p->parked = w;
    e->arrived += w->weight;
    p->nparked++;
    s->nparked++;
    s->bytes += WAITER_COST;
    return 0;
}

/* Unlink w from everything and free it; its entry stays (callers decide:
 * see key_maybe_free). */
static void unpark(struct bs_store *s, struct bs_waiter *w)
{
    struct entry *e = w->e;

    if (w->hidx != NO_HEAP)
        heap_remove(s, w);
    *(w->eprev ? &w->eprev->enext : &e->whead) = w->enext;
    *(w->enext ? &w->enext->eprev : &e->wtail) = w->eprev;
    *(w->pprev ? &w->pprev->pnext : &w->peer->parked) = w->pnext;
    if (w->pnext)
        w->pnext->pprev = w->pprev;
    e->arrived -= w->weight;
    w->peer->nparked--;
    s->nparked--;
    s->bytes -= WAITER_COST;
    free(w);
}

/* Unpark w; a GET's key entry goes too when nothing else holds it. */
static void unpark_and_tidy(struct bs_store *s, struct bs_waiter *w)
{
    struct entry *e = w->e;
    int get = w->op == BP_GET;

    unpark(s, w);
    if (get)
        key_maybe_free(s, e);
}

/* e just got a value: answer every GET parked on it, oldest first. */
static void wake_getters(struct bs_store *s, struct entry *e)
{
    while (e->whead) {
        reply_waiter(s, e->whead, BP_OK, 0, e->val);
        unpark(s, e->whead);
    }
}

/* ---- operations ---- */

static void do_put(struct bs_store *s, struct bs_peer *p,
                   const struct bp_msg *m)
{
    struct entry *e;

    if (!m->klen || m->vlen > s->lim.max_value) {
        reply_to(s, p, m, BP_INVALID, 0, NULL);
        return;
    }
    e = entry_get(s, &s->keys, m, 1);
    if (!e || set_value(s, e, m->val, m->vlen) < 0) {
        if (e)
            key_maybe_free(s, e);
        reply_to(s, p, m, BP_LIMIT, 0, NULL);
        return;
    }
    reply_to(s, p, m, BP_OK, 0, NULL);
    wake_getters(s, e);
}

static void do_get(struct bs_store *s, struct bs_peer *p,
                   const struct bp_msg *m, uint64_t now)
{
    struct entry *e = entry_get(s, &s->keys, m, 0);

    if (!m->klen) {
        reply_to(s, p, m, BP_INVALID, 0, NULL);
        return;
    }
    if (e && e->val) {
        reply_to(s, p, m, BP_OK, 0, e->val);
        return;
    }
    if (!m->timeout_ms) {
        reply_to(s, p, m, BP_NOTFOUND, 0, NULL);
        return;
    }
    e = entry_get(s, &s->keys, m, 1);
    if (!e || park(s, p, e, m, now) < 0) {
        if (e)
            key_maybe_free(s, e);
        reply_to(s, p, m, BP_LIMIT, 0, NULL);
    }
}

/* A counter's value as text: an optional '-' and 1 to 19 digits (what
 * ADD writes, so that GET shows the number). */
static int parse_counter(const struct bs_value *v, int64_t *out)
{
    char text[24], *end = NULL;

    if (v->len < 1 || v->len > 20)
        return -1;
    memcpy(text, v->data, v->len);
    text[v->len] = '\0';
    if (!(text[0] == '-' || (text[0] >= '0' && text[0] <= '9')))
        return -1;
    errno = 0;
    *out = strtoll(text, &end, 10);
    return errno || *end || end == text ? -1 : 0;
}

static void do_add(struct bs_store *s, struct bs_peer *p,
                   const struct bp_msg *m)
{
    struct entry *e = entry_get(s, &s->keys, m, 0);
    int64_t old = 0, sum;
    char text[24];
    int n;

    if (!m->klen || (e && e->val && parse_counter(e->val, &old) < 0) ||
        __builtin_add_overflow(old, m->arg, &sum)) {
        reply_to(s, p, m, BP_INVALID, 0, NULL);
        return;
    }
    n = snprintf(text, sizeof text, "%" PRId64, sum);
    e = entry_get(s, &s->keys, m, 1);
    if (!e || set_value(s, e, (const uint8_t *)text, (size_t)n) < 0) {
        if (e)
            key_maybe_free(s, e);
        reply_to(s, p, m, BP_LIMIT, 0, NULL);
        return;
    }
    reply_to(s, p, m, BP_OK, sum, NULL);
    wake_getters(s, e);
}

/* The last arrival of a generation: everyone is answered with the
 * generation's number and the barrier starts over (the same name used
 * again is the next generation). */
static void release(struct bs_store *s, struct bs_peer *p, struct entry *e,
                    const struct bp_msg *m)
{
    int64_t gen = e->gen++;

    reply_to(s, p, m, BP_OK, gen, NULL);
    while (e->whead) {
        reply_waiter(s, e->whead, BP_OK, gen, NULL);
        unpark(s, e->whead);
    }
}

static void do_barrier(struct bs_store *s, struct bs_peer *p,
                       const struct bp_msg *m, uint64_t now)
{
    struct entry *e;
    uint8_t st = BP_INVALID;
    uint32_t w = bs_barrier_weight(m);

    if (!m->klen || m->arg < 1 || m->arg > UINT32_MAX || !w)
        goto answer;
    st = BP_LIMIT;
    e = entry_get(s, &s->barriers, m, 1);
    if (!e)
        goto answer;
    st = BP_INVALID;    /* every arrival of a generation says the same count */
    if ((e->arrived && e->count != (uint32_t)m->arg) ||
        w > (uint32_t)m->arg - e->arrived)  /* more than the barrier lacks */
        goto answer;
    e->count = (uint32_t)m->arg;
    if (e->arrived + w == e->count) {
        release(s, p, e, m);
        return;
    }
    st = m->timeout_ms ? BP_LIMIT : BP_TIMEOUT;
    if (m->timeout_ms && park(s, p, e, m, now) == 0)
        return;
answer:
    reply_to(s, p, m, st, 0, NULL);
}

static void do_del(struct bs_store *s, struct bs_peer *p,
                   const struct bp_msg *m)
{
    struct entry *e = entry_get(s, &s->keys, m, 0);

    if (!e || !e->val) {
        reply_to(s, p, m, m->klen ? BP_NOTFOUND : BP_INVALID, 0, NULL);
        return;
    }
    s->bytes -= value_cost(e->val);
    s->nvalues--;
    let_go(s, e->val);
    e->val = NULL;
    key_maybe_free(s, e);
    reply_to(s, p, m, BP_OK, 0, NULL);
}

void bs_request(struct bs_store *s, struct bs_peer *p, const struct bp_msg *m,
                uint64_t now_ms)
{
    switch (m->op) {
    case BP_PUT:
        do_put(s, p, m);
        break;
    case BP_GET:
        do_get(s, p, m, now_ms);
        break;
    case BP_ADD:
        do_add(s, p, m);
        break;
    case BP_BARRIER:
        do_barrier(s, p, m, now_ms);
        break;
    case BP_DEL:
        do_del(s, p, m);
        break;
    default:
        reply_to(s, p, m, BP_INVALID, 0, NULL);
    }
}

uint32_t bs_barrier_weight(const struct bp_msg *m)
{
    if (m->vlen != 4)
        return 1;
    return (uint32_t)m->val[0] << 24 | (uint32_t)m->val[1] << 16 |
           (uint32_t)m->val[2] << 8 | (uint32_t)m->val[3];
}

/* ---- the store and its peers ---- */

struct bs_store *bs_create(const struct bs_limits *lim, uint64_t seed,
                           bs_reply_fn reply, void *ctx, struct err *err)
{
    struct bs_store *s = calloc(1, sizeof *s);

    if (!s)
        goto fail;
    s->lim = *lim;
    if (!s->lim.max_value)
        s->lim.max_value = BP_DEFAULT_MAX_VALUE;
    if (!s->lim.max_bytes)
        s->lim.max_bytes = DEFAULT_MAX_BYTES;
    if (!s->lim.max_parked)
        s->lim.max_parked = DEFAULT_MAX_PARKED;
    s->seed = seed;
    s->reply = reply;
    s->ctx = ctx;
    table_grow(&s->keys);
    table_grow(&s->barriers);
    if (s->keys.nb && s->barriers.nb)
        return s;
fail:
    bs_destroy(s);
    err_set(err, "out of memory for the broker's store");
    return NULL;
}

static void free_waiters(struct table *t)
{
    struct entry *e;
    struct bs_waiter *w, *next;

    for (size_t i = 0; i < t->nb; i++)
        for (e = t->b[i]; e; e = e->next)
            for (w = e->whead; w; w = next) {
                next = w->enext;
                free(w);
            }
}

void bs_destroy(struct bs_store *s)
{
    if (!s)
        return;
    free_waiters(&s->keys);
    free_waiters(&s->barriers);
    table_free(&s->keys);
    table_free(&s->barriers);
    free(s->heap);
    free(s);
}

void bs_peer_init(struct bs_peer *p, void *user)
{
    p->parked = NULL;
    p->nparked = 0;
    p->user = user;
}

void bs_peer_drop(struct bs_store *s, struct bs_peer *p)
{
    while (p->parked)
        unpark_and_tidy(s, p->parked);
}

void bs_expire(struct bs_store *s, uint64_t now_ms)
{
    while (s->nheap && s->heap[0]->deadline <= now_ms) {
        reply_waiter(s, s->heap[0], BP_TIMEOUT, 0, NULL);
        unpark_and_tidy(s, s->heap[0]);
    }
}

uint64_t bs_next_deadline(const struct bs_store *s)
{
    return s->nheap ? s->heap[0]->deadline : UINT64_MAX;
}

size_t bs_bytes(const struct bs_store *s)
{
    return s->bytes;
}

size_t bs_nkeys(const struct bs_store *s)
{
    return s->nvalues;
}

size_t bs_nparked(const struct bs_store *s)
{
    return s->nparked;
}

const struct bs_value *bs_peek(const struct bs_store *s, const char *key)
{
    size_t n = strlen(key);
    const struct entry *e = table_find(&s->keys,
                                       hash_key(s->seed, (const uint8_t *)key,
                                                n),
                                       (const uint8_t *)key, n);

    return e ? e->val : NULL;
}

size_t bs_orphan_bytes(const struct bs_store *s)
{
    return s->orphans;
}
