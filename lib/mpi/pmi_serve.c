/* pmi_serve.c - the simple PMI wire on socketpairs (pmi_serve.h). */
#include "mpi/pmi_serve.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mpi/pmi_serve_int.h"
#include "mpi/pmi_wire.h"

#define MAPPING_MAX 4096
#define STORE_MAX (1 << 20)     /* keys: MPICH puts a few per rank */

struct kv {
    char *key, *val;            /* owned; key NULL: a free slot */
};

/* One served rank: its engine and both ends of its socketpair. */
struct conn {
    struct pmi_serve *s;
    int rank;
    int fd, child_fd;           /* -1 when closed */
    struct pmi_wire *w;
};

struct pmi_serve {
    const struct plan *plan;
    struct pmi_serve_opts o;
    struct pmi_wire_job job;
    char kvsname[208];
    char mapping[MAPPING_MAX];
    struct conn *conns;         /* owned, o.nranks */
    int *conn_of;               /* owned: per plan rank, its conn or -1 */
    int epfd;
    int in_fence;               /* ranks waiting in the fence */
    int abort_rank, abort_code; /* the first MPI_Abort; rank -1: none */
    struct kv *kv;              /* owned: open addressing, cap slots */
    size_t nkv, cap;
    /* across nodes */
    char broker[300], token[80], job_id[160];
    int self_node;
    unsigned char *has_ranks;   /* owned: per plan node, it has ranks */
    char *pend;                 /* owned: this node's puts since the last
                                   fence, "key\0val\0"... */
    size_t npend, pendcap;
    unsigned fence_seq;
    int attempt;                /* pmi_serve_begin's count: in the keys */
    int exchanging;             /* a fence's exchange is out */
    int notify[2];              /* its results come back on [0]; -1 */
};

static uint64_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static struct kv *slot(struct kv *tab, size_t cap, const char *key)
{
    size_t i = (size_t)hash(key) & (cap - 1);

    while (tab[i].key && strcmp(tab[i].key, key) != 0)
        i = (i + 1) & (cap - 1);
    return &tab[i];
}

static int grow(struct pmi_serve *s)
{
    size_t cap = s->cap ? 2 * s->cap : 256;
    struct kv *tab = calloc(cap, sizeof *tab);

    if (!tab)
        return -1;
    for (size_t i = 0; i < s->cap; i++)
        if (s->kv[i].key)
            *slot(tab, cap, s->kv[i].key) = s->kv[i];
    free(s->kv);
    s->kv = tab;
    s->cap = cap;
    return 0;
}

static void store_clear(struct pmi_serve *s)
{
    for (size_t i = 0; i < s->cap; i++) {
        free(s->kv[i].key);
        free(s->kv[i].val);
    }
    free(s->kv);
    s->kv = NULL;
    s->nkv = s->cap = 0;
}

static int store_put(void *ctx, const char *key, const char *val)
{
    struct pmi_serve *s = ctx;
    struct kv *e;
    char *v;

    if (s->nkv >= STORE_MAX || ((s->nkv + 1) * 2 > s->cap && grow(s) < 0))
        return -1;
    e = slot(s->kv, s->cap, key);
    v = strdup(val);
    if (!v || (!e->key && !(e->key = strdup(key)))) {
        free(v);
        return -1;
    }
    if (!e->val)
        s->nkv++;
    free(e->val);
    e->val = v;
    return 0;
}

static int on_put(void *ctx, int rank, const char *key, const char *val)
{
    struct pmi_serve *s = ((struct conn *)ctx)->s;

    (void)rank;
    if (store_put(s, key, val) < 0)
        return -1;
    /* across nodes the next fence sends it to the other nodes */
    if (s->broker[0] &&
        pmi_pairs_add(&s->pend, &s->npend, &s->pendcap, key, val) < 0)
        return -1;
    return 0;
}

static const char *on_get(void *ctx, int rank, const char *key)
{
    struct pmi_serve *s = ((struct conn *)ctx)->s;

    (void)rank;
    return s->cap ? slot(s->kv, s->cap, key)->val : NULL;
}

