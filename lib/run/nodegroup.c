/* nodegroup.c - see nodegroup.h. */
#include "run/nodegroup.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rendezvous/client.h"
#include "util/clock.h"
#include "util/net.h"

#define NG_TEXT_MAX 600     /* longest record or outcome accepted */

struct nodegroup {
    struct client *c;
    struct ng_conf conf;
    long long *hb;          /* each node's last heartbeat count */
    long *seen_ms;          /* when it last moved */
    int nwatch;
};

/* ---- records and outcomes ---- */

/* The next space-separated word of *s (a NUL-terminated copy) in place. */
static char *word(char **s)
{
    char *w = *s, *sp;

    if (!w || !*w)
        return NULL;
    sp = strchr(w, ' ');
    if (sp) {
        *sp = '\0';
        *s = sp + 1;
    } else {
        *s = NULL;
    }
    return w;
}

/* A whole decimal number in [lo, hi]. */
static int number(const char *w, long lo, long hi, int *out)
{
    char *end = NULL;
    long v;

    if (!w || !*w || (*w != '-' && (*w < '0' || *w > '9')))
        return -1;
    errno = 0;
    v = strtol(w, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

/* Copy len bytes at s into buf as a C string: no NUL inside, no
 * control bytes, not longer than NG_TEXT_MAX. */
static int text(const char *s, size_t len, char *buf, struct err *err)
{
    if (len == 0 || len > NG_TEXT_MAX)
        return err_set(err, "empty or longer than %d bytes", NG_TEXT_MAX);
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] == 0x7f)
            return err_set(err, "a control byte at offset %zu", i);
    memcpy(buf, s, len);
    buf[len] = '\0';
    return 0;
}

/* An address or host name word: printable, no '%' tricks, fits. */
static int name_ok(const char *w, size_t max)
{
    size_t n = w ? strlen(w) : 0;

    if (n == 0 || n >= max)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                    "0123456789.-_:[]", w[i]))
            return 0;
    return 1;
}

int ng_member_format(const struct ng_member *m, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%d %d %d %s %s", m->nproc, m->port,
                     m->max_restarts, m->addr, m->host);

    return n < 0 || (size_t)n >= len ? -1 : 0;
}

int ng_member_parse(const char *s, size_t len, struct ng_member *m,
                    struct err *err)
{
    char buf[NG_TEXT_MAX + 1], *p = buf, *addr, *host;

    memset(m, 0, sizeof *m);
    if (text(s, len, buf, err) < 0)
        return err_prefix(err, "node record");
    if (number(word(&p), 1, 1 << 24, &m->nproc) < 0 ||
        number(word(&p), 0, 65535, &m->port) < 0 ||
        number(word(&p), 0, 1000000, &m->max_restarts) < 0)
        return err_set(err, "node record: not \"NPROC PORT MAX_RESTARTS ADDR "
                       "HOST\"");
    addr = word(&p);
    host = word(&p);
    if (!name_ok(addr, sizeof m->addr) || !name_ok(host, sizeof m->host) || p)
        return err_set(err, "node record: bad address or host name");
    memcpy(m->addr, addr, strlen(addr) + 1);     /* lengths checked */
    memcpy(m->host, host, strlen(host) + 1);
    return 0;
}

static const char *const kinds[] = { "ok", "fail", "signal", "lost", "error",
                                     "grow" };

