/* broker_relay.c - see broker_relay.h. */
#include "rendezvous/broker_relay.h"

#include <stdlib.h>
#include <string.h>

#include "rendezvous/broker_store.h"

#define AUTH_ID UINT32_MAX      /* the relay's own AUTH upstream */
#define NSHARE 1024             /* buckets of in-flight GETs */
#define DEFAULT_LINGER_MS 2
#define DEFAULT_MAX_WAITING 256
#define DEFAULT_AUTH_MS 5000
#define DEFAULT_MAX_UNAUTH 256
#define DEFAULT_MAX_PEERS 4096
#define FOREVER UINT64_MAX

/* One local request waiting for the parent's answer. */
struct member {
    struct member *next;
    struct br_peer *peer;       /* holds a reference */
    uint32_t id, weight;
    uint64_t deadline;          /* FOREVER: none */
    int waits;                  /* counted in its peer's waiting */
};

/* One request in flight upstream; its id there is its slot + 1. */
struct flight {
    struct flight *hnext;       /* in the share table (GETs) */
    int shared;                 /* in the share table now */
    uint8_t op;
    uint32_t count;             /* BARRIER */
    uint64_t deadline;          /* GET: the upstream request's */
    uint64_t hash;
    struct member *members;
    size_t klen;
    uint8_t key[];
};

/* Barrier arrivals held before they go up as one. */
struct group {
    struct group *next;
    uint32_t count, weight;
    uint64_t first_ms;
    struct member *members;
    size_t klen;
    uint8_t key[];
};

struct br_peer {
    struct br_peer *prev, *next;
    struct br_relay *r;
    struct bp_conn pc;
    void *user;
    size_t refs;                /* members that name it */
    size_t waiting;             /* its members that wait (max_waiting) */
    int gone, auth_wait, unauth;
    uint32_t auth_id;
    uint64_t auth_deadline;
    struct br_peer *aprev, *anext;  /* not yet authenticated, oldest first */
};

struct br_relay {
    struct br_relay_conf conf;
    uint8_t token[TOKEN_BYTES];
    struct br_relay_ops ops;
    void *ctx;
    struct bp_conn up;
    size_t max_value;
    struct br_peer *peers;
    struct br_peer *ahead, *atail;  /* not yet authenticated */
    size_t nunauth;
    struct flight **fl;         /* by upstream id - 1; NULL: free */
    uint32_t *free_ids;
    size_t nfl, nfree;
    struct flight *share[NSHARE];
    struct group *groups;
    uint8_t *buf;
    size_t cap;
    uint64_t now;
    uint8_t auth_status;        /* the parent's answer to the relay's AUTH */
    struct br_relay_stats st;
};

static uint64_t hash_key(const uint8_t *k, size_t n)
{
    uint64_t h = 1469598103934665603ull;

    while (n--)
        h = (h ^ *k++) * 1099511628211ull;
    return h;
}

static uint64_t deadline_of(uint64_t now, uint32_t timeout_ms)
{
    return timeout_ms == BP_WAIT_FOREVER ? FOREVER : now + timeout_ms;
}

/* ---- output ---- */

/* Encode m into r's buffer and hand it to p (NULL: the parent).  Short of
 * memory, the frame is lost and the peer's wait runs into its own
 * deadline or broken-connection check: nothing better can be done here. */
static void emit(struct br_relay *r, struct br_peer *p, const struct bp_msg *m)
{
    size_t n = bp_frame_size(m);

    if (n > r->cap) {
        uint8_t *b = realloc(r->buf, n);
        if (!b)
            return;
        r->buf = b;
        r->cap = n;
    }
    bp_encode(r->buf, m);
    if (!p)
        r->ops.up(r->ctx, r->buf, n);
    else if (!p->gone)
        r->ops.down(r->ctx, p->user, r->buf, n);
}

static void answer(struct br_relay *r, struct br_peer *p, uint8_t op,
                   uint32_t id, uint8_t status, int64_t arg,
                   const uint8_t *val, size_t vlen)
{
    struct bp_msg m = { .op = op, .status = status, .id = id, .arg = arg,
                        .val = val, .vlen = vlen };

    emit(r, p, &m);
}

/* ---- peers and members ---- */

static void peer_unref(struct br_peer *p)
{
    if (--p->refs == 0 && p->gone)
        free(p);
}