/* The fence ended (rc 0, else failed): every rank here goes on. */
static void fence_end(struct pmi_serve *s, int rc)
{
    struct err err = { "" };

    s->in_fence = 0;
    for (int i = 0; i < s->o.nranks; i++) {
        struct conn *c = &s->conns[i];
        if (c->w && pmi_wire_in_fence(c->w) &&
            pmi_wire_fence_done(c->w, rc, &err) < 0 && s->o.note)
            s->o.note(s->o.note_ctx, c->rank, err.msg);
    }
}

static void on_fence(void *ctx, int rank)
{
    struct pmi_serve *s = ((struct conn *)ctx)->s;

    (void)rank;
    s->in_fence++;
}

static int on_respond(void *ctx, int rank, const char *buf, size_t len)
{
    struct conn *c = ctx;

    (void)rank;
    while (len > 0 && c->fd >= 0) {
        ssize_t n = send(c->fd, buf, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        buf += n;
        len -= (size_t)n;
    }
    return c->fd >= 0 ? 0 : -1;
}

static void on_abort(void *ctx, int rank, int code, const char *msg)
{
    struct pmi_serve *s = ((struct conn *)ctx)->s;

    (void)msg;
    if (s->abort_rank >= 0)
        return;
    s->abort_rank = rank;
    /* a code 0 would read as success: MPI_Abort is a failure */
    s->abort_code = code > 0 && code < 256 ? code : code < 0 ? 1 : code & 255;
    if (s->abort_code == 0)
        s->abort_code = 1;
}

int pmi_serve_aborted(const struct pmi_serve *s, int *rank, int *code)
{
    if (s->abort_rank < 0)
        return 0;
    *rank = s->abort_rank;
    *code = s->abort_code;
    return 1;
}

static const struct pmi_wire_ops wire_ops = {
    on_put, on_get, on_fence, on_respond, on_abort,
};

/* Which conn serves each rank, the nodes with ranks, and the process
 * mapping. */
static int plan_tables(struct pmi_serve *s, struct err *err)
{
    const struct plan *p = s->plan;

    s->conn_of = malloc((size_t)p->nranks * sizeof *s->conn_of);
    s->has_ranks = calloc((size_t)p->nnodes + 1, 1);
    if (!s->conn_of || !s->has_ranks)
        return err_set(err, "out of memory");
    for (int r = 0; r < p->nranks; r++) {
        s->conn_of[r] = -1;
        s->has_ranks[p->rank_node[r]] = 1;
    }
    /* none (too many blocks): MPICH then finds its node mates itself */
    if (pmi_wire_mapping(p->rank_node, p->nranks, s->mapping,
                         sizeof s->mapping) < 0)
        s->mapping[0] = '\0';
    return 0;
}

struct pmi_serve *pmi_serve_create(const struct pmi_serve_opts *o,
                                   struct err *err)
{
    struct pmi_serve *s = calloc(1, sizeof *s);

    if (!s) {
        err_set(err, "out of memory");
        return NULL;
    }
    s->o = *o;
    s->plan = o->plan;
    s->epfd = -1;
    s->abort_rank = -1;
    s->notify[0] = s->notify[1] = -1;
    s->self_node = o->nranks > 0 ? o->plan->rank_node[o->ranks[0]] : 0;
    if (o->broker && o->token) {
        snprintf(s->broker, sizeof s->broker, "%s", o->broker);
        snprintf(s->token, sizeof s->token, "%s", o->token);
        snprintf(s->job_id, sizeof s->job_id, "%.150s",
                 o->job_id ? o->job_id : "");
    }
    snprintf(s->kvsname, sizeof s->kvsname, "%.200s", o->kvsname);
    s->job = (struct pmi_wire_job){ .size = o->plan->nranks,
                                    .kvsname = s->kvsname,
                                    .mapping = s->mapping };
    s->conns = calloc((size_t)o->nranks + 1, sizeof *s->conns);
    if (!s->conns) {
        err_set(err, "out of memory");
        pmi_serve_destroy(s);
        return NULL;
    }
    if (plan_tables(s, err) < 0) {
        pmi_serve_destroy(s);
        return NULL;
    }
    for (int i = 0; i < o->nranks; i++) {
        s->conns[i] = (struct conn){ .s = s, .rank = o->ranks[i], .fd = -1,
                                     .child_fd = -1 };
        s->conn_of[o->ranks[i]] = i;
    }
    return s;
}

void pmi_serve_destroy(struct pmi_serve *s)
{
    if (!s)
        return;
    pmi_serve_end(s);
    free(s->conns);
    free(s->conn_of);
    free(s->has_ranks);
    free(s);
}

static void conn_close(struct pmi_serve *s, struct conn *c)
{
    if (c->fd >= 0) {
        epoll_ctl(s->epfd, EPOLL_CTL_DEL, c->fd, NULL);
        close(c->fd);
    }
    if (c->child_fd >= 0)
        close(c->child_fd);
    c->fd = c->child_fd = -1;
    if (c->w && pmi_wire_in_fence(c->w))
        s->in_fence--;
    pmi_wire_destroy(c->w);
    c->w = NULL;
}

/* conn's socketpair, engine and place in the epoll set. */
static int conn_open(struct pmi_serve *s, struct conn *c, struct err *err)
{
    int sv[2];
    struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };

    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        return err_set(err, "PMI: cannot make a socket for rank %d: %s (the "
                       "open-file limit, ulimit -n?)", c->rank,
                       strerror(errno));
    c->fd = sv[0];
    c->child_fd = sv[1];
    c->w = pmi_wire_create(&s->job, &wire_ops, c, c->rank, err);
    if (!c->w)
        return -1;
    if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, c->fd, &ev) < 0)
        return err_set(err, "PMI: epoll: %s", strerror(errno));
    return 0;
}

