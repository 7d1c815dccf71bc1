/* planwire.c - see planwire.h.  One table of the settings' fields drives
 * both the writer and the reader, so neither spells a field out twice. */
#include "place/planwire.h"

#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "where/hostname.h"

/* Fields of their own shape (planwire.h), then numbers, then texts. */
enum {
    F_NODE = 1, F_RUN = 2, F_ENV = 3, F_NAME = 4, F_FILTER = 5, F_NRANKS = 6,
};

#define NUM(id, field, max) { id, #field, offsetof(struct planwire, field), max }
#define TEXT(id, field) { id, #field, offsetof(struct planwire, field), -1 }

/* max >= 0: a number up to max; -1: a text. */
static const struct pw_field {
    uint16_t id;
    const char *name;
    size_t off;
    long max;
} fields[] = {
    NUM(16, restart, INT_MAX), NUM(17, max_restarts, INT_MAX),
    NUM(18, master_port, 65535), NUM(19, oversubscribe, 1),
    NUM(20, report_bindings, 1), NUM(21, keep_env, 1), NUM(22, tag_output, 1),
    NUM(23, redirects, 3), NUM(24, kill_timeout_ms, INT_MAX),
    NUM(25, stall_timeout_ms, INT_MAX), NUM(26, mpi, PLANWIRE_MPI_PMI2),
    NUM(27, preflight, 1), NUM(28, pf_timeout_s, INT_MAX),
    NUM(29, pf_all_pairs, 1), NUM(30, heartbeat_s, INT_MAX),
    NUM(31, fanout, INT_MAX), NUM(32, connect_timeout_s, INT_MAX),
    NUM(33, ssh_port, 65535), NUM(34, timestamp_output, 1),
    NUM(35, tf_config, 2),
    TEXT(48, master_addr), TEXT(49, iface), TEXT(50, role), TEXT(51, run_id),
    TEXT(52, gloo_rdv), TEXT(53, bind_arg[0]), TEXT(54, bind_arg[1]),
    TEXT(55, bind_arg[2]), TEXT(56, topology), TEXT(57, output_dir),
    TEXT(58, summary), TEXT(59, pf_import), TEXT(60, ssh_user),
    TEXT(61, ssh_identity), TEXT(62, ssh_known_hosts), TEXT(63, ssh_config),
    TEXT(64, remote_dlrun), TEXT(65, wdir),
};
#define NFIELDS (sizeof fields / sizeof fields[0])

/* ---- writing ---- */

struct out {
    uint8_t *buf;
    size_t len, cap;
    int failed;             /* out of memory, or over PLANWIRE_MAX_SIZE */
};

static void put(struct out *o, const void *data, size_t n)
{
    if (n == 0)             /* data may be NULL then (no login) */
        return;
    if (o->failed || n > PLANWIRE_MAX_SIZE - o->len) {
        o->failed = 1;
        return;
    }
    if (o->len + n > o->cap) {
        size_t cap = o->cap ? o->cap : 256;
        uint8_t *b;
        while (cap < o->len + n)
            cap *= 2;
        if (!(b = realloc(o->buf, cap))) {
            o->failed = 1;
            return;
        }
        o->buf = b;
        o->cap = cap;
    }
    if (n)      /* data may be NULL for an empty string */
        memcpy(o->buf + o->len, data, n);
    o->len += n;
}

static void put_u16(struct out *o, uint32_t v)
{
    uint8_t b[2] = { (uint8_t)v, (uint8_t)(v >> 8) };

    put(o, b, 2);
}

static void put_u32(struct out *o, uint32_t v)
{
    uint8_t b[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
                     (uint8_t)(v >> 24) };

    put(o, b, 4);
}

static void put_head(struct out *o, uint16_t id, size_t len)
{
    put_u16(o, id);
    put_u32(o, (uint32_t)len);
}

static void put_text(struct out *o, uint16_t id, const char *s)
{
    size_t n = strlen(s);

    put_head(o, id, n);
    put(o, s, n);
}

static void put_node(struct out *o, const struct plan_node *n)
{
    size_t hl = strlen(n->host), ll = n->login ? strlen(n->login) : 0;
    size_t al = n->addr_name ? strlen(n->addr_name) : 0;

    put_head(o, F_NODE, 10 + hl + ll + al);
    put_u32(o, (uint32_t)n->nranks);
    put_u16(o, (uint32_t)hl);
    put(o, n->host, hl);
    put_u16(o, (uint32_t)ll);
    put(o, n->login, ll);
    put_u16(o, (uint32_t)al);
    put(o, n->addr_name, al);
}