int ng_end_format(const struct ng_end *e, char *buf, size_t len)
{
    int n;

    switch (e->kind) {
    case NG_OK: n = snprintf(buf, len, "ok"); break;
    case NG_GROW: n = snprintf(buf, len, "grow"); break;
    case NG_FAIL:
        n = snprintf(buf, len, "fail %d %d %d %d", e->node, e->rank,
                     e->status, e->pid);
        break;
    case NG_LOST: n = snprintf(buf, len, "lost %d", e->node); break;
    default:
        n = snprintf(buf, len, "%s %d %d", kinds[e->kind], e->node, e->status);
    }
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* The numbers after the kind word, as many as the kind has. */
static int end_fields(char *p, struct ng_end *e, int nnodes, int nranks)
{
    if (number(word(&p), 0, nnodes - 1, &e->node) < 0)
        return -1;
    switch (e->kind) {
    case NG_FAIL:
        if (number(word(&p), 0, nranks - 1, &e->rank) < 0 ||
            number(word(&p), INT_MIN, INT_MAX, &e->status) < 0 ||
            number(word(&p), 1, INT_MAX, &e->pid) < 0)
            return -1;
        break;
    case NG_SIGNAL:
        if (number(word(&p), 1, 64, &e->status) < 0)
            return -1;
        break;
    case NG_ERROR:
        if (number(word(&p), 1, 255, &e->status) < 0)
            return -1;
        break;
    default:
        break;
    }
    return p ? -1 : 0;
}

int ng_end_parse(const char *s, size_t len, int nnodes, int nranks,
                 struct ng_end *e, struct err *err)
{
    char buf[NG_TEXT_MAX + 1], *p = buf, *k;
    int i;

    memset(e, 0, sizeof *e);
    if (text(s, len, buf, err) < 0)
        return err_prefix(err, "the group's outcome");
    k = word(&p);
    for (i = 0; i < 6 && strcmp(k, kinds[i]) != 0; i++)
        ;
    if (i == 6)
        return err_set(err, "the group's outcome: unknown kind");
    e->kind = (enum ng_kind)i;
    if (i == NG_OK || i == NG_GROW)
        return p ? err_set(err, "the group's outcome: text after \"%s\"",
                           kinds[i]) : 0;
    if (nnodes < 1 || nranks < 1 || end_fields(p, e, nnodes, nranks) < 0)
        return err_set(err, "the group's outcome: bad \"%s\" fields",
                       kinds[i]);
    return 0;
}

/* FNV-1a over the run id and endpoint, twice with different starts: a
 * fixed mix so that every node computes the same token, nothing more. */
void ng_derive_token(const char *run_id, const char *endpoint, char out[33])
{
    uint64_t h[2] = { 0xcbf29ce484222325ULL, 0x84222325cbf29ce4ULL };
    const char *parts[3] = { "dlrun-nodegroup\n", run_id, endpoint };

    for (int k = 0; k < 2; k++)
        for (int p = 0; p < 3; p++)
            for (const char *c = parts[p]; c && *c; c++) {
                h[k] ^= (unsigned char)*c;
                h[k] *= 0x100000001b3ULL;
                h[k] ^= h[k] >> 29;
            }
    snprintf(out, 33, "%016llx%016llx", (unsigned long long)h[0],
             (unsigned long long)h[1]);
}

/* ---- the protocol ---- */

struct nodegroup *ng_connect(const struct ng_conf *conf, struct err *err)
{
    struct nodegroup *ng = calloc(1, sizeof *ng);

    if (!ng) {
        err_set(err, "out of memory");
        return NULL;
    }
    ng->conf = *conf;
    ng->c = client_connect(conf->broker, conf->token_hex,
                           conf->join_timeout_ms > 0 ? conf->join_timeout_ms
                                                     : 1000, err);
    if (!ng->c) {
        free(ng);
        return NULL;
    }
    client_set_answer_grace(ng->c, conf->hb_timeout_ms > 0 ?
                            conf->hb_timeout_ms : 10000);
    return ng;
}

void ng_close(struct nodegroup *ng)
{
    if (!ng)
        return;
    client_close(ng->c);
    free(ng->hb);
    free(ng->seen_ms);
    free(ng);
}

static void key(char *buf, size_t len, int gen, const char *what, int i)
{
    if (i >= 0)
        snprintf(buf, len, "ng.%d.%s.%d", gen, what, i);
    else
        snprintf(buf, len, "ng.%d.%s", gen, what);
}

static int add(struct nodegroup *ng, int gen, const char *what, int i,
               int64_t delta, int64_t *out, struct err *err)
{
    char k[64];

    key(k, sizeof k, gen, what, i);
    return client_add(ng->c, k, delta, out, err) == CLIENT_OK ? 0 : -1;
}

/* Take this node's rank in gen: the given one (once) or the next on
 * arrival.  0 / -1 with err. */
static int take_rank(struct nodegroup *ng, int gen, int *self, struct err *err)
{
    const struct ng_conf *c = &ng->conf;
    int64_t v = 0;

    if (c->node_rank >= 0) {
        if (add(ng, gen, "claim", c->node_rank, 1, &v, err) < 0)
            return -1;
        if (v != 1)
            return err_set(err, "node rank %d has joined already (another "
                           "dlrun with --node-rank %d): give every node its "
                           "own, 0 to %d", c->node_rank, c->node_rank,
                           c->nnodes - 1);
        *self = c->node_rank;
        return 0;
    }
    if (add(ng, gen, "arrive", -1, 1, &v, err) < 0)
        return -1;
    if (v > c->nnodes && c->max_nodes <= c->nnodes)
        return err_set(err, "the group is full: %d nodes have joined already "
                       "(--nnodes %d)", c->nnodes, c->nnodes);
    *self = (int)v - 1;
    return 0;
}

/* Publish this node's record (node rank 0 with a MASTER_PORT free here). */
static int publish(struct nodegroup *ng, int gen, int self, struct err *err)
{
    struct ng_member m = ng->conf.self;
    char k[64], val[NG_TEXT_MAX + 1];

    if (self == 0 && !m.port && (m.port = net_free_port(err)) < 0)
        return -1;
    if (self != 0)
        m.port = 0;
    if (ng_member_format(&m, val, sizeof val) < 0)
        return err_set(err, "this node's record is too long");
    key(k, sizeof k, gen, "m", self);
    return client_put(ng->c, k, val, strlen(val), err) == CLIENT_OK ? 0 : -1;
}

/* Node i's record, waiting for it in one-second slices (1: stopped). */
static int fetch(struct nodegroup *ng, int gen, int i, long deadline,
                 int (*stop)(void *), void *ctx, struct ng_member *m,
                 struct err *err)
{
    char k[64];

    key(k, sizeof k, gen, "m", i);
    for (;;) {
        void *val = NULL;
        size_t len = 0;
        int rc = client_get(ng->c, k, 1000, &val, &len, err);
        if (rc == CLIENT_OK) {
            rc = ng_member_parse(val, len, m, err);
            free(val);
            return rc < 0 ? err_prefix(err, "node rank %d", i) : 0;
        }
        if (rc != CLIENT_TIMEOUT)
            return -1;
        if (stop && stop(ctx))
            return 1;
        if (clock_ms() > deadline)
            return err_set(err, "node rank %d did not join within %d s: "
                           "start dlrun on every node with the same "
                           "rendezvous (%s)", i,
                           ng->conf.join_timeout_ms / 1000, ng->conf.broker);
    }
}

/* Every node's record into g; 1 when stop said so. */
static int gather(struct nodegroup *ng, struct ng_group *g, int (*stop)(void *),
                  void *ctx, struct err *err)
{
    long deadline = clock_ms() + ng->conf.join_timeout_ms;

    for (int i = 0; i < g->nnodes; i++) {
        int rc = fetch(ng, g->gen, i, deadline, stop, ctx, &g->nodes[i], err);
        if (rc != 0)
            return rc;
        if (g->nodes[i].max_restarts != ng->conf.self.max_restarts)
            return err_set(err, "node rank %d (%s) has --max-restarts %d, "
                           "this node %d: give every node the same", i,
                           g->nodes[i].host, g->nodes[i].max_restarts,
                           ng->conf.self.max_restarts);
        if (g->nranks > INT_MAX - g->nodes[i].nproc)
            return err_set(err, "too many ranks");
        g->nranks += g->nodes[i].nproc;
    }
    return 0;
}

/* The generation the group is in (ng.gen): a node started by hand to
 * replace a lost one joins the group's restart. */
static int current_gen(struct nodegroup *ng, int *gen, struct err *err)
{
    int64_t v = 0;

    if (client_add(ng->c, "ng.gen", 0, &v, err) != CLIENT_OK)
        return -1;
    if (v < 0 || v > 1000000)
        return err_set(err, "ng.gen %lld: not a generation", (long long)v);
    *gen = (int)v;
    return 0;
}

/* The first node to enter gen > 0 moves ng.gen on to it (once per gen;
 * the group enters its generations one after the other). */
static int open_gen(struct nodegroup *ng, int gen, struct err *err)
{
    int64_t v = 0, cur = 0;

    if (gen == 0)
        return 0;
    if (add(ng, gen, "open", -1, 1, &v, err) < 0)
        return -1;
    if (v != 1)
        return 0;
    if (client_add(ng->c, "ng.gen", 0, &cur, err) != CLIENT_OK)
        return -1;
    return cur < gen && client_add(ng->c, "ng.gen", gen - cur, NULL, err) !=
           CLIENT_OK ? -1 : 0;
}

static void nap(int ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

    nanosleep(&ts, NULL);
}

static int elastic(const struct ng_conf *c)
{
    return c->max_nodes > c->nnodes;
}

/* Elastic: the first to arrive decides gen's size (ng.G.size), once MIN
 * have arrived and the last call passed, or MAX at once; everyone reads
 * it.  0, 1 when stop said so, -1 with err. */
static int group_size(struct nodegroup *ng, int gen, int self, int *size,
                      int (*stop)(void *), void *ctx, struct err *err)
{
    const struct ng_conf *c = &ng->conf;
    long deadline = clock_ms() + c->join_timeout_ms, min_at = 0;
    char k[64], val[32];
    int64_t n = 0;

    *size = c->nnodes;
    if (!elastic(c))
        return 0;
    key(k, sizeof k, gen, "size", -1);
    while (self == 0) {
        if (add(ng, gen, "arrive", -1, 0, &n, err) < 0)
            return -1;
        if (n >= c->nnodes && !min_at)
            min_at = clock_ms();
        if (n >= c->max_nodes || (min_at && clock_ms() - min_at >= c->last_call_ms)) {
            snprintf(val, sizeof val, "%d", n < c->max_nodes ? (int)n : c->max_nodes);
            if (client_put(ng->c, k, val, strlen(val), err) != CLIENT_OK)
                return -1;
            break;
        }
        if (stop && stop(ctx))
            return 1;
        if (clock_ms() > deadline)
            return err_set(err, "only %lld of at least %d nodes joined within "
                           "%d s", (long long)n, c->nnodes,
                           c->join_timeout_ms / 1000);
        nap(100);
    }
    for (;;) {
        void *got = NULL;
        size_t len = 0;
        int rc = client_get(ng->c, k, 1000, &got, &len, err);
        if (rc == CLIENT_OK) {
            rc = len < sizeof val ? (memcpy(val, got, len), val[len] = 0,
                 number(val, 1, c->max_nodes, size)) : -1;
            free(got);
            return rc < 0 ? err_set(err, "the group's size: not a number "
                                    "of nodes") : 0;
        }
        if (rc != CLIENT_TIMEOUT)
            return -1;
        if (stop && stop(ctx))
            return 1;
    }
}

/* Elastic, arrived after gen's size was set: wait until the group moves
 * to its next generation (it restarts to take this node in). */
static int wait_next(struct nodegroup *ng, int gen, int (*stop)(void *),
                     void *ctx, struct err *err)
{
    int now = gen;

    while (now <= gen) {
        if (stop && stop(ctx))
            return 1;
        nap(100);   /* well inside any last call */
        if (current_gen(ng, &now, err) < 0)
            return -1;
    }
    return 0;
}

/* Take a node rank in gen (or a later one, elastic) and its size. */
static int take_place(struct nodegroup *ng, int gen, int (*stop)(void *),
                      void *ctx, struct ng_group *g, struct err *err)
{
    int rc;

    for (;;) {
        if (gen < 0 && current_gen(ng, &gen, err) < 0)
            return -1;
        if (open_gen(ng, gen, err) < 0 ||
            take_rank(ng, gen, &g->self, err) < 0)
            return -1;
        rc = group_size(ng, gen, g->self, &g->nnodes, stop, ctx, err);
        if (rc != 0 || g->self < g->nnodes)
            break;
        if ((rc = wait_next(ng, gen, stop, ctx, err)) != 0)
            break;
        gen = -1;
    }
    g->gen = gen;
    return rc;
}

int ng_join(struct nodegroup *ng, int gen, int (*stop)(void *ctx), void *ctx,
            struct ng_group *g, struct err *err)
{
    int rc;

    memset(g, 0, sizeof *g);
    if (ng->conf.nnodes < 1 || ng->conf.nnodes > NG_MAX_NODES ||
        ng->conf.max_nodes > NG_MAX_NODES)
        return err_set(err, "--nnodes %d: 1 to %d", ng->conf.nnodes,
                       NG_MAX_NODES);
    rc = take_place(ng, gen, stop, ctx, g, err);
    if (rc != 0)
        return rc;
    rc = -1;
    g->nodes = calloc((size_t)g->nnodes, sizeof *g->nodes);
    if (!g->nodes)
        return err_set(err, "out of memory");
    if (publish(ng, g->gen, g->self, err) == 0)
        rc = gather(ng, g, stop, ctx, err);
    if (rc != 0)
        ng_group_free(g);
    return rc;
}

void ng_group_free(struct ng_group *g)
{
    free(g->nodes);
    g->nodes = NULL;
}

int ng_ranks_broker(struct nodegroup *ng, const struct ng_group *g,
                    const char *addr, char *out, size_t len,
                    int (*stop)(void *ctx), void *ctx, struct err *err)
{
    long deadline = clock_ms() + ng->conf.join_timeout_ms;
    char k[64], host[NG_ADDR_MAX + 8];
    int port;

    key(k, sizeof k, g->gen, "ranks", -1);
    if (addr)
        return client_put(ng->c, k, addr, strlen(addr), err) == CLIENT_OK ?
               0 : -1;
    for (;;) {
        void *val = NULL;
        size_t n = 0;
        int rc = client_get(ng->c, k, 1000, &val, &n, err);
        if (rc == CLIENT_OK) {
            rc = n < len && !memchr(val, '\0', n) ? 0 : -1;
            if (rc == 0) {
                memcpy(out, val, n);
                out[n] = '\0';
                rc = client_parse_addr(out, host, sizeof host, &port, err);
            }
            free(val);
            return rc < 0 ? err_prefix(err, "the ranks' broker") : 0;
        }
        if (rc != CLIENT_TIMEOUT)
            return -1;
        if (stop && stop(ctx))
            return 1;
        if (clock_ms() > deadline)
            return err_set(err, "node rank 0 did not say where the ranks' "
                           "broker is");
    }
}

int ng_watch_begin(struct nodegroup *ng, const struct ng_group *g,
                   struct err *err)
{
    long now = clock_ms();

    free(ng->hb);
    free(ng->seen_ms);
    ng->hb = calloc((size_t)g->nnodes, sizeof *ng->hb);
    ng->seen_ms = calloc((size_t)g->nnodes, sizeof *ng->seen_ms);
    ng->nwatch = g->nnodes;
    if (!ng->hb || !ng->seen_ms)
        return err_set(err, "out of memory");
    for (int i = 0; i < g->nnodes; i++)
        ng->seen_ms[i] = now;
    return 0;
}

/* Post e unless another outcome came first. */
static int post_first(struct nodegroup *ng, int gen, const struct ng_end *e,
                      struct err *err)
{
    char k[64], val[128];
    int64_t seq = 0;

    if (ng_end_format(e, val, sizeof val) < 0)
        return err_set(err, "outcome too long");
    if (add(ng, gen, "endseq", -1, 1, &seq, err) < 0)
        return -1;
    if (seq != 1)
        return 0;
    key(k, sizeof k, gen, "end", -1);
    return client_put(ng->c, k, val, strlen(val), err) == CLIENT_OK ? 0 : -1;
}

int ng_watch(struct nodegroup *ng, const struct ng_group *g, int wait_ms,
             struct ng_end *e, struct err *err)
{
    long now = clock_ms();
    int64_t v = 0;

    if (ng->nwatch != g->nnodes)
        return err_set(err, "ng_watch before ng_watch_begin");
    if (add(ng, g->gen, "hb", g->self, 1, NULL, err) < 0)
        return -1;
    for (int i = 0; i < g->nnodes; i++) {
        if (i == g->self)
            continue;
        if (add(ng, g->gen, "hb", i, 0, &v, err) < 0)
            return -1;
        if (v != ng->hb[i]) {
            ng->hb[i] = v;
            ng->seen_ms[i] = now;
        } else if (now - ng->seen_ms[i] > ng->conf.hb_timeout_ms) {
            struct ng_end lost = { .kind = NG_LOST, .node = i };
            if (post_first(ng, g->gen, &lost, err) < 0)
                return -1;
            ng->seen_ms[i] = now;   /* posted once per timeout at most */
        }
    }
    if (elastic(&ng->conf) && g->nnodes < ng->conf.max_nodes &&
        g->gen < ng->conf.self.max_restarts) {
        struct ng_end grow = { .kind = NG_GROW };
        if (add(ng, g->gen, "arrive", -1, 0, &v, err) < 0 ||
            (v > g->nnodes && post_first(ng, g->gen, &grow, err) < 0))
            return -1;
    }
    return ng_outcome(ng, g, wait_ms, e, err);
}

int ng_post(struct nodegroup *ng, const struct ng_group *g,
            const struct ng_end *e, struct err *err)
{
    struct ng_end ok = { .kind = NG_OK };
    int64_t done = 0;

    if (e)
        return post_first(ng, g->gen, e, err);
    if (add(ng, g->gen, "done", -1, 1, &done, err) < 0)
        return -1;
    return done == g->nnodes ? post_first(ng, g->gen, &ok, err) : 0;
}

int ng_outcome(struct nodegroup *ng, const struct ng_group *g, int wait_ms,
               struct ng_end *e, struct err *err)
{
    char k[64];
    void *val = NULL;
    size_t len = 0;
    int rc;

    key(k, sizeof k, g->gen, "end", -1);
    rc = client_get(ng->c, k, wait_ms, &val, &len, err);
    if (rc == CLIENT_TIMEOUT || (rc == CLIENT_NOTFOUND && wait_ms == 0))
        return 0;
    if (rc != CLIENT_OK)
        return -1;
    rc = ng_end_parse(val, len, g->nnodes, g->nranks, e, err) < 0 ? -1 : 1;
    free(val);
    return rc;
}

int ng_leave(struct nodegroup *ng, const struct ng_group *g, int expect,
             int wait_ms, struct err *err)
{
    long deadline = clock_ms() + wait_ms;
    int64_t n = 0;

    if (add(ng, g->gen, "left", -1, 1, &n, err) < 0)
        return -1;
    while (wait_ms > 0 && n < expect && clock_ms() < deadline) {
        struct timespec ts = { 0, 50 * 1000000L };
        nanosleep(&ts, NULL);
        if (add(ng, g->gen, "left", -1, 0, &n, err) < 0)
            return -1;
    }
    return 0;
}