/* The socket the fence exchanges answer on, in the epoll set (ptr NULL). */
static int notify_open(struct pmi_serve *s, struct err *err)
{
    struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };

    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s->notify) < 0) {
        s->notify[0] = s->notify[1] = -1;
        return err_set(err, "PMI: socketpair: %s", strerror(errno));
    }
    if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->notify[0], &ev) < 0)
        return err_set(err, "PMI: epoll: %s", strerror(errno));
    return 0;
}

int pmi_serve_begin(struct pmi_serve *s, struct err *err)
{
    pmi_serve_end(s);
    s->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (s->epfd < 0)
        return err_set(err, "PMI: epoll: %s", strerror(errno));
    s->fence_seq = 0;
    s->attempt++;
    if (s->broker[0] && notify_open(s, err) < 0) {
        pmi_serve_end(s);
        return -1;
    }
    for (int i = 0; i < s->o.nranks; i++)
        if (conn_open(s, &s->conns[i], err) < 0) {
            pmi_serve_end(s);
            return -1;
        }
    return 0;
}

void pmi_serve_end(struct pmi_serve *s)
{
    for (int i = 0; i < s->o.nranks; i++)
        conn_close(s, &s->conns[i]);
    if (s->epfd >= 0)
        close(s->epfd);
    s->epfd = -1;
    s->in_fence = 0;
    s->abort_rank = -1;
    /* an exchange still out finds its socket closed and frees itself */
    for (int i = 0; i < 2; i++)
        if (s->notify[i] >= 0)
            close(s->notify[i]);
    s->notify[0] = s->notify[1] = -1;
    s->exchanging = 0;
    free(s->pend);
    s->pend = NULL;
    s->npend = s->pendcap = 0;
    store_clear(s);
}

int pmi_serve_child_fd(const struct pmi_serve *s, int rank)
{
    if (rank < 0 || rank >= s->plan->nranks || s->conn_of[rank] < 0)
        return -1;
    return s->conns[s->conn_of[rank]].child_fd;
}

int pmi_serve_rank_env(const struct pmi_serve *s, int rank,
                       struct envset *out, struct err *err)
{
    const struct plan *p = s->plan;
    int fd = pmi_serve_child_fd(s, rank);
    int node = rank >= 0 && rank < p->nranks ? p->rank_node[rank] : 0;