/* The rank table: nodes, then runs of ranks on one node. */
static void put_plan(struct out *o, const struct plan *p)
{
    put_head(o, F_NRANKS, 4);
    put_u32(o, (uint32_t)p->nranks);
    for (int i = 0; i < p->nnodes; i++)
        put_node(o, &p->nodes[i]);
    for (int r = 0, end; r < p->nranks; r = end) {
        for (end = r + 1; end < p->nranks &&
             p->rank_node[end] == p->rank_node[r]; end++)
            ;
        put_head(o, F_RUN, 8);
        put_u32(o, (uint32_t)p->rank_node[r]);
        put_u32(o, (uint32_t)(end - r));
    }
}

static void put_strv(struct out *o, uint16_t id, const struct strv *s)
{
    for (size_t i = 0; i < s->n; i++)
        put_text(o, id, s->v[i]);
}

/* The settings of the table, the environment and the filter. */
static void put_settings(struct out *o, const struct planwire *w)
{
    const char *base = (const char *)w;

    for (size_t i = 0; i < NFIELDS; i++) {
        const void *at = base + fields[i].off;
        if (fields[i].max >= 0 && *(const int *)at) {
            put_head(o, fields[i].id, 4);
            put_u32(o, (uint32_t)*(const int *)at);
        } else if (fields[i].max < 0 && *(char *const *)at) {
            put_text(o, fields[i].id, *(char *const *)at);
        }
    }
    put_strv(o, F_ENV, &w->env);
    put_strv(o, F_NAME, &w->names);
    if (w->filter_given) {
        put_head(o, F_FILTER, (size_t)w->nfilter * 4);
        for (int i = 0; i < w->nfilter; i++)
            put_u32(o, (uint32_t)w->ranks_filter[i]);
    }
}

/* What a reader would refuse, said by the writer (a caller's bug). */
static int check_env(const struct strv *s, int names, struct err *err)
{
    for (size_t i = 0; i < s->n; i++) {
        size_t n = strcspn(s->v[i], "=");
        if (n == 0 || (names ? s->v[i][n] != '\0' : s->v[i][n] != '='))
            return err_set(err, "plan wire: environment entry %zu is not "
                           "%s", i, names ? "a NAME" : "NAME=VALUE");
        if (strlen(s->v[i]) > PLANWIRE_MAX_TEXT)
            return err_set(err, "plan wire: environment entry %zu is over "
                           "%d bytes", i, PLANWIRE_MAX_TEXT);
    }
    return 0;
}

static int check_settings(const struct planwire *w, struct err *err)
{
    const char *base = (const char *)w;

    for (size_t i = 0; i < NFIELDS; i++) {
        const void *at = base + fields[i].off;
        if (fields[i].max >= 0 && (*(const int *)at < 0 ||
                                   *(const int *)at > fields[i].max))
            return err_set(err, "plan wire: %s %d is out of range 0-%ld",
                           fields[i].name, *(const int *)at, fields[i].max);
        if (fields[i].max < 0 && *(char *const *)at &&
            strlen(*(char *const *)at) > PLANWIRE_MAX_TEXT)
            return err_set(err, "plan wire: %s is over %d bytes",
                           fields[i].name, PLANWIRE_MAX_TEXT);
    }
    if (w->nfilter < 0 || (w->nfilter && !w->ranks_filter))
        return err_set(err, "plan wire: bad ranks filter");
    return check_env(&w->env, 0, err) < 0 ? -1 : check_env(&w->names, 1, err);
}

uint8_t *planwire_encode(const struct plan *p, const struct planwire *w,
                         size_t *len, struct err *err)
{
    struct out o = { 0 };

    if (check_settings(w, err) < 0)
        return NULL;
    put(&o, "DLPW", 4);
    put_u32(&o, PLANWIRE_VERSION);
    put_u32(&o, 0);                     /* the length, once known */
    put_plan(&o, p);
    put_settings(&o, w);
    if (o.failed) {
        free(o.buf);
        err_set(err, "plan wire: out of memory, or over %u bytes",
                PLANWIRE_MAX_SIZE);
        return NULL;
    }
    o.len -= PLANWIRE_HEADER;
    memcpy(o.buf + 8, (uint8_t[4]){ (uint8_t)o.len, (uint8_t)(o.len >> 8),
                                    (uint8_t)(o.len >> 16),
                                    (uint8_t)(o.len >> 24) }, 4);
    *len = o.len + PLANWIRE_HEADER;
    return o.buf;
}

