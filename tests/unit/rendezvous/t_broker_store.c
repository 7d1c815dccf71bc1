/* t_broker_store.c - the broker's store, driven as a script: each step is
 * a request from one of four peers at some time (or a clock tick, or a
 * peer leaving), followed by the answers it must produce, in order. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rendezvous/broker_store.h"
#include "tap.h"

#define NPEERS 4
#define TICK 100            /* op of a step that only advances the clock */
#define LEAVE 101           /* op of a step where peer `peer` goes */

struct step {
    int peer;
    uint8_t op;
    const char *key, *val;
    int64_t arg;
    uint32_t timeout;
    uint64_t now;
    const char *want;       /* "P:op#id status[ =arg][ 'value']; ..." */
};

static struct bs_peer peers[NPEERS];
static char got[4096];

static void on_reply(void *ctx, struct bs_peer *p, const struct bs_reply *r)
{
    size_t at = strlen(got);

    (void)ctx;
    snprintf(got + at, sizeof got - at, "%s%d:%s#%u %s", at ? "; " : "",
             (int)(p - peers), bp_op_name(r->op), (unsigned)r->id,
             bp_status_name(r->status));
    at = strlen(got);
    if (r->arg)
        snprintf(got + at, sizeof got - at, " =%" PRId64, r->arg);
    at = strlen(got);
    if (r->val)
        snprintf(got + at, sizeof got - at, " '%.*s'", (int)r->val->len,
                 (const char *)r->val->data);
}

static void run_step(struct bs_store *s, const struct step *st, uint32_t id)
{
    struct bp_msg m = { .op = st->op, .id = id, .arg = st->arg,
                        .timeout_ms = st->timeout,
                        .key = (const uint8_t *)st->key,
                        .klen = st->key ? strlen(st->key) : 0,
                        .val = (const uint8_t *)st->val,
                        .vlen = st->val ? strlen(st->val) : 0 };

    got[0] = '\0';
    if (st->op == TICK)
        bs_expire(s, st->now);
    else if (st->op == LEAVE)
        bs_peer_drop(s, &peers[st->peer]);
    else
        bs_request(s, &peers[st->peer], &m, st->now);
}

/* Run the steps on a new store; one TAP line for the whole script, with
 * the first step that went wrong.  The store must end as it began (no
 * bytes held) when `empty` is set. */
static void script(const char *name, const struct step *steps, size_t n,
                   const struct bs_limits *lim, int empty)
{
    struct err err = { "" };
    struct bs_store *s = bs_create(lim, 42, on_reply, NULL, &err);
    size_t bad = n;

    for (int i = 0; i < NPEERS; i++)
        bs_peer_init(&peers[i], NULL);
    for (size_t i = 0; s && i < n && bad == n; i++) {
        run_step(s, &steps[i], (uint32_t)i);
        if (strcmp(got, steps[i].want) != 0)
            bad = i;
    }
    if (bad == n && empty && s && (bs_bytes(s) != 0 || bs_nparked(s) != 0))
        printf("#   %zu bytes, %zu parked left\n", bs_bytes(s), bs_nparked(s));
    ok(s && bad == n && (!empty || (bs_bytes(s) == 0 && !bs_nparked(s))),
       name);
    if (bad < n)
        printf("#   step %zu\n#   got  '%s'\n#   want '%s'\n", bad, got,
               steps[bad].want);
    bs_destroy(s);
}

#define SCRIPT(name, steps, lim, empty) \
    script(name, steps, sizeof steps / sizeof steps[0], lim, empty)

static const struct bs_limits defaults = { 0 };

