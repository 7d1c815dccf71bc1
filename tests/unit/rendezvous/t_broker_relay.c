/* t_broker_relay.c - an agent's relay in process: the parent is a real
 * store behind a real protocol engine, the ranks are protocol clients.
 * Forwarding, GETs sharing one flight, a write ending that sharing,
 * barriers going up as one weighted arrival (and split again on a
 * timeout), a tree of two relays, auth, and a lost parent.  Its limits:
 * a peer that pipelines 50,000 waiting GETs is refused past its own
 * max_waiting while the others go on; connections that do not
 * authenticate in time, or beyond max_unauth and max_peers, are closed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rendezvous/broker_relay.h"
#include "rendezvous/broker_store.h"
#include "tap.h"

static const uint8_t token[TOKEN_BYTES] = "0123456789abcdef";
static const uint8_t bad_token[TOKEN_BYTES] = "0123456789abcdeF";

#define NR 8
#define BUF (1 << 16)

struct bytes {
    uint8_t b[BUF];
    size_t n;
};

static void push(struct bytes *q, const uint8_t *p, size_t n)
{
    if (q->n + n <= BUF) {
        memcpy(q->b + q->n, p, n);
        q->n += n;
    }
}

/* A rank: what it was answered, as text, and whether it was closed. */
struct rank {
    struct br_peer *p;
    struct bp_conn pc;
    char seen[1024];
    size_t nstatus[BP_LIMIT + 1];   /* answers by status */
    int closed;
};

/* The world: a parent store, one relay (or two: a child relay is then
 * a peer of the first), ranks. */
static struct world {
    struct bs_store *store;
    struct bs_peer sp;
    struct bp_conn server;          /* the parent's parser of the relay */
    struct bytes to_parent, to_relay, to_child_up;
    struct br_relay *r, *child;
    struct br_peer *child_peer;     /* the child as a peer of r */
    struct rank rk[NR];
    int parent_gone;
    uint64_t now;
} W;

/* The limits the next world_start gives its relay (0: the defaults). */
static struct br_relay_conf limits;

static int rank_answer(void *ctx, const struct bp_msg *m)
{
    struct rank *k = ctx;
    size_t at = strlen(k->seen);

    if (m->status <= BP_LIMIT)
        k->nstatus[m->status]++;

    snprintf(k->seen + at, sizeof k->seen - at, "%s#%u %s a%lld v'%.*s';",
             bp_op_name(m->op), (unsigned)m->id, bp_status_name(m->status),
             (long long)m->arg, (int)m->vlen, (const char *)m->val);
    return 0;
}

static void store_reply(void *ctx, struct bs_peer *p, const struct bs_reply *r)
{
    struct bp_msg m = { .op = r->op, .status = r->status, .id = r->id,
                        .arg = r->arg, .val = r->val ? r->val->data : NULL,
                        .vlen = r->val ? r->val->len : 0 };
    uint8_t f[4096];

    (void)ctx;
    (void)p;
    bp_encode(f, &m);
    push(&W.to_relay, f, bp_frame_size(&m));
}

static int parent_msg(void *ctx, const struct bp_msg *m)
{
    (void)ctx;
    if (m->op == BP_AUTH) {
        uint8_t f[BP_HDR_LEN];
        struct bp_msg a = { .op = BP_AUTH, .id = m->id, .arg = 1000 };
        bp_encode(f, &a);
        push(&W.to_relay, f, sizeof f);
        return 0;
    }
    bs_request(W.store, &W.sp, m, W.now);
    return 0;
}

static void down(void *ctx, void *user, const uint8_t *p, size_t n)
{
    struct err err;

    (void)ctx;
    if (user == &W.child_peer)      /* r answering the child relay */
        push(&W.to_child_up, p, n);
    else
        bp_feed(&((struct rank *)user)->pc, p, n, &err);
}

static void up(void *ctx, const uint8_t *p, size_t n)
{
    (void)ctx;
    push(&W.to_parent, p, n);
}

/* the child relay's parent is r: its bytes go to r as a peer's */
static struct bytes child_out;
static void child_up(void *ctx, const uint8_t *p, size_t n)
{
    (void)ctx;
    push(&child_out, p, n);
}

