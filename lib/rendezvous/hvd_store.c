/* hvd_store.c - see hvd_store.h.
 *
 * One chained hash table holds both the values and the "finished" marks
 * (the keys deleted from a declared scope: counted once each, so that a
 * client's retried DELETE does not finish a scope early); scopes have a
 * small table of their own with their size and counts. */
#include "rendezvous/hvd_store.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { VALUE, FINISHED };

/* What one entry costs beyond its bytes, counted against the budget. */
#define ENTRY_COST 64

struct entry {
    struct entry *next;
    uint64_t hash;
    int kind;
    char *scope, *key;      /* point into mem */
    void *val;
    size_t len, cost;
    char mem[];             /* scope\0key\0 */
};

struct scope {
    struct scope *next;
    int size;               /* -1: ad hoc (created by a PUT) */
    size_t values, finished, cost;
    char name[];
};

struct hvd_store {
    struct entry **buckets;
    size_t nbuckets, count;
    struct scope *scopes;   /* few: global, one per node and local rank */
    size_t bytes, max_bytes;
};

static uint64_t fnv(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return (h ^ 0xff) * 1099511628211ULL;   /* the separator */
}

static uint64_t entry_hash(int kind, const char *scope, const char *key)
{
    return fnv(fnv(14695981039346656037ULL + (uint64_t)kind, scope), key);
}

struct hvd_store *hvd_store_create(size_t max_bytes, struct err *err)
{
    struct hvd_store *s = calloc(1, sizeof *s);

    if (s) {
        s->nbuckets = 64;
        s->buckets = calloc(s->nbuckets, sizeof *s->buckets);
        s->max_bytes = max_bytes;
    }
    if (!s || !s->buckets) {
        free(s);
        err_set(err, "out of memory for the Gloo rendezvous store");
        return NULL;
    }
    return s;
}

static struct entry **find_slot(const struct hvd_store *s, int kind,
                                const char *scope, const char *key)
{
    uint64_t h = entry_hash(kind, scope, key);
    struct entry **e = &s->buckets[h % s->nbuckets];

    for (; *e; e = &(*e)->next)
        if ((*e)->hash == h && (*e)->kind == kind &&
            strcmp((*e)->scope, scope) == 0 && strcmp((*e)->key, key) == 0)
            break;
    return e;
}

static struct scope *find_scope(const struct hvd_store *s, const char *name)
{
    for (struct scope *c = s->scopes; c; c = c->next)
        if (strcmp(c->name, name) == 0)
            return c;
    return NULL;
}

/* A scope record, made (ad hoc, or with size) when missing; NULL when over
 * budget or out of memory. */
static struct scope *get_scope(struct hvd_store *s, const char *name, int size)
{
    struct scope *c = find_scope(s, name);
    size_t cost = ENTRY_COST + strlen(name) + 1;

    if (c)
        return c;
    if (s->bytes + cost > s->max_bytes || !(c = calloc(1, sizeof *c + cost)))
        return NULL;
    memcpy(c->name, name, strlen(name) + 1);
    c->size = size;
    c->cost = cost;
    c->next = s->scopes;
    s->scopes = c;
    s->bytes += cost;
    return c;
}

static void drop_scope(struct hvd_store *s, struct scope *c)
{
    for (struct scope **p = &s->scopes; *p; p = &(*p)->next)
        if (*p == c) {
            *p = c->next;
            s->bytes -= c->cost;
            free(c);
            return;
        }
}

int hvd_store_scope_size(struct hvd_store *s, const char *scope, int size,
                         struct err *err)
{
    struct scope *c = get_scope(s, scope, size);

    if (!c)
        return err_set(err, "out of memory for the Gloo rendezvous store");
    c->size = size;
    return 0;
}

/* Twice the buckets when the table is fuller than one entry a bucket. */
static void maybe_grow(struct hvd_store *s)
{
    size_t n = s->nbuckets * 2;
    struct entry **b;

    if (s->count < s->nbuckets || !(b = calloc(n, sizeof *b)))
        return;     /* a full table is slower, not wrong */
    for (size_t i = 0; i < s->nbuckets; i++)
        for (struct entry *e = s->buckets[i], *next; e; e = next) {
            next = e->next;
            e->next = b[e->hash % n];
            b[e->hash % n] = e;
        }
    free(s->buckets);
    s->buckets = b;
    s->nbuckets = n;
}