static const struct step put_get_del[] = {
    { 0, BP_GET, "k", NULL, 0, 0, 0, "0:get#0 not found" },
    { 0, BP_PUT, "k", "v1", 0, 0, 0, "0:put#1 ok" },
    { 1, BP_GET, "k", NULL, 0, 0, 0, "1:get#2 ok 'v1'" },
    { 1, BP_PUT, "k", "value two", 0, 0, 0, "1:put#3 ok" },
    { 2, BP_GET, "k", NULL, 0, 5000, 0, "2:get#4 ok 'value two'" },
    { 0, BP_PUT, "empty", "", 0, 0, 0, "0:put#5 ok" },
    { 0, BP_GET, "empty", NULL, 0, 0, 0, "0:get#6 ok ''" },
    { 0, BP_DEL, "k", NULL, 0, 0, 0, "0:del#7 ok" },
    { 0, BP_DEL, "k", NULL, 0, 0, 0, "0:del#8 not found" },
    { 0, BP_GET, "k", NULL, 0, 0, 0, "0:get#9 not found" },
    { 0, BP_DEL, "empty", NULL, 0, 0, 0, "0:del#10 ok" },
    { 0, BP_PUT, "", "v", 0, 0, 0, "0:put#11 invalid" },
    { 0, BP_GET, "", NULL, 0, 0, 0, "0:get#12 invalid" },
    { 0, BP_DEL, "", NULL, 0, 0, 0, "0:del#13 invalid" },
    { 0, BP_AUTH, NULL, NULL, 1, 0, 0, "0:auth#14 invalid" },
};

/* GETs park until a PUT (all answered, oldest first) or their deadline. */
static const struct step parked_get[] = {
    { 0, BP_GET, "k", NULL, 0, 1000, 0, "" },
    { 1, BP_GET, "k", NULL, 0, 3000, 10, "" },
    { 2, BP_GET, "other", NULL, 0, 500, 20, "" },
    { 3, TICK, NULL, NULL, 0, 0, 519, "" },
    { 3, TICK, NULL, NULL, 0, 0, 520, "2:get#2 timed out" },
    { 3, BP_PUT, "k", "hello", 0, 0, 600, "3:put#5 ok; 0:get#0 ok 'hello'; "
      "1:get#1 ok 'hello'" },
    { 3, TICK, NULL, NULL, 0, 0, 5000, "" },
    { 0, BP_GET, "late", NULL, 0, 100, 5000, "" },
    { 3, TICK, NULL, NULL, 0, 0, 5100, "0:get#7 timed out" },
    { 0, BP_DEL, "k", NULL, 0, 0, 6000, "0:del#9 ok" },
};

/* A GET without a deadline waits for ever; the clock does not touch it. */
static const struct step forever[] = {
    { 0, BP_GET, "k", NULL, 0, BP_WAIT_FOREVER, 0, "" },
    { 1, TICK, NULL, NULL, 0, 0, UINT64_MAX - 1, "" },
    { 1, BP_PUT, "k", "x", 0, 0, 0, "1:put#2 ok; 0:get#0 ok 'x'" },
    { 1, BP_DEL, "k", NULL, 0, 0, 0, "1:del#3 ok" },
};

/* Counters: created at 0, shown as decimal text; they wake GETs. */
static const struct step counters[] = {
    { 0, BP_GET, "n", NULL, 0, 100, 0, "" },
    { 1, BP_ADD, "n", NULL, 5, 0, 0, "1:add#1 ok =5; 0:get#0 ok '5'" },
    { 1, BP_ADD, "n", NULL, -7, 0, 0, "1:add#2 ok =-2" },
    { 2, BP_GET, "n", NULL, 0, 0, 0, "2:get#3 ok '-2'" },
    { 2, BP_ADD, "n", NULL, 0, 0, 0, "2:add#4 ok =-2" },
    { 2, BP_PUT, "t", "text", 0, 0, 0, "2:put#5 ok" },
    { 2, BP_ADD, "t", NULL, 1, 0, 0, "2:add#6 invalid" },
    { 2, BP_PUT, "t", "12 ", 0, 0, 0, "2:put#7 ok" },
    { 2, BP_ADD, "t", NULL, 1, 0, 0, "2:add#8 invalid" },
    { 2, BP_PUT, "t", "9223372036854775806", 0, 0, 0, "2:put#9 ok" },
    { 2, BP_ADD, "t", NULL, 1, 0, 0, "2:add#10 ok =9223372036854775807" },
    { 2, BP_ADD, "t", NULL, 1, 0, 0, "2:add#11 invalid" },
    { 2, BP_GET, "t", NULL, 0, 0, 0, "2:get#12 ok '9223372036854775807'" },
    { 2, BP_ADD, "", NULL, 1, 0, 0, "2:add#13 invalid" },
};

/* Barriers: everyone is released by the last arrival, with the
 * generation; the same name starts over. */