static void closed(void *ctx, void *user)
{
    (void)ctx;
    ((struct rank *)user)->closed = 1;
}

/* Move bytes until nothing moves. */
static void pump(void)
{
    struct err err;
    int moved = 1;

    while (moved) {
        struct bytes q;
        moved = 0;
        if (child_out.n) {
            q = child_out;
            child_out.n = 0;
            br_relay_from_peer(W.r, W.child_peer, q.b, q.n, W.now, &err);
            moved = 1;
        }
        if (W.to_child_up.n) {
            q = W.to_child_up;
            W.to_child_up.n = 0;
            br_relay_from_parent(W.child, q.b, q.n, W.now, &err);
            moved = 1;
        }
        if (W.to_parent.n && !W.parent_gone) {
            q = W.to_parent;
            W.to_parent.n = 0;
            bp_feed(&W.server, q.b, q.n, &err);
            moved = 1;
        }
        if (W.to_relay.n) {
            q = W.to_relay;
            W.to_relay.n = 0;
            if (br_relay_from_parent(W.r, q.b, q.n, W.now, &err) < 0)
                br_relay_parent_lost(W.r);
            moved = 1;
        }
    }
}

static void world_start(uint32_t expect, int with_child)
{
    static const struct br_relay_ops ops = { down, up, closed };
    static const struct br_relay_ops cops = { down, child_up, closed };
    struct br_relay_conf conf = limits;
    static const struct bs_limits lim;
    struct err err;

    conf.token = token;
    conf.expect = expect;
    memset(&W, 0, sizeof W);
    child_out.n = 0;
    W.now = 1000;
    W.store = bs_create(&lim, 1, store_reply, NULL, &err);
    bs_peer_init(&W.sp, NULL);
    bp_conn_init(&W.server, BP_SERVER, token, BP_DEFAULT_MAX_VALUE,
                 parent_msg, NULL);
    W.r = br_relay_create(&conf, &ops, NULL, &err);
    if (with_child) {
        conf.expect = expect / 2;
        W.child = br_relay_create(&conf, &cops, NULL, &err);
        W.child_peer = br_relay_accept(W.r, &W.child_peer, W.now, &err);
    }
}

static void world_end(void)
{
    int i;

    for (i = 0; i < NR; i++)
        bp_conn_free(&W.rk[i].pc);
    br_relay_destroy(W.child);
    br_relay_destroy(W.r);
    bp_conn_free(&W.server);
    bs_destroy(W.store);
    memset(&limits, 0, sizeof limits);
}

/* Send one request from rank i (through the child relay when via). */
static void req(int i, uint8_t op, uint32_t id, const char *key,
                const char *val, int64_t arg, uint32_t tmo)
{
    struct bp_msg m = { .op = op, .id = id, .arg = arg, .timeout_ms = tmo,
                        .key = (const uint8_t *)key,
                        .klen = key ? strlen(key) : 0,
                        .val = (const uint8_t *)val,
                        .vlen = val ? strlen(val) : 0 };
    uint8_t f[1024];
    struct err err;
    struct rank *k = &W.rk[i];
    struct br_relay *to = W.child && i >= NR / 2 ? W.child : W.r;

    bp_encode(f, &m);
    if (br_relay_from_peer(to, k->p, f, bp_frame_size(&m), W.now, &err) < 0) {
        br_relay_peer_gone(to, k->p);
        k->p = NULL;
        k->closed = 1;
    }
    pump();
}

/* Connect rank i and authenticate it with tok. */
static void rank_in(int i, const uint8_t *tok)
{
    struct err err;
    struct rank *k = &W.rk[i];
    struct br_relay *to = W.child && i >= NR / 2 ? W.child : W.r;

    bp_conn_init(&k->pc, BP_CLIENT, NULL, BP_MAX_VALUE_CEILING, rank_answer,
                 k);
    k->p = br_relay_accept(to, k, W.now, &err);
    {
        struct bp_msg m = { .op = BP_AUTH, .id = 7, .arg = BP_VERSION,
                            .val = tok, .vlen = TOKEN_BYTES };
        uint8_t f[64];
        bp_encode(f, &m);
        if (br_relay_from_peer(to, k->p, f, bp_frame_size(&m), W.now,
                               &err) < 0) {
            br_relay_peer_gone(to, k->p);
            k->p = NULL;
            k->closed = 1;
        }
    }
    pump();
}