static struct entry *entry_new(int kind, const char *scope, const char *key,
                               const void *val, size_t len)
{
    size_t ls = strlen(scope) + 1, lk = strlen(key) + 1;
    struct entry *e = malloc(sizeof *e + ls + lk);

    if (!e)
        return NULL;
    e->val = len ? malloc(len) : NULL;
    if (len && !e->val) {
        free(e);
        return NULL;
    }
    if (len)
        memcpy(e->val, val, len);
    e->kind = kind;
    e->hash = entry_hash(kind, scope, key);
    e->scope = e->mem;
    e->key = e->mem + ls;
    memcpy(e->scope, scope, ls);
    memcpy(e->key, key, lk);
    e->len = len;
    e->cost = ENTRY_COST + ls + lk + len;
    e->next = NULL;
    return e;
}

/* Unlink *slot's entry and free it. */
static void unlink_entry(struct hvd_store *s, struct entry **slot)
{
    struct entry *e = *slot;

    *slot = e->next;
    s->bytes -= e->cost;
    s->count--;
    free(e->val);
    free(e);
}

int hvd_store_put(struct hvd_store *s, const char *scope, const char *key,
                  const void *val, size_t len, struct err *err)
{
    struct entry **slot = find_slot(s, VALUE, scope, key), *e;
    size_t old = *slot ? (*slot)->cost : 0;
    size_t cost = ENTRY_COST + strlen(scope) + strlen(key) + 2 + len;
    struct scope *c = get_scope(s, scope, -1);

    if (!c || s->bytes - old + cost > s->max_bytes ||
        !(e = entry_new(VALUE, scope, key, val, len))) {
        if (c && c->size < 0 && c->values == 0)
            drop_scope(s, c);   /* made for this put */
        return err_set(err, "the Gloo rendezvous store is full or out of "
                       "memory (%zu of %zu bytes used; %zu more asked for "
                       "%s/%s)", s->bytes, s->max_bytes, cost, scope, key);
    }
    if (*slot)
        unlink_entry(s, slot);
    else
        c->values++;
    slot = &s->buckets[e->hash % s->nbuckets];
    e->next = *slot;
    *slot = e;
    s->bytes += e->cost;
    s->count++;
    maybe_grow(s);
    return 0;
}

const void *hvd_store_get(const struct hvd_store *s, const char *scope,
                          const char *key, size_t *len)
{
    struct entry *e = *find_slot(s, VALUE, scope, key);

    *len = e ? e->len : 0;
    return e ? (e->val ? e->val : (const void *)"") : NULL;
}

/* Every value and mark of scope (or of all scopes: NULL) goes. */
static void clear_entries(struct hvd_store *s, const char *scope)
{
    for (size_t i = 0; i < s->nbuckets; i++)
        for (struct entry **p = &s->buckets[i]; *p;)
            if (!scope || strcmp((*p)->scope, scope) == 0)
                unlink_entry(s, p);
            else
                p = &(*p)->next;
}

/* A declared scope: mark key finished; all finished: the scope empties. */
static void finish_key(struct hvd_store *s, struct scope *c, const char *key)
{
    struct entry **slot = find_slot(s, FINISHED, c->name, key), *e;

    if (!*slot && (e = entry_new(FINISHED, c->name, key, NULL, 0))) {
        /* over budget the mark still counts: finishing frees memory */
        slot = &s->buckets[e->hash % s->nbuckets];
        e->next = *slot;
        *slot = e;
        s->bytes += e->cost;
        s->count++;
        c->finished++;
        maybe_grow(s);
    }
    if ((int)c->finished >= c->size) {
        clear_entries(s, c->name);
        c->values = c->finished = 0;
    }
}

void hvd_store_delete(struct hvd_store *s, const char *scope, const char *key)
{
    struct scope *c = find_scope(s, scope);
    struct entry **slot;

    if (c && c->size >= 0) {
        finish_key(s, c, key);
        return;
    }
    slot = find_slot(s, VALUE, scope, key);
    if (*slot) {
        unlink_entry(s, slot);
        if (c && --c->values == 0)
            drop_scope(s, c);
    }
}

void hvd_store_clear(struct hvd_store *s)
{
    clear_entries(s, NULL);
    for (struct scope *c = s->scopes, *next; c; c = next) {
        next = c->next;
        c->values = c->finished = 0;
        if (c->size < 0)
            drop_scope(s, c);
    }
}

size_t hvd_store_bytes(const struct hvd_store *s)
{
    return s->bytes;
}

size_t hvd_store_count(const struct hvd_store *s)
{
    return s->count;
}

void hvd_store_destroy(struct hvd_store *s)
{
    if (!s)
        return;
    clear_entries(s, NULL);
    while (s->scopes)
        drop_scope(s, s->scopes);
    free(s->buckets);
    free(s);
}