static const struct step barriers[] = {
    { 0, BP_BARRIER, "b", NULL, 3, 1000, 0, "" },
    { 1, BP_BARRIER, "b", NULL, 3, 1000, 0, "" },
    { 2, BP_BARRIER, "b", NULL, 3, 1000, 0,
      "2:barrier#2 ok; 0:barrier#0 ok; 1:barrier#1 ok" },
    { 2, BP_BARRIER, "b", NULL, 2, 1000, 0, "" },
    { 0, BP_BARRIER, "b", NULL, 3, 1000, 0, "0:barrier#4 invalid" },
    { 0, BP_BARRIER, "b", NULL, 2, 1000, 0,
      "0:barrier#5 ok =1; 2:barrier#3 ok =1" },
    { 3, BP_BARRIER, "solo", NULL, 1, 0, 0, "3:barrier#6 ok" },
    { 3, BP_BARRIER, "solo", NULL, 1, 0, 0, "3:barrier#7 ok =1" },
    { 3, BP_BARRIER, "z", NULL, 0, 1000, 0, "3:barrier#8 invalid" },
    { 3, BP_BARRIER, "z", NULL, -1, 1000, 0, "3:barrier#9 invalid" },
    { 3, BP_BARRIER, "z", NULL, 1LL << 32, 1000, 0, "3:barrier#10 invalid" },
    { 3, BP_BARRIER, "", NULL, 1, 1000, 0, "3:barrier#11 invalid" },
    { 3, BP_BARRIER, "nowait", NULL, 2, 0, 0, "3:barrier#12 timed out" },
    { 3, BP_BARRIER, "nowait", NULL, 2, 0, 0, "3:barrier#13 timed out" },
};

/* A barrier arrival that times out, or whose peer leaves, no longer
 * counts: ghosts never release a barrier. */
static const struct step barrier_withdraw[] = {
    { 0, BP_BARRIER, "b", NULL, 3, 100, 0, "" },
    { 3, TICK, NULL, NULL, 0, 0, 100, "0:barrier#0 timed out" },
    { 1, BP_BARRIER, "b", NULL, 3, 1000, 100, "" },
    { 2, BP_BARRIER, "b", NULL, 3, 1000, 100, "" },
    { 2, LEAVE, NULL, NULL, 0, 0, 0, "" },
    { 0, BP_BARRIER, "b", NULL, 3, 1000, 100, "" },
    { 3, BP_BARRIER, "b", NULL, 3, 1000, 100,
      "3:barrier#6 ok; 1:barrier#2 ok; 0:barrier#5 ok" },
    { 0, BP_GET, "k", NULL, 0, 1000, 200, "" },
    { 0, LEAVE, NULL, NULL, 0, 0, 0, "" },
    { 1, BP_PUT, "k", "v", 0, 0, 300, "1:put#9 ok" },
};

/* Parked requests per peer are limited; other peers are not affected. */
static const struct step parked_limit[] = {
    { 0, BP_GET, "a", NULL, 0, 1000, 0, "" },
    { 0, BP_GET, "b", NULL, 0, 1000, 0, "" },
    { 0, BP_GET, "c", NULL, 0, 1000, 0, "0:get#2 limit reached" },
    { 0, BP_BARRIER, "c", NULL, 5, 1000, 0, "0:barrier#3 limit reached" },
    { 0, BP_BARRIER, "one", NULL, 1, 1000, 0, "0:barrier#4 ok" },
    { 1, BP_GET, "c", NULL, 0, 1000, 0, "" },
    { 2, BP_PUT, "c", "x", 0, 0, 0, "2:put#6 ok; 1:get#5 ok 'x'" },
};

/* Bytes in the store (the limit is what two 16-byte values take) and the
 * size of one value (16 here). */