static void reset_seen(void)
{
    int i;

    for (i = 0; i < NR; i++)
        W.rk[i].seen[0] = 0;
}

static void test_auth_and_forward(void)
{
    struct br_relay_stats st;

    world_start(0, 0);
    /* the rank's AUTH arrives before the parent answered the relay's */
    {
        struct err err;
        struct rank *k = &W.rk[0];
        struct bp_msg m = { .op = BP_AUTH, .id = 7, .arg = BP_VERSION,
                            .val = token, .vlen = TOKEN_BYTES };
        uint8_t f[64];
        bp_conn_init(&k->pc, BP_CLIENT, NULL, BP_MAX_VALUE_CEILING,
                     rank_answer, k);
        k->p = br_relay_accept(W.r, k, W.now, &err);
        bp_encode(f, &m);
        br_relay_from_peer(W.r, k->p, f, bp_frame_size(&m), W.now, &err);
        is_str(k->seen, "", "AUTH waits for the parent's answer");
        pump();
        is_str(k->seen, "auth#7 ok a1000 v'';",
               "then answered with the parent's value limit");
    }
    rank_in(1, bad_token);
    ok(W.rk[1].closed, "a wrong token is refused");
    is_str(W.rk[1].seen, "auth#0 invalid a0 v'';", "with the broker's notice");
    reset_seen();
    req(0, BP_PUT, 2, "k", "v1", 0, 0);
    req(0, BP_ADD, 3, "n", NULL, 5, 0);
    req(0, BP_GET, 4, "k", NULL, 0, 0);
    req(0, BP_DEL, 5, "k", NULL, 0, 0);
    req(0, BP_GET, 6, "k", NULL, 0, 0);
    is_str(W.rk[0].seen, "put#2 ok a0 v'';add#3 ok a5 v'';get#4 ok a0 v'v1';"
           "del#5 ok a0 v'';get#6 not found a0 v'';",
           "PUT, ADD, GET, DEL are forwarded and answered with the rank's ids");
    ok(bs_peek(W.store, "n") != NULL, "the parent's store holds the counter");
    br_relay_get_stats(W.r, &st);
    is_int((long)st.sent_up, 5, "one request up per request");
    world_end();
}

static void test_get_shared(void)
{
    struct br_relay_stats st;
    int i;

    world_start(0, 0);
    for (i = 0; i < 4; i++)
        rank_in(i, token);
    reset_seen();
    for (i = 0; i < 3; i++)
        req(i, BP_GET, 10 + (uint32_t)i, "addr", NULL, 0, 5000);
    br_relay_get_stats(W.r, &st);
    is_int((long)st.sent_up, 1, "three waiting GETs of one key: one flight");
    is_int((long)st.gets_shared, 2, "two of them shared it");
    req(3, BP_PUT, 20, "addr", "10.0.0.1", 0, 0);
    is_str(W.rk[0].seen, "get#10 ok a0 v'10.0.0.1';", "rank 0 has the value");
    is_str(W.rk[2].seen, "get#12 ok a0 v'10.0.0.1';", "rank 2 too, its id");
    /* a GET in flight, then a write by another rank: a later GET sees it */
    reset_seen();
    W.to_parent.n = 0;
    W.parent_gone = 1;  /* hold the parent's side: the GET stays in flight */
    req(0, BP_GET, 30, "addr", NULL, 0, 5000);
    req(1, BP_PUT, 31, "addr", "10.0.0.2", 0, 0);
    req(2, BP_GET, 32, "addr", NULL, 0, 5000);
    br_relay_get_stats(W.r, &st);
    is_int((long)st.gets_shared, 2, "a GET after a write does not share");
    world_end();
}