/* ---- reading ---- */

struct in {
    const uint8_t *p;
    size_t len, off;        /* off: where the field's bytes start */
    uint16_t id;
};

static uint32_t get_u16(const uint8_t *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8;
}

static uint32_t get_u32(const uint8_t *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
           (uint32_t)b[3] << 24;
}

/* len bytes of text (no NUL) as a malloc'd string, or NULL with err. */
static char *get_text(const struct in *f, const uint8_t *b, size_t len,
                      struct err *err)
{
    char *s;

    if (len > PLANWIRE_MAX_TEXT || memchr(b, '\0', len)) {
        err_set(err, "plan wire: field %u at byte %zu: a text %s", f->id,
                f->off, len > PLANWIRE_MAX_TEXT ? "over 128 KiB" :
                "with a NUL byte");
        return NULL;
    }
    if (!(s = malloc(len + 1))) {
        err_set(err, "out of memory");
        return NULL;
    }
    memcpy(s, b, len);
    s[len] = '\0';
    return s;
}

static int grow(void **v, int n, size_t size, struct err *err)
{
    void *p;

    if (n & (n - 1))        /* room doubles at each power of two */
        return 0;
    if (!(p = realloc(*v, (size_t)(n ? 2 * n : 4) * size)))
        return err_set(err, "out of memory");
    *v = p;
    return 0;
}

/* u32 ranks, u16 host length, host, u16 login length, login, u16 address
 * name length, address name. */
static int get_node(struct planwire *w, const struct in *f, struct err *err)
{
    const uint8_t *b = f->p;
    struct planwire_node *n;
    uint32_t hl, ll, al;

    if (w->nnodes >= PLANWIRE_MAX_NODES)
        return err_set(err, "plan wire: more than %d nodes", PLANWIRE_MAX_NODES);
    if (f->len < 10 || (hl = get_u16(b + 4)) + 10 > f->len ||
        (ll = get_u16(b + 6 + hl)) + hl + 10 > f->len ||
        (al = get_u16(b + 8 + hl + ll)) + ll + hl + 10 != f->len)
        return err_set(err, "plan wire: node %d at byte %zu: its lengths do "
                       "not add up", w->nnodes, f->off);
    if (grow((void **)&w->nodes, w->nnodes, sizeof *w->nodes, err) < 0)
        return -1;
    n = &w->nodes[w->nnodes++];
    *n = (struct planwire_node){ .nranks = (int)get_u32(b) };
    if (!(n->host = get_text(f, b + 6, hl, err)) ||
        (ll && !(n->login = get_text(f, b + 8 + hl, ll, err))) ||
        (al && !(n->addr_name = get_text(f, b + 10 + hl + ll, al, err))))
        return -1;
    if (hostname_check(n->host, err) < 0 ||
        (n->login && hostname_check_login(n->login, ll, err) < 0) ||
        (n->addr_name && hostname_check(n->addr_name, err) < 0))
        return err_prefix(err, "plan wire: node %d", w->nnodes - 1);
    if (get_u32(b) == 0 || get_u32(b) > PLANWIRE_MAX_RANKS)
        return err_set(err, "plan wire: node %d (%s) with %u ranks",
                       w->nnodes - 1, n->host, (unsigned)get_u32(b));
    return 0;
}

/* The reader's state beside w: the runs until the end, what was seen. */
struct dec {
    struct planwire *w;
    uint32_t *runs;             /* node, ranks; nruns pairs */
    int nruns;
    long long run_ranks;        /* ranks the runs hold so far */
    unsigned char seen[NFIELDS];
    int nranks_seen;
};

static int get_run(struct dec *d, const struct in *f, struct err *err)
{
    uint32_t node, n;

    if (f->len != 8)
        return err_set(err, "plan wire: run at byte %zu: %zu bytes, not 8",
                       f->off, f->len);
    node = get_u32(f->p);
    n = get_u32(f->p + 4);
    if (n == 0 || (d->run_ranks += n) > PLANWIRE_MAX_RANKS)
        return err_set(err, "plan wire: run at byte %zu: %s", f->off,
                       n ? "more than 16777216 ranks" : "no rank");
    if (grow((void **)&d->runs, d->nruns, 2 * sizeof *d->runs, err) < 0)
        return -1;
    d->runs[2 * d->nruns] = node;
    d->runs[2 * d->nruns + 1] = n;
    d->nruns++;
    return 0;
}

