/* fuzz_broker_proto.c - any bytes, in pieces of any size, into the
 * broker's engine and from there into its store: no crash, no leak, and
 * the store never holds more than its byte limit.
 *
 * Byte 0 steers: bit 0 set = no AUTH is prepended (so the AUTH rules are
 * fuzzed too; the token is hard to guess, as it should be); bits 1-3 pick
 * the piece size.  The rest is the stream.  Requests come from one of
 * four peers (by id), the clock moves 7 ms per request, and a DEL of the
 * key "!leave" makes its peer leave. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rendezvous/broker_proto.h"
#include "rendezvous/broker_store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_BYTES (1u << 20)

static const uint8_t token[TOKEN_BYTES] = "fuzz-token-16byt";

struct world {
    struct bs_store *store;
    struct bs_peer peers[4];
    uint64_t now;
};

static void on_reply(void *ctx, struct bs_peer *p, const struct bs_reply *r)
{
    struct world *w = ctx;

    if (r->status > BP_LIMIT || p < w->peers || p >= w->peers + 4 ||
        (r->val && r->val->len > 4096))
        abort();
}

static int on_msg(void *ctx, const struct bp_msg *m)
{
    struct world *w = ctx;
    struct bs_peer *p = &w->peers[m->id % 4];

    if (m->op == BP_AUTH)
        return 0;
    w->now += 7;
    if (m->op == BP_DEL && m->klen == 6 && memcmp(m->key, "!leave", 6) == 0)
        bs_peer_drop(w->store, p);
    else
        bs_request(w->store, p, m, w->now);
    if (bs_bytes(w->store) > MAX_BYTES)
        abort();
    return 0;
}

/* The same bytes as a client would read them: only decoding. */
static int on_answer(void *ctx, const struct bp_msg *m)
{
    (void)ctx;
    return m->klen ? -1 : 0;
}

static void feed_pieces(struct bp_conn *c, const uint8_t *d, size_t n,
                        size_t piece, struct world *w)
{
    struct err err = { "" };

    for (size_t off = 0; off < n; off += piece) {
        size_t take = n - off < piece ? n - off : piece;

        if (bp_feed(c, d + off, take, &err) < 0)
            break;
        if (w)
            bs_expire(w->store, w->now);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const size_t pieces[8] = { 1, 2, 3, 7, 24, 25, 100, 1 << 20 };
    struct bs_limits lim = { .max_value = 4096, .max_bytes = MAX_BYTES,
                             .max_parked = 64 };
    struct world w = { .now = 1 };
    struct bp_conn c;
    uint8_t auth[BP_HDR_LEN + TOKEN_BYTES];
    struct bp_msg am = { .op = BP_AUTH, .arg = BP_VERSION, .val = token,
                         .vlen = TOKEN_BYTES };
    struct err err = { "" };

    if (size < 1)
        return 0;
    w.store = bs_create(&lim, 1, on_reply, &w, &err);
    if (!w.store)
        abort();
    for (int i = 0; i < 4; i++)
        bs_peer_init(&w.peers[i], NULL);
    bp_conn_init(&c, BP_SERVER, token, lim.max_value, on_msg, &w);
    bp_encode(auth, &am);
    if (!(data[0] & 1) && bp_feed(&c, auth, sizeof auth, &err) < 0)
        abort();
    feed_pieces(&c, data + 1, size - 1, pieces[(data[0] >> 1) & 7], &w);
    bs_expire(w.store, UINT64_MAX);
    bp_conn_free(&c);
    bp_conn_init(&c, BP_CLIENT, NULL, lim.max_value, on_answer, NULL);
    feed_pieces(&c, data + 1, size - 1, pieces[(data[0] >> 1) & 7], NULL);
    bp_conn_free(&c);
    for (int i = 0; i < 4; i++)
        bs_peer_drop(w.store, &w.peers[i]);
    bs_destroy(w.store);
    return 0;
}