static void test_get_timeout_split(void)
{
    world_start(0, 0);
    rank_in(0, token);
    rank_in(1, token);
    reset_seen();
    req(0, BP_GET, 1, "late", NULL, 0, 100);
    W.now += 50;
    req(1, BP_GET, 2, "late", NULL, 0, 1000);   /* shares, later deadline */
    W.now += 60;
    bs_expire(W.store, W.now);
    pump();
    is_str(W.rk[0].seen, "get#1 timed out a0 v'';", "the first times out");
    is_str(W.rk[1].seen, "", "the second still waits (sent up again)");
    req(0, BP_PUT, 3, "late", "x", 0, 0);
    is_str(W.rk[1].seen, "get#2 ok a0 v'x';", "and gets the value");
    world_end();
}

static void test_barrier_aggregated(void)
{
    struct br_relay_stats st;
    int i;

    world_start(4, 0);
    for (i = 0; i < 4; i++)
        rank_in(i, token);
    reset_seen();
    for (i = 0; i < 4; i++)
        req(i, BP_BARRIER, 40, "b", NULL, 4, BP_WAIT_FOREVER);
    br_relay_get_stats(W.r, &st);
    is_int((long)st.barrier_groups, 1, "4 arrivals went up as one");
    is_int((long)st.sent_up, 1, "one request up");
    for (i = 0; i < 4; i++)
        is_str(W.rk[i].seen, "barrier#40 ok a0 v'';", "each released, gen 0");
    reset_seen();
    for (i = 0; i < 4; i++)
        req(i, BP_BARRIER, 41, "b", NULL, 4, BP_WAIT_FOREVER);
    is_str(W.rk[3].seen, "barrier#41 ok a1 v'';", "the next use: gen 1");
    world_end();
}

static void test_barrier_linger(void)
{
    struct br_relay_stats st;
    int i;

    world_start(0, 0);
    for (i = 0; i < 4; i++)
        rank_in(i, token);
    reset_seen();
    req(0, BP_BARRIER, 1, "b", NULL, 4, 100000);
    req(1, BP_BARRIER, 1, "b", NULL, 4, 100000);
    br_relay_get_stats(W.r, &st);
    is_int((long)st.sent_up, 0, "held while the count is not reached");
    ok(br_relay_next_deadline(W.r) == W.now + 2, "for linger_ms");
    W.now += 2;
    br_relay_tick(W.r, W.now);
    pump();
    br_relay_get_stats(W.r, &st);
    is_int((long)st.barrier_groups, 1, "then sent up as one of weight 2");
    is_str(W.rk[0].seen, "", "which the parent holds");
    req(2, BP_BARRIER, 1, "b", NULL, 4, 100000);
    req(3, BP_BARRIER, 1, "b", NULL, 4, 100000);
    br_relay_tick(W.r, W.now + 2);
    pump();
    for (i = 0; i < 4; i++)
        is_str(W.rk[i].seen, "barrier#1 ok a0 v'';", "all released");
    /* a rank that leaves while its arrival is held is withdrawn */
    reset_seen();
    req(0, BP_BARRIER, 2, "c", NULL, 2, 100000);
    br_relay_peer_gone(W.r, W.rk[0].p);
    W.rk[0].p = NULL;
    ok(br_relay_next_deadline(W.r) == UINT64_MAX, "its arrival is withdrawn");
    req(1, BP_BARRIER, 2, "c", NULL, 2, 100000);
    br_relay_tick(W.r, W.now + 10);
    pump();
    is_str(W.rk[1].seen, "", "so the barrier of 2 is not released");
    world_end();
}

static void test_barrier_timeout_split(void)
{
    world_start(0, 0);
    rank_in(0, token);
    rank_in(1, token);
    rank_in(2, token);
    reset_seen();
    req(0, BP_BARRIER, 1, "t", NULL, 3, 100);
    req(1, BP_BARRIER, 1, "t", NULL, 3, 1000);
    br_relay_tick(W.r, W.now += 2);
    pump();
    W.now += 200;
    bs_expire(W.store, W.now);
    pump();
    is_str(W.rk[0].seen, "barrier#1 timed out a0 v'';", "the short one ends");
    is_str(W.rk[1].seen, "", "the long one was sent up again");
    req(2, BP_BARRIER, 1, "t", NULL, 3, 1000);
    br_relay_tick(W.r, W.now += 2);
    pump();
    is_str(W.rk[1].seen, "", "2 of 3 (the one that timed out is out)");
    is_int((long)bs_nparked(W.store), 2, "the parent holds two arrivals");
    world_end();
}