/* waits: the request waits (GET or BARRIER with a timeout), counted
 * against p's max_waiting until it is answered. */
static struct member *member_new(struct br_peer *p, uint32_t id,
                                 uint32_t weight, uint64_t deadline,
                                 int waits)
{
    struct member *mb = calloc(1, sizeof *mb);

    if (!mb)
        return NULL;
    mb->peer = p;
    mb->id = id;
    mb->weight = weight;
    mb->deadline = deadline;
    mb->waits = waits;
    p->waiting += waits != 0;
    p->refs++;
    return mb;
}

static void member_free(struct member *mb)
{
    mb->peer->waiting -= mb->waits != 0;
    peer_unref(mb->peer);
    free(mb);
}

/* p already has max_waiting requests waiting: this one is answered
 * LIMIT here, and the upstream connection, which carries every local
 * peer's, never sees it.  1 when refused. */
static int over_waiting(struct br_relay *r, struct br_peer *p,
                        const struct bp_msg *m)
{
    if (p->waiting < r->conf.max_waiting)
        return 0;
    answer(r, p, m->op, m->id, BP_LIMIT, 0, NULL, 0);
    r->st.refused_waiting++;
    return 1;
}

static void members_free(struct member *mb)
{
    while (mb) {
        struct member *next = mb->next;
        member_free(mb);
        mb = next;
    }
}

/* Answer every member of list with one outcome, and free them. */
static void answer_all(struct br_relay *r, struct member *list, uint8_t op,
                       uint8_t status, int64_t arg, const uint8_t *val,
                       size_t vlen)
{
    while (list) {
        struct member *next = list->next;
        answer(r, list->peer, op, list->id, status, arg, val, vlen);
        member_free(list);
        list = next;
    }
}

/* ---- flights (requests sent up) ---- */

static struct flight *flight_new(struct br_relay *r, uint8_t op,
                                 const uint8_t *key, size_t klen,
                                 uint32_t *id)
{
    struct flight *f = calloc(1, sizeof *f + klen);

    if (!f)
        return NULL;
    if (!r->nfree) {
        struct flight **fl = realloc(r->fl, (r->nfl + 1) * sizeof *fl);
        uint32_t *ids = fl ? realloc(r->free_ids,
                                     (r->nfl + 1) * sizeof *ids) : NULL;
        if (fl)
            r->fl = fl;
        if (!ids) {
            free(f);
            return NULL;
        }
        r->free_ids = ids;
        r->free_ids[r->nfree++] = (uint32_t)r->nfl;
        r->fl[r->nfl++] = NULL;
    }
    *id = r->free_ids[--r->nfree];
    r->fl[*id] = f;
    *id += 1;
    f->op = op;
    f->klen = klen;
    memcpy(f->key, key, klen);
    f->hash = hash_key(key, klen);
    return f;
}

static void unshare(struct br_relay *r, struct flight *f)
{
    struct flight **pp = &r->share[f->hash % NSHARE];

    if (!f->shared)
        return;
    while (*pp != f)
        pp = &(*pp)->hnext;
    *pp = f->hnext;
    f->shared = 0;
}

static void flight_end(struct br_relay *r, uint32_t id)
{
    struct flight *f = r->fl[id - 1];

    unshare(r, f);
    members_free(f->members);
    free(f);
    r->fl[id - 1] = NULL;
    r->free_ids[r->nfree++] = id - 1;
}

/* The in-flight GET of key that may be shared, or NULL. */
static struct flight *share_find(struct br_relay *r, const uint8_t *key,
                                 size_t klen)
{
    uint64_t h = hash_key(key, klen);
    struct flight *f;

    for (f = r->share[h % NSHARE]; f; f = f->hnext)
        if (f->hash == h && f->klen == klen && !memcmp(f->key, key, klen))
            return f;
    return NULL;
}

/* A local write to key: later GETs of it must see it, so they no longer
 * join a GET sent before it. */
static void share_end_key(struct br_relay *r, const uint8_t *key, size_t klen)
{
    struct flight *f = share_find(r, key, klen);

    if (f)
        unshare(r, f);
}

/* Send m up as flight f (id), with members already attached. */
static void send_up(struct br_relay *r, const struct bp_msg *m, uint32_t id)
{
    struct bp_msg up = *m;

    up.id = id;
    emit(r, NULL, &up);
    r->st.sent_up++;
}