/* An environment entry: "NAME=VALUE" (env) or "NAME" (names). */
static int get_env(struct strv *s, const struct in *f, int name,
                   struct err *err)
{
    char *t = get_text(f, f->p, f->len, err);
    size_t n = t ? strcspn(t, "=") : 0;

    if (!t)
        return -1;
    if (n == 0 || (name ? t[n] != '\0' : t[n] != '=')) {
        free(t);
        return err_set(err, "plan wire: field %u at byte %zu: not %s", f->id,
                       f->off, name ? "a NAME" : "NAME=VALUE");
    }
    strv_addf(s, "%s", t);
    free(t);
    return s->failed ? err_set(err, "out of memory") : 0;
}

static int get_filter(struct planwire *w, const struct in *f, struct err *err)
{
    if (f->len % 4 || f->len / 4 > PLANWIRE_MAX_RANKS)
        return err_set(err, "plan wire: ranks filter at byte %zu: %zu bytes",
                       f->off, f->len);
    w->filter_given = 1;
    w->nfilter = (int)(f->len / 4);
    if (!(w->ranks_filter = calloc((size_t)w->nfilter + 1, sizeof(int))))
        return err_set(err, "out of memory");
    for (int i = 0; i < w->nfilter; i++) {
        uint32_t r = get_u32(f->p + 4 * i);
        if (r > PLANWIRE_MAX_RANKS)
            return err_set(err, "plan wire: ranks filter: rank %u", (unsigned)r);
        w->ranks_filter[i] = (int)r;
    }
    return 0;
}

/* A field of the table: a number in range, or a text. */
static int get_field(struct dec *d, size_t k, const struct in *f,
                     struct err *err)
{
    const struct pw_field *t = &fields[k];
    char *at = (char *)d->w + t->off;

    if (d->seen[k]++)
        return err_set(err, "plan wire: %s (field %u) twice", t->name, f->id);
    if (t->max < 0)
        return (*(char **)at = get_text(f, f->p, f->len, err)) ? 0 : -1;
    if (f->len != 4 || get_u32(f->p) > (uint32_t)t->max)
        return err_set(err, "plan wire: %s (field %u) at byte %zu: %s", t->name,
                       f->id, f->off, f->len != 4 ? "not 4 bytes" :
                       "out of range");
    *(int *)at = (int)get_u32(f->p);
    return 0;
}

static int get_one(struct dec *d, const struct in *f, struct err *err)
{
    switch (f->id) {
    case F_NODE: return get_node(d->w, f, err);
    case F_RUN: return get_run(d, f, err);
    case F_ENV: return get_env(&d->w->env, f, 0, err);
    case F_NAME: return get_env(&d->w->names, f, 1, err);
    case F_FILTER:
        if (d->w->filter_given)
            return err_set(err, "plan wire: ranks filter twice");
        return get_filter(d->w, f, err);
    case F_NRANKS:
        if (d->nranks_seen++ || f->len != 4 || get_u32(f->p) == 0 ||
            get_u32(f->p) > PLANWIRE_MAX_RANKS)
            return err_set(err, "plan wire: bad rank count at byte %zu",
                           f->off);
        d->w->nranks = (int)get_u32(f->p);
        return 0;
    }
    for (size_t k = 0; k < NFIELDS; k++)
        if (fields[k].id == f->id)
            return get_field(d, k, f, err);
    return err_set(err, "plan wire: unknown field %u at byte %zu (a dlrun of "
                   "another version wrote it: use the same dlrun on every "
                   "node, --remote-dlrun)", f->id, f->off);
}

/* The runs into rank_node, each node holding the ranks it says. */
static int finish_table(struct dec *d, struct err *err)
{
    struct planwire *w = d->w;
    int *count = NULL, r = 0, rc = -1;

    if (!w->nnodes || !d->nranks_seen)
        return err_set(err, "plan wire: no %s", w->nnodes ? "rank count" :
                       "node");
    if (d->run_ranks != w->nranks)
        return err_set(err, "plan wire: the runs hold %lld ranks, not %d",
                       d->run_ranks, w->nranks);
    w->rank_node = malloc((size_t)w->nranks * sizeof *w->rank_node);
    count = calloc((size_t)w->nnodes, sizeof *count);
    if (!w->rank_node || !count) {
        err_set(err, "out of memory");
        goto out;
    }
    for (int i = 0; i < d->nruns; i++) {
        uint32_t node = d->runs[2 * i], n = d->runs[2 * i + 1];
        if (node >= (uint32_t)w->nnodes) {
            err_set(err, "plan wire: run %d: node %u of %d", i,
                    (unsigned)node, w->nnodes);
            goto out;
        }
        count[node] += (int)n;
        while (n--)
            w->rank_node[r++] = (int)node;
    }
    for (int i = 0; i < w->nnodes; i++)
        if (count[i] != w->nodes[i].nranks) {
            err_set(err, "plan wire: node %d (%s) says %d ranks, the runs "
                    "give it %d", i, w->nodes[i].host, w->nodes[i].nranks,
                    count[i]);
            goto out;
        }
    rc = 0;
out:
    free(count);
    return rc;
}