static void test_tree(void)
{
    struct br_relay_stats st;
    int i;

    world_start(8, 1);
    pump();
    for (i = 0; i < NR; i++)
        rank_in(i, token);
    reset_seen();
    for (i = 0; i < NR; i++)
        req(i, BP_BARRIER, 9, "all", NULL, NR, BP_WAIT_FOREVER);
    br_relay_get_stats(W.child, &st);
    is_int((long)st.barrier_groups, 1, "the child sends its 4 as one");
    br_relay_get_stats(W.r, &st);
    is_int((long)st.barrier_groups, 1, "the parent relay its 4 + 4 as one");
    is_int((long)st.peers, 5, "4 ranks and the child are its peers");
    for (i = 0; i < NR; i++)
        is_str(W.rk[i].seen, "barrier#9 ok a0 v'';", "every rank released");
    reset_seen();
    req(5, BP_PUT, 3, "x", "deep", 0, 0);
    req(1, BP_GET, 4, "x", NULL, 0, 1000);
    is_str(W.rk[1].seen, "get#4 ok a0 v'deep';", "a write through the tree");
    world_end();
}

static void test_parent_lost(void)
{
    struct err err;
    int i;

    world_start(0, 0);
    for (i = 0; i < 3; i++)
        rank_in(i, token);
    req(0, BP_GET, 1, "never", NULL, 0, BP_WAIT_FOREVER);
    req(1, BP_BARRIER, 1, "b", NULL, 3, BP_WAIT_FOREVER);
    br_relay_parent_lost(W.r);
    for (i = 0; i < 3; i++) {
        ok(W.rk[i].closed, "every rank's connection is closed");
        W.rk[i].p = NULL;
    }
    ok(br_relay_accept(W.r, &W.rk[3], W.now, &err) == NULL,
       "later connections are refused");
    is_str(err.msg, "the relay lost its parent broker", "saying why");
    world_end();
    /* a parent that refuses the relay's token */
    world_start(0, 0);
    W.to_parent.n = 0;  /* its AUTH is answered with a notice instead */
    {
        struct bp_msg n = { .op = BP_AUTH, .status = BP_INVALID };
        uint8_t f[BP_HDR_LEN];
        bp_encode(f, &n);
        ok(br_relay_from_parent(W.r, f, sizeof f, W.now, &err) < 0,
           "a refusal from the parent is an error");
        is_str(err.msg, "the parent broker refused the relay's AUTH: invalid",
               "saying so");
    }
    world_end();
}

static int accept_all(void *ctx, const struct bp_msg *m)
{
    (void)ctx;
    (void)m;
    return 0;
}

/* Protocol version 2: a BARRIER may carry a weight, refused in version 1;
 * the store counts it and refuses more than the barrier lacks. */
static void test_weighted_wire_and_store(void)
{
    uint8_t f[256], w3[4] = { 0, 0, 0, 3 }, w2[4] = { 0, 0, 0, 2 };
    struct bp_msg m = { .op = BP_BARRIER, .id = 1, .arg = 4,
                        .timeout_ms = 1000, .key = (const uint8_t *)"b",
                        .klen = 1, .val = w3, .vlen = 4 };
    struct bp_msg a = { .op = BP_AUTH, .id = 1, .val = token,
                        .vlen = TOKEN_BYTES };
    struct err err;
    int v;

    for (v = BP_VERSION; v <= BP_VERSION_WEIGHTED; v++) {
        struct bp_conn c;
        size_t n;
        bp_conn_init(&c, BP_SERVER, token, 64, accept_all, NULL);
        a.arg = v;
        bp_encode(f, &a);
        n = bp_frame_size(&a);
        bp_encode(f + n, &m);
        n += bp_frame_size(&m);
        ok((bp_feed(&c, f, n, &err) == 0) == (v == BP_VERSION_WEIGHTED),
           v == BP_VERSION ? "version 1: a barrier with a value is refused"
                           : "version 2: a weighted arrival is accepted");
        bp_conn_free(&c);
    }
    world_start(0, 0);
    W.rk[0].p = NULL;
    bs_request(W.store, &W.sp, &m, W.now);
    is_int((long)bs_nparked(W.store), 1, "weight 3 of 4: parked");
    m.val = w2;
    m.id = 2;
    W.to_relay.n = 0;
    bs_request(W.store, &W.sp, &m, W.now);
    ok(W.to_relay.n == BP_HDR_LEN && W.to_relay.b[5] == BP_INVALID,
       "weight 2 more than the 1 lacking: invalid");
    m.vlen = 0;
    m.id = 3;
    W.to_relay.n = 0;
    bs_request(W.store, &W.sp, &m, W.now);
    ok(W.to_relay.n == 2 * BP_HDR_LEN && bs_nparked(W.store) == 0,
       "one more (weight 1): released, both answered");
    world_end();
}