    if (fd < 0)
        return err_set(err, "PMI: rank %d is not served here", rank);
    if (envset_setint(out, "PMI_FD", fd, err, "dlrun's PMI server") < 0 ||
        envset_setint(out, "PMI_RANK", rank, err, "the rank") < 0 ||
        envset_setint(out, "PMI_SIZE", p->nranks, err, "ranks") < 0 ||
        envset_setint(out, "MPI_LOCALNRANKS", p->nodes[node].nranks, err,
                      "ranks on this node") < 0 ||
        envset_setint(out, "MPI_LOCALRANKID", p->rank_local[rank], err,
                      "the rank's index on its node") < 0)
        return -1;
    /* MPICH 4.1 and later choose the wire by this; earlier ones speak
     * the version they were built for, which the server answers too */
    if (s->o.version == 2 &&
        envset_set(out, "MPIR_CVAR_PMI_VERSION", "2", err, "--mpi=pmi2") < 0)
        return -1;
    return 0;
}

void pmi_serve_started(struct pmi_serve *s)
{
    for (int i = 0; i < s->o.nranks; i++)
        if (s->conns[i].child_fd >= 0) {
            close(s->conns[i].child_fd);
            s->conns[i].child_fd = -1;
        }
}

int pmi_serve_fd(const struct pmi_serve *s)
{
    return s->epfd;
}

/* conn is readable: feed its bytes; closed at its end or a wire error. */
static void conn_read(struct pmi_serve *s, struct conn *c)
{
    char buf[16384];
    struct err err = { "" };
    ssize_t n = recv(c->fd, buf, sizeof buf, MSG_DONTWAIT);

    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n > 0 && pmi_wire_feed(c->w, buf, (size_t)n, &err) == 0)
        return;
    /* a rank that ends without finalize is its supervisor's to report */
    if (n > 0 && s->o.note)
        s->o.note(s->o.note_ctx, c->rank, err.msg);
    conn_close(s, c);
}

/* Ranks still connected and not in the fence. */
static int fence_missing(const struct pmi_serve *s)
{
    int open = 0;

    for (int i = 0; i < s->o.nranks; i++)
        open += s->conns[i].w != NULL;
    return open - s->in_fence;
}

/* Every rank here is in the fence: send this node's puts to the other
 * nodes and wait for theirs (in a thread: exchange_done ends it). */
static void exchange_start(struct pmi_serve *s)
{
    char prefix[220];
    struct err err = { "" };
    struct pmi_fence_req r = {
        .broker = s->broker, .token = s->token, .prefix = prefix,
        .node = s->self_node, .nnodes = s->plan->nnodes,
        .has_ranks = s->has_ranks, .data = s->pend, .n = s->npend,
    };

    /* every node counts the same fences in the same order */
    snprintf(prefix, sizeof prefix, "pmi.%s.%d.f%u", s->job_id, s->attempt,
             ++s->fence_seq);
    if (pmi_fence_start(&r, s->notify[1], &err) < 0) {
        if (s->o.note)
            s->o.note(s->o.note_ctx, -1, err.msg);
        fence_end(s, 1);
        return;
    }
    s->exchanging = 1;
    s->npend = 0;
}

static int merge_pair(void *ctx, const char *key, const char *val)
{
    return store_put(ctx, key, val);
}

/* An exchange came back: the other nodes' puts into the store, and every
 * rank here goes on. */
static void exchange_done(struct pmi_serve *s)
{
    struct pmi_fence_result *res = pmi_fence_take(s->notify[0]);
    int ok;

    if (!res)
        return;
    s->exchanging = 0;
    ok = res->ok && pmi_pairs_each(res->data, res->len, merge_pair, s) >= 0;
    if (!ok && s->o.note)
        s->o.note(s->o.note_ctx, -1, res->ok ? "PMI fence across nodes: a "
                  "node sent a malformed key or value" : res->msg);
    pmi_fence_result_free(res);
    fence_end(s, ok ? 0 : 1);
}

int pmi_serve_step(struct pmi_serve *s, struct err *err)
{
    struct epoll_event ev[64];
    int n;

    if (s->epfd < 0)
        return 0;
    n = epoll_wait(s->epfd, ev, 64, 0);
    if (n < 0 && errno != EINTR)
        return err_set(err, "PMI: epoll_wait: %s", strerror(errno));
    for (int i = 0; i < n; i++) {
        if (ev[i].data.ptr)
            conn_read(s, ev[i].data.ptr);
        else
            exchange_done(s);
    }
    if (s->in_fence > 0 && !s->exchanging && fence_missing(s) == 0) {
        if (s->broker[0])
            exchange_start(s);
        else
            fence_end(s, 0);
    }
    return 0;
}