static int check_header(const uint8_t *b, size_t len, struct err *err)
{
    uint32_t v;

    if (len < PLANWIRE_HEADER || memcmp(b, "DLPW", 4) != 0)
        return err_set(err, "plan wire: not a dlrun plan (%zu bytes, no "
                       "\"DLPW\" first)", len);
    if ((v = get_u32(b + 4)) != PLANWIRE_VERSION)
        return err_set(err, "plan wire: version %u, this dlrun reads version "
                       "%d: run the same dlrun on every node (--remote-dlrun)",
                       (unsigned)v, PLANWIRE_VERSION);
    if (get_u32(b + 8) != len - PLANWIRE_HEADER)
        return err_set(err, "plan wire: %u bytes of fields said, %zu there",
                       (unsigned)get_u32(b + 8), len - PLANWIRE_HEADER);
    return 0;
}

int planwire_decode(const void *data, size_t len, struct planwire *w,
                    struct err *err)
{
    const uint8_t *b = data;
    struct dec d = { .w = w };
    size_t off = PLANWIRE_HEADER;
    int rc = -1;

    memset(w, 0, sizeof *w);
    if (check_header(b, len, err) < 0)
        return -1;
    while (off < len) {
        struct in f = { .off = off };
        if (len - off < 6) {
            err_set(err, "plan wire: a field cut short at byte %zu", off);
            goto out;
        }
        f.id = (uint16_t)get_u16(b + off);
        f.len = get_u32(b + off + 2);
        f.p = b + off + 6;
        if (f.len > len - off - 6) {
            err_set(err, "plan wire: field %u at byte %zu: %zu bytes, %zu "
                    "left", f.id, off, f.len, len - off - 6);
            goto out;
        }
        if (get_one(&d, &f, err) < 0)
            goto out;
        off += 6 + f.len;
    }
    rc = finish_table(&d, err);
out:
    free(d.runs);
    return rc;
}

int planwire_plan(const struct planwire *w, struct alloc *a, struct plan *p,
                  struct err *err)
{
    memset(a, 0, sizeof *a);
    memset(p, 0, sizeof *p);
    a->source = "hosts";
    a->kind = ALLOC_HOSTS;
    snprintf(a->why, sizeof a->why, "the head's plan (%d ranks on %d nodes)",
             w->nranks, w->nnodes);
    for (int i = 0; i < w->nnodes; i++) {
        if (alloc_add_node(a, w->nodes[i].host, w->nodes[i].nranks, 0,
                           err) < 0)
            return -1;
        if ((w->nodes[i].login && !(a->nodes[i].login =
                                    strdup(w->nodes[i].login))) ||
            (w->nodes[i].addr_name && !(a->nodes[i].addr_name =
                                        strdup(w->nodes[i].addr_name))))
            return err_set(err, "out of memory");
    }
    if (plan_alloc(p, w->nranks, w->nnodes, err) < 0)
        return -1;
    memcpy(p->rank_node, w->rank_node, (size_t)w->nranks * sizeof(int));
    plan_count_local(p);
    for (int i = 0; i < w->nnodes; i++) {
        p->nodes[i].host = a->nodes[i].name;
        p->nodes[i].login = a->nodes[i].login;
        p->nodes[i].addr_name = a->nodes[i].addr_name;
    }
    p->self = p->self_node = -1;
    p->layout = "the head's plan";
    return 0;
}

void planwire_free(struct planwire *w)
{
    if (!w)
        return;
    for (int i = 0; i < w->nnodes; i++) {
        free(w->nodes[i].host);
        free(w->nodes[i].login);
        free(w->nodes[i].addr_name);
    }
    free(w->nodes);
    free(w->rank_node);
    for (size_t k = 0; k < NFIELDS; k++)
        if (fields[k].max < 0)
            free(*(char **)((char *)w + fields[k].off));
    strv_free(&w->env);
    strv_free(&w->names);
    free(w->ranks_filter);
    memset(w, 0, sizeof *w);
}