/* Forward m from p as it is, answered to p alone.  -1 short of memory. */
static struct flight *forward(struct br_relay *r, struct br_peer *p,
                              const struct bp_msg *m)
{
    uint32_t id;
    struct flight *f = flight_new(r, m->op, m->key, m->klen, &id);

    if (!f)
        return NULL;
    f->members = member_new(p, m->id, 1, deadline_of(r->now, m->timeout_ms),
                            0);
    if (!f->members) {
        flight_end(r, id);
        return NULL;
    }
    f->deadline = f->members->deadline;
    send_up(r, m, id);
    return f;
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* Send up one request of op on key for the members of list (owned from
 * here): a GET with their earliest deadline, or a BARRIER arrival of
 * their summed weight. */
static void launch(struct br_relay *r, uint8_t op, const uint8_t *key,
                   size_t klen, uint32_t count, struct member *list)
{
    struct bp_msg m = { .op = op, .key = key, .klen = klen };
    struct flight *f;
    struct member *mb;
    uint64_t dl = FOREVER;
    uint32_t id, w = 0;
    uint8_t wb[4];

    f = flight_new(r, op, key, klen, &id);
    if (!f) {
        answer_all(r, list, op, BP_LIMIT, 0, NULL, 0);
        return;
    }
    f->members = list;
    f->count = count;
    for (mb = list; mb; mb = mb->next) {
        dl = mb->deadline < dl ? mb->deadline : dl;
        w += mb->weight;
    }
    f->deadline = dl;
    m.timeout_ms = dl == FOREVER ? BP_WAIT_FOREVER
                   : dl > r->now ? (uint32_t)(dl - r->now) : 1;
    if (op == BP_BARRIER) {
        m.arg = count;
        put_be32(wb, w);
        m.val = wb;
        m.vlen = sizeof wb;
        r->st.barrier_groups++;
    } else if (!share_find(r, key, klen)) {
        f->hnext = r->share[f->hash % NSHARE];
        r->share[f->hash % NSHARE] = f;
        f->shared = 1;
    }
    send_up(r, &m, id);
}

static void on_get(struct br_relay *r, struct br_peer *p,
                   const struct bp_msg *m)
{
    uint64_t dl = deadline_of(r->now, m->timeout_ms);
    struct flight *f = m->timeout_ms ? share_find(r, m->key, m->klen) : NULL;
    struct member *mb;

    if (m->timeout_ms && over_waiting(r, p, m))
        return;
    if (f && dl >= f->deadline && (mb = member_new(p, m->id, 1, dl, 1))) {
        mb->next = f->members;
        f->members = mb;
        r->st.gets_shared++;
        return;
    }
    if (!m->timeout_ms) {
        if (!forward(r, p, m))
            answer(r, p, m->op, m->id, BP_LIMIT, 0, NULL, 0);
        return;
    }
    mb = member_new(p, m->id, 1, dl, 1);
    if (!mb) {
        answer(r, p, m->op, m->id, BP_LIMIT, 0, NULL, 0);
        return;
    }
    launch(r, BP_GET, m->key, m->klen, 0, mb);
}

/* ---- barriers ---- */

static struct group **group_find(struct br_relay *r, const uint8_t *key,
                                 size_t klen)
{
    struct group **gp;

    for (gp = &r->groups; *gp; gp = &(*gp)->next)
        if ((*gp)->klen == klen && !memcmp((*gp)->key, key, klen))
            return gp;
    return gp;
}

/* Send the arrivals held in *gp up as one and forget the group. */
static void flush(struct br_relay *r, struct group **gp)
{
    struct group *g = *gp;

    *gp = g->next;
    launch(r, BP_BARRIER, g->key, g->klen, g->count, g->members);
    free(g);
}

/* Hold mb (owned from here) in the group of key for a barrier of count,
 * and send the group up once it is complete. */
static void hold(struct br_relay *r, const uint8_t *key, size_t klen,
                 uint32_t count, struct member *mb)
{
    struct group **gp = group_find(r, key, klen), *g = *gp;

    /* another count, or more than this generation lacks: what is held
     * goes first, so the parent sees the arrivals as the ranks made them */
    if (g && (g->count != count || mb->weight > count - g->weight)) {
        flush(r, gp);
        gp = group_find(r, key, klen);
        g = NULL;
    }
    if (!g) {
        g = calloc(1, sizeof *g + klen);
        if (!g) {
            answer_all(r, mb, BP_BARRIER, BP_LIMIT, 0, NULL, 0);
            return;
        }
        g->count = count;
        g->first_ms = r->now;
        g->klen = klen;
        memcpy(g->key, key, klen);
        *gp = g;
    }
    mb->next = g->members;
    g->members = mb;
    g->weight += mb->weight;
    if (g->weight == count || (r->conf.expect && g->weight >= r->conf.expect))
        flush(r, gp);
}

static void on_barrier(struct br_relay *r, struct br_peer *p,
                       const struct bp_msg *m)
{
    uint32_t w = bs_barrier_weight(m);
    struct member *mb;

    /* not waiting, or malformed: the parent answers it as it is */
    if (!m->timeout_ms || !m->klen || m->arg < 1 || m->arg > UINT32_MAX ||
        !w || w > m->arg) {
        if (!forward(r, p, m))
            answer(r, p, m->op, m->id, BP_LIMIT, 0, NULL, 0);
        return;
    }
    if (over_waiting(r, p, m))
        return;
    mb = member_new(p, m->id, w, deadline_of(r->now, m->timeout_ms), 1);
    if (!mb) {
        answer(r, p, m->op, m->id, BP_LIMIT, 0, NULL, 0);
        return;
    }
    hold(r, m->key, m->klen, (uint32_t)m->arg, mb);
}

/* A TIMEOUT for flight f: its members whose deadline passed get it, the
 * others are sent up again (they joined with later deadlines). */
static void on_timeout(struct br_relay *r, struct flight *f)
{
    struct member *mb = f->members, *expired = NULL, *rest = NULL;

    unshare(r, f);
    f->members = NULL;
    while (mb) {
        struct member *next = mb->next;
        struct member **to = mb->deadline <= r->now ? &expired : &rest;
        mb->next = *to;
        *to = mb;
        mb = next;
    }
    answer_all(r, expired, f->op, BP_TIMEOUT, 0, NULL, 0);
    if (rest)
        launch(r, f->op, f->key, f->klen, f->count, rest);
}

/* ---- local peers ---- */

/* p has not authenticated: at the tail of the list, oldest first. */
static void unauth_link(struct br_relay *r, struct br_peer *p)
{
    p->unauth = 1;
    p->aprev = r->atail;
    p->anext = NULL;
    *(r->atail ? &r->atail->anext : &r->ahead) = p;
    r->atail = p;
    r->nunauth++;
}

static void unauth_unlink(struct br_relay *r, struct br_peer *p)
{
    if (!p->unauth)
        return;
    *(p->aprev ? &p->aprev->anext : &r->ahead) = p->anext;
    *(p->anext ? &p->anext->aprev : &r->atail) = p->aprev;
    p->unauth = 0;
    r->nunauth--;
}

/* Tell p why (an AUTH notice, id 0, as the head's broker sends), let go
 * of it and have the caller close it. */
static void drop_peer(struct br_relay *r, struct br_peer *p, uint8_t status,
                      size_t *counter)
{
    void *user = p->user;

    answer(r, p, BP_AUTH, 0, status, 0, NULL, 0);
    (*counter)++;
    br_relay_peer_gone(r, p);
    r->ops.close(r->ctx, user);
}

static int on_peer_msg(void *ctx, const struct bp_msg *m)
{
    struct br_peer *p = ctx;
    struct br_relay *r = p->r;

    if (m->op == BP_AUTH) {
        unauth_unlink(r, p);
        if (r->st.parent_ready)
            answer(r, p, BP_AUTH, m->id, BP_OK, (int64_t)r->max_value,
                   NULL, 0);
        else
            p->auth_wait = 1;   /* answered with the parent's limit */
        p->auth_id = m->id;
        return 0;
    }
    r->st.requests++;
    switch (m->op) {
    case BP_GET:
        on_get(r, p, m);
        break;
    case BP_BARRIER:
        on_barrier(r, p, m);
        break;
    default:    /* PUT, ADD, DEL: the parent's store decides */
        share_end_key(r, m->key, m->klen);
        if (!forward(r, p, m))
            answer(r, p, m->op, m->id, BP_LIMIT, 0, NULL, 0);
    }
    return 0;
}

/* Room for one more peer: push out the oldest that has not authenticated
 * when max_unauth or max_peers is reached.  0, or -1 when every one of
 * max_peers has authenticated. */
static int make_room(struct br_relay *r, struct err *err)
{
    if (r->ahead && (r->nunauth >= r->conf.max_unauth ||
                     r->st.peers >= r->conf.max_peers))
        drop_peer(r, r->ahead, BP_LIMIT, &r->st.evicted);
    if (r->st.peers < r->conf.max_peers)
        return 0;
    r->st.refused++;
    return err_set(err, "the relay's %zu connections are all in use",
                   r->conf.max_peers);
}

struct br_peer *br_relay_accept(struct br_relay *r, void *user,
                                uint64_t now_ms, struct err *err)
{
    struct br_peer *p;

    r->now = now_ms;
    if (r->st.parent_lost) {
        err_set(err, "the relay lost its parent broker");
        return NULL;
    }
    if (make_room(r, err) < 0)
        return NULL;
    p = calloc(1, sizeof *p);
    if (!p) {
        err_set(err, "out of memory for a connection");
        return NULL;
    }
    p->r = r;
    p->user = user;
    p->auth_deadline = now_ms + r->conf.auth_timeout_ms;
    unauth_link(r, p);
    bp_conn_init(&p->pc, BP_SERVER, r->token, r->max_value, on_peer_msg, p);
    p->next = r->peers;
    if (r->peers)
        r->peers->prev = p;
    r->peers = p;
    r->st.peers++;
    return p;
}

int br_relay_from_peer(struct br_relay *r, struct br_peer *p,
                       const uint8_t *data, size_t len, uint64_t now_ms,
                       struct err *err)
{
    r->now = now_ms;
    if (bp_feed(&p->pc, data, len, err) == 0)
        return 0;
    if (p->pc.auth_refused)     /* the notice the broker sends too */
        answer(r, p, BP_AUTH, 0, BP_INVALID, 0, NULL, 0);
    return -1;
}

/* Take p's arrivals out of the groups held (they never went up). */
static void withdraw(struct br_relay *r, struct br_peer *p)
{
    struct group **gp = &r->groups;

    while (*gp) {
        struct group *g = *gp;
        struct member **mp = &g->members;

        while (*mp) {
            struct member *mb = *mp;
            if (mb->peer != p) {
                mp = &mb->next;
                continue;
            }
            *mp = mb->next;
            g->weight -= mb->weight;
            member_free(mb);
        }
        if (g->members) {
            gp = &g->next;
            continue;
        }
        *gp = g->next;
        free(g);
    }
}

void br_relay_peer_gone(struct br_relay *r, struct br_peer *p)
{
    unauth_unlink(r, p);
    *(p->prev ? &p->prev->next : &r->peers) = p->next;
    if (p->next)
        p->next->prev = p->prev;
    r->st.peers--;
    bp_conn_free(&p->pc);
    p->gone = 1;
    p->refs++;          /* withdraw must not free p under us */
    withdraw(r, p);
    peer_unref(p);
}

/* ---- the parent ---- */

static void parent_ready(struct br_relay *r, int64_t max_value)
{
    struct br_peer *p;

    r->max_value = max_value > 0 && (uint64_t)max_value < BP_MAX_VALUE_CEILING
                       ? (size_t)max_value : BP_MAX_VALUE_CEILING;
    r->st.parent_ready = 1;
    for (p = r->peers; p; p = p->next) {
        p->pc.max_value = r->max_value;
        if (p->auth_wait)
            answer(r, p, BP_AUTH, p->auth_id, BP_OK, (int64_t)r->max_value,
                   NULL, 0);
        p->auth_wait = 0;
    }
}

static int on_parent_msg(void *ctx, const struct bp_msg *m)
{
    struct br_relay *r = ctx;
    struct flight *f;

    if (m->op == BP_AUTH) {
        r->auth_status = m->status;
        if (m->id != AUTH_ID || m->status != BP_OK || r->st.parent_ready)
            return -1;  /* refused (a notice), or an answer out of turn */
        parent_ready(r, m->arg);
        return 0;
    }
    if (m->id == 0 || m->id > r->nfl || !(f = r->fl[m->id - 1]) ||
        f->op != m->op)
        return -1;
    if (m->status == BP_TIMEOUT && m->op != BP_PUT)
        on_timeout(r, f);
    else
        answer_all(r, f->members, m->op, m->status, m->arg, m->val, m->vlen);
    f->members = NULL;
    flight_end(r, m->id);
    return 0;
}

int br_relay_from_parent(struct br_relay *r, const uint8_t *data, size_t len,
                         uint64_t now_ms, struct err *err)
{
    r->now = now_ms;
    if (bp_feed(&r->up, data, len, err) == 0)
        return 0;
    if (strcmp(err->msg, "stopped"))
        return -1;
    if (r->st.parent_ready)
        return err_set(err, "the parent broker sent an answer to no request");
    return err_set(err, "the parent broker refused the relay's AUTH: %s",
                   bp_status_name(r->auth_status));
    return -1;
}

void br_relay_parent_lost(struct br_relay *r)
{
    size_t i;

    r->st.parent_lost = 1;
    while (r->peers) {
        struct br_peer *p = r->peers;
        void *user = p->user;

        br_relay_peer_gone(r, p);
        r->ops.close(r->ctx, user);
    }
    for (i = 0; i < r->nfl; i++)
        if (r->fl[i])
            flight_end(r, (uint32_t)i + 1);
}

/* ---- the relay ---- */

struct br_relay *br_relay_create(const struct br_relay_conf *conf,
                                 const struct br_relay_ops *ops, void *ctx,
                                 struct err *err)
{
    struct br_relay *r = calloc(1, sizeof *r);
    struct bp_msg auth = { .op = BP_AUTH, .id = AUTH_ID,
                           .arg = BP_VERSION_WEIGHTED, .vlen = TOKEN_BYTES };

    if (!r) {
        err_set(err, "out of memory for a relay");
        return NULL;
    }
    r->conf = *conf;
    memcpy(r->token, conf->token, TOKEN_BYTES);
    r->conf.token = r->token;
    if (!r->conf.linger_ms)
        r->conf.linger_ms = DEFAULT_LINGER_MS;
    if (!r->conf.max_waiting)
        r->conf.max_waiting = DEFAULT_MAX_WAITING;
    if (!r->conf.auth_timeout_ms)
        r->conf.auth_timeout_ms = DEFAULT_AUTH_MS;
    if (!r->conf.max_unauth)
        r->conf.max_unauth = DEFAULT_MAX_UNAUTH;
    if (!r->conf.max_peers)
        r->conf.max_peers = DEFAULT_MAX_PEERS;
    r->ops = *ops;
    r->ctx = ctx;
    r->max_value = BP_MAX_VALUE_CEILING;
    bp_conn_init(&r->up, BP_CLIENT, NULL, BP_MAX_VALUE_CEILING, on_parent_msg,
                 r);
    auth.val = r->token;
    emit(r, NULL, &auth);
    return r;
}

void br_relay_destroy(struct br_relay *r)
{
    size_t i;

    if (!r)
        return;
    while (r->peers)
        br_relay_peer_gone(r, r->peers);
    for (i = 0; i < r->nfl; i++)
        if (r->fl[i])
            flight_end(r, (uint32_t)i + 1);
    bp_conn_free(&r->up);
    free(r->fl);
    free(r->free_ids);
    free(r->buf);
    free(r);
}

void br_relay_tick(struct br_relay *r, uint64_t now_ms)
{
    struct group **gp = &r->groups;

    r->now = now_ms;
    while (r->ahead && r->ahead->auth_deadline <= now_ms)
        drop_peer(r, r->ahead, BP_TIMEOUT, &r->st.auth_expired);
    while (*gp) {
        if (now_ms >= (*gp)->first_ms + r->conf.linger_ms)
            flush(r, gp);
        else
            gp = &(*gp)->next;
    }
}

uint64_t br_relay_next_deadline(const struct br_relay *r)
{
    const struct group *g;
    uint64_t t = r->ahead ? r->ahead->auth_deadline : UINT64_MAX;

    for (g = r->groups; g; g = g->next)
        if (g->first_ms + r->conf.linger_ms < t)
            t = g->first_ms + r->conf.linger_ms;
    return t;
}

void br_relay_get_stats(const struct br_relay *r, struct br_relay_stats *out)
{
    *out = r->st;
}