/* A rank pipelines 50,000 GETs of keys nobody writes: past its own 256
 * waiting ones the relay answers LIMIT itself, the upstream connection
 * (whose parked requests the head's broker holds to 1,024) carries only
 * those 256, and another rank's waiting GETs and writes still work. */
static void test_flood_own_limit(void)
{
    enum { NGET = 50000 };
    uint8_t *buf = malloc((size_t)NGET * 64), *at = buf;
    struct br_relay_stats st;
    struct err err;
    char key[32];
    uint32_t i;

    world_start(0, 0);
    rank_in(0, token);
    rank_in(1, token);
    for (i = 0; i < NGET; i++) {
        struct bp_msg m = { .op = BP_GET, .id = 100 + i,
                            .timeout_ms = BP_WAIT_FOREVER,
                            .key = (const uint8_t *)key };
        m.klen = (size_t)snprintf(key, sizeof key, "flood.%u", (unsigned)i);
        bp_encode(at, &m);
        at += bp_frame_size(&m);
    }
    ok(br_relay_from_peer(W.r, W.rk[0].p, buf, (size_t)(at - buf), W.now,
                          &err) == 0, "50,000 pipelined GETs: taken");
    pump();
    br_relay_get_stats(W.r, &st);
    is_int((long)W.rk[0].nstatus[BP_LIMIT], NGET - 256,
           "all past the rank's 256 waiting are refused LIMIT");
    is_int((long)st.refused_waiting, NGET - 256, "  counted");
    is_int((long)bs_nparked(W.store), 256, "  only 256 parked upstream");
    ok(!W.rk[0].closed, "  the rank stays connected");
    /* another rank, as an agent's beat through the relay would */
    req(1, BP_ADD, 1, "dlrun.hb.0", NULL, 1, 0);
    req(1, BP_GET, 2, "dlrun.ctl.0", NULL, 0, 1000);
    req(1, BP_PUT, 3, "dlrun.ctl.0", "15", 0, 0);
    is_str(W.rk[1].seen, "auth#7 ok a1000 v'';add#1 ok a1 v'';put#3 ok a0 v'';"
           "get#2 ok a0 v'15';", "another rank's ADD, waiting GET, PUT");
    req(1, BP_PUT, 4, "flood.7", "x", 0, 0);
    is_int((long)W.rk[0].nstatus[BP_OK], 2,     /* and its AUTH */
           "a flooding GET that was sent up is answered by a write");
    req(0, BP_GET, 5, "flood.more", NULL, 0, 1000);
    is_int((long)W.rk[0].nstatus[BP_LIMIT], NGET - 256,
           "  and makes room for one more of its own");
    req(0, BP_GET, 6, "flood.more2", NULL, 0, 1000);
    is_int((long)W.rk[0].nstatus[BP_LIMIT], NGET - 255,
           "  but not two");
    world_end();
    free(buf);
}

/* Connections that do not authenticate: closed after auth_timeout_ms
 * (told TIMEOUT), pushed out past max_unauth or max_peers (told LIMIT),
 * never an authenticated one. */