static const struct step byte_limit[] = {
    { 2, BP_PUT, "v", "12345678901234567", 0, 0, 0, "2:put#0 invalid" },
    { 2, BP_PUT, "v", "1234567890123456", 0, 0, 0, "2:put#1 ok" },
    { 2, BP_PUT, "w", "1234567890123456", 0, 0, 0, "2:put#2 ok" },
    { 2, BP_PUT, "x", "1234567890123456", 0, 0, 0, "2:put#3 limit reached" },
    { 2, BP_ADD, "y", NULL, 1, 0, 0, "2:add#4 limit reached" },
    { 2, BP_PUT, "v", "12345678901234567", 0, 0, 0, "2:put#5 invalid" },
    { 2, BP_GET, "v", NULL, 0, 0, 0, "2:get#6 ok '1234567890123456'" },
    { 2, BP_DEL, "w", NULL, 0, 0, 0, "2:del#7 ok" },
    { 2, BP_PUT, "x", "1234567890123456", 0, 0, 0, "2:put#8 ok" },
    { 2, BP_PUT, "x", "123456789012345", 0, 0, 0, "2:put#9 ok" },
    { 2, BP_DEL, "x", NULL, 0, 0, 0, "2:del#10 ok" },
    { 2, BP_DEL, "v", NULL, 0, 0, 0, "2:del#11 ok" },
};

/* The bytes two 16-byte values under one-byte keys take. */
static size_t two_values_bytes(void)
{
    struct err err = { "" };
    struct bs_store *s = bs_create(&defaults, 1, on_reply, NULL, &err);
    size_t n;

    run_step(s, &byte_limit[1], 1);
    run_step(s, &byte_limit[2], 2);
    n = bs_bytes(s);
    bs_destroy(s);
    return n;
}

static void test_scripts(void)
{
    struct bs_limits two_parked = { .max_parked = 2 };
    struct bs_limits small = { .max_value = 16 };

    SCRIPT("put, get, del, empty keys and values", put_get_del, &defaults, 1);
    SCRIPT("parked GETs: answered by PUT in order, or timed out",
           parked_get, &defaults, 1);
    SCRIPT("GET without deadline", forever, &defaults, 1);
    SCRIPT("counters", counters, &defaults, 0);
    SCRIPT("barriers: release, generations, bad counts", barriers,
           &defaults, 0);
    SCRIPT("barrier arrivals withdrawn on timeout and leave",
           barrier_withdraw, &defaults, 0);
    SCRIPT("parked requests per peer limited", parked_limit, &two_parked, 0);
    small.max_bytes = two_values_bytes();
    SCRIPT("store bytes and value size limited", byte_limit, &small, 1);
}

/* ---- beyond scripts: sharing, scale, order ---- */

static struct bs_value *last_val;
static uint64_t last_deadline_seen;
static int order_ok, nreplies;

static void on_reply_count(void *ctx, struct bs_peer *p,
                           const struct bs_reply *r)
{
    (void)ctx;
    (void)p;
    nreplies++;
    if (r->val && last_val && r->val != last_val)
        order_ok = 0;       /* here: "every waiter got the same value" */
    if (r->val)
        last_val = r->val;
}

/* A value answered to many waiters is one shared buffer. */
static void test_shared_value(void)
{
    struct err err = { "" };
    struct bs_store *s = bs_create(&defaults, 7, on_reply_count, NULL, &err);
    struct bp_msg get = { .op = BP_GET, .key = (const uint8_t *)"k", .klen = 1,
                          .timeout_ms = 1000 };
    struct bp_msg put = { .op = BP_PUT, .key = (const uint8_t *)"k", .klen = 1,
                          .val = (const uint8_t *)"big", .vlen = 3 };
    static struct bs_peer many[100];

    order_ok = 1;
    nreplies = 0;
    last_val = NULL;
    for (int i = 0; i < 100; i++) {
        bs_peer_init(&many[i], NULL);
        bs_request(s, &many[i], &get, 0);
    }
    is_int(bs_nparked(s), 100, "100 GETs parked");
    bs_request(s, &many[0], &put, 1);
    ok(order_ok && nreplies == 101 && last_val && last_val->refs == 1,
       "all 100 answered with the one stored value (not copies)");
    bs_destroy(s);
}

static void key_of(char *out, size_t len, int i)
{
    snprintf(out, len, "key/%d", i);
}