static void test_auth_deadline_and_caps(void)
{
    static struct rank many[3000];
    struct br_relay_stats st;
    struct err err;
    size_t i, open = 0;

    limits.max_unauth = 2;
    world_start(0, 0);
    rank_in(0, token);
    for (i = 1; i <= 3; i++) {
        bp_conn_init(&W.rk[i].pc, BP_CLIENT, NULL, BP_MAX_VALUE_CEILING,
                     rank_answer, &W.rk[i]);
        W.rk[i].p = br_relay_accept(W.r, &W.rk[i], W.now + i, &err);
    }
    ok(W.rk[1].closed && !W.rk[2].closed && !W.rk[3].closed,
       "a third without AUTH pushes out the oldest (max_unauth 2)");
    is_str(W.rk[1].seen, "auth#0 limit reached a0 v'';", "  told LIMIT");
    br_relay_tick(W.r, W.now + 2 + 4999);
    ok(!W.rk[2].closed, "no AUTH for 4,999 ms: still open");
    ok(br_relay_next_deadline(W.r) == W.now + 2 + 5000, "  due at 5 s");
    br_relay_tick(W.r, W.now + 2 + 5000);
    ok(W.rk[2].closed && !W.rk[3].closed, "5 s: closed");
    is_str(W.rk[2].seen, "auth#0 timed out a0 v'';", "  told TIMEOUT");
    br_relay_tick(W.r, W.now + 3 + 5000);
    ok(W.rk[3].closed, "  the next one at its own 5 s");
    br_relay_tick(W.r, W.now + 60000);
    ok(!W.rk[0].closed, "an authenticated one stays");
    br_relay_get_stats(W.r, &st);
    ok(st.evicted == 1 && st.auth_expired == 2 && st.peers == 1,
       "  counted (1 pushed out, 2 expired, 1 open)");
    world_end();
    /* max_peers 3: a new one takes the place of one without AUTH, and is
     * refused when all have it */
    limits.max_peers = 3;
    world_start(0, 0);
    rank_in(0, token);
    bp_conn_init(&W.rk[1].pc, BP_CLIENT, NULL, BP_MAX_VALUE_CEILING,
                 rank_answer, &W.rk[1]);
    W.rk[1].p = br_relay_accept(W.r, &W.rk[1], W.now, &err);
    rank_in(2, token);
    rank_in(3, token);
    ok(W.rk[1].closed && W.rk[3].p && !W.rk[3].closed,
       "the table full: a new one takes the place of one without AUTH");
    bp_conn_init(&W.rk[4].pc, BP_CLIENT, NULL, BP_MAX_VALUE_CEILING,
                 rank_answer, &W.rk[4]);
    ok(br_relay_accept(W.r, &W.rk[4], W.now, &err) == NULL,
       "every one authenticated: refused");
    is_str(err.msg, "the relay's 3 connections are all in use", "  saying so");
    world_end();
    /* the defaults: 3,000 that never authenticate */
    world_start(0, 0);
    for (i = 0; i < 3000; i++) {
        bp_conn_init(&many[i].pc, BP_CLIENT, NULL, BP_MAX_VALUE_CEILING,
                     rank_answer, &many[i]);
        many[i].p = br_relay_accept(W.r, &many[i], W.now, &err);
    }
    for (i = 0; i < 3000; i++)
        open += !many[i].closed;
    is_int((long)open, 256, "3,000 without AUTH: 256 stay open");
    ok(br_relay_next_deadline(W.r) == W.now + 5000, "  until 5 s");
    br_relay_tick(W.r, W.now + 5000);
    br_relay_get_stats(W.r, &st);
    is_int((long)st.peers, 0, "  then none");
    for (i = 0; i < 3000; i++)
        bp_conn_free(&many[i].pc);
    world_end();
}

int main(void)
{
    test_weighted_wire_and_store();
    test_auth_and_forward();
    test_get_shared();
    test_get_timeout_split();
    test_barrier_aggregated();
    test_barrier_linger();
    test_barrier_timeout_split();
    test_tree();
    test_parent_lost();
    test_flood_own_limit();
    test_auth_deadline_and_caps();
    return tap_done();
}