/* 200000 keys: the table grows, every key comes back, nothing is left. */
static void test_many_keys(void)
{
    struct err err = { "" };
    struct bs_store *s = bs_create(&defaults, 9, on_reply_count, NULL, &err);
    struct bs_peer p;
    char key[32];
    int missing = 0;

    bs_peer_init(&p, NULL);
    for (int op = BP_PUT; op <= BP_DEL; op += BP_DEL - BP_PUT) {
        for (int i = 0; i < 200000; i++) {
            struct bp_msg m = { .op = (uint8_t)op, .key = (uint8_t *)key,
                                .val = (const uint8_t *)key };

            key_of(key, sizeof key, i);
            m.klen = m.vlen = strlen(key);
            if (op == BP_DEL)
                m.vlen = 0;
            nreplies = 0;
            bs_request(s, &p, &m, 0);
            if (op == BP_PUT && i == 199999)
                is_int(bs_nkeys(s), 200000, "200000 keys stored");
        }
    }
    for (int i = 0; i < 200000; i += 997) {
        struct bp_msg m = { .op = BP_GET, .key = (uint8_t *)key };

        key_of(key, sizeof key, i);
        m.klen = strlen(key);
        last_val = NULL;
        bs_request(s, &p, &m, 0);
        missing += last_val != NULL;    /* deleted: must be gone */
    }
    ok(missing == 0 && bs_nkeys(s) == 0 && bs_bytes(s) == 0,
       "all deleted, no bytes held");
    bs_destroy(s);
}

static void on_reply_order(void *ctx, struct bs_peer *p,
                           const struct bs_reply *r)
{
    const uint64_t *deadlines = ctx;

    (void)p;
    if (r->status != BP_TIMEOUT || deadlines[r->id] < last_deadline_seen)
        order_ok = 0;
    last_deadline_seen = deadlines[r->id];
    nreplies++;
}

/* Deadlines in random order expire in time order (the heap). */
static void test_deadline_order(void)
{
    static uint64_t deadlines[5000];
    struct err err = { "" };
    struct bs_store *s = bs_create(&defaults, 3, on_reply_order, deadlines,
                                   &err);
    struct bs_peer p[5];
    uint32_t x = 12345;
    char key[32];

    for (int i = 0; i < 5; i++)
        bs_peer_init(&p[i], NULL);
    for (uint32_t i = 0; i < 5000; i++) {
        struct bp_msg m = { .op = i % 2 ? BP_GET : BP_BARRIER, .id = i,
                            .key = (uint8_t *)key, .arg = 1000000 };

        x = x * 1103515245u + 12345u;
        m.timeout_ms = 1 + (x >> 8) % 100000;
        deadlines[i] = m.timeout_ms;
        key_of(key, sizeof key, (int)i % 37);
        m.klen = strlen(key);
        bs_request(s, &p[i % 5], &m, 0);
    }
    order_ok = 1;
    nreplies = 0;
    last_deadline_seen = 0;
    for (uint64_t t = 0; t <= 100000; t += 250)
        bs_expire(s, t);
    ok(order_ok && nreplies == 5000 && bs_nparked(s) == 0 &&
       bs_next_deadline(s) == UINT64_MAX,
       "5000 parked requests time out in deadline order");
    bs_destroy(s);
}

/* A peer leaving with many parked requests: all gone, none answered. */
static void test_peer_drop(void)
{
    struct err err = { "" };
    struct bs_limits lim = { .max_parked = 100000 };
    struct bs_store *s = bs_create(&lim, 5, on_reply_count, NULL, &err);
    struct bs_peer p;
    char key[32];

    bs_peer_init(&p, NULL);
    nreplies = 0;
    for (int i = 0; i < 50000; i++) {
        struct bp_msg m = { .op = BP_GET, .key = (uint8_t *)key,
                            .timeout_ms = 1000 + (uint32_t)i };

        key_of(key, sizeof key, i);
        m.klen = strlen(key);
        bs_request(s, &p, &m, 0);
    }
    is_int(bs_next_deadline(s), 1000, "next deadline is the earliest");
    bs_peer_drop(s, &p);
    ok(nreplies == 0 && bs_nparked(s) == 0 && bs_bytes(s) == 0 &&
       p.nparked == 0, "50000 parked GETs dropped with their peer, unanswered");
    bs_destroy(s);
}

int main(void)
{
    test_scripts();
    test_shared_value();
    test_many_keys();
    test_deadline_order();
    test_peer_drop();
    return tap_done();
}
