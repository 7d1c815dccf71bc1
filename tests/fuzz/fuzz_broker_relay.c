/* fuzz_broker_relay.c - any bytes from three local peers and from the
 * parent, in any order, into an agent's relay: no crash, no leak, and
 * every frame it sends down or up decodes.
 *
 * The stream is a list of chunks: a selector byte (mod 6: 0-2 a peer,
 * 3 the parent, 4 the clock moves: held barriers are flushed and late
 * AUTHs expire, 5 a new connection, not authenticated, in the slot of
 * peer length % 3 when that one is closed), a length byte, then that many
 * bytes.  The relay's AUTH is answered and each peer has sent a valid
 * AUTH first, so the fuzzer starts past the token (which it cannot
 * guess, as it should not).  The limits are small (2 waiting requests a
 * peer, 1 connection without AUTH, 4 in all) so that they are reached. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rendezvous/broker_relay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t token[TOKEN_BYTES] = "fuzz-token-16byt";

struct fpeer {
    struct br_peer *p;
    struct bp_conn check;   /* decodes what the relay answered it */
    int bad;
};

static struct fpeer peers[3];
static struct bp_conn up_check;
static int up_bad;

static int any(void *ctx, const struct bp_msg *m)
{
    (void)ctx;
    (void)m;
    return 0;
}

static void down(void *ctx, void *user, const uint8_t *p, size_t n)
{
    struct fpeer *fp = user;
    struct err err;

    (void)ctx;
    if (bp_feed(&fp->check, p, n, &err) < 0)
        abort();
}

static void up(void *ctx, const uint8_t *p, size_t n)
{
    struct err err;

    (void)ctx;
    if (!up_bad && bp_feed(&up_check, p, n, &err) < 0)
        abort();
}

static void closed(void *ctx, void *user)
{
    (void)ctx;
    ((struct fpeer *)user)->p = NULL;
}

static void feed_auth(struct br_relay *r, struct fpeer *fp, uint64_t now)
{
    struct bp_msg a = { .op = BP_AUTH, .id = 1, .arg = BP_VERSION_WEIGHTED,
                        .val = token, .vlen = TOKEN_BYTES };
    uint8_t f[BP_HDR_LEN + TOKEN_BYTES];
    struct err err;

    bp_encode(f, &a);
    if (br_relay_from_peer(r, fp->p, f, sizeof f, now, &err) < 0)
        abort();
}

static void chunk(struct br_relay *r, uint8_t sel, const uint8_t *p,
                  size_t n, uint64_t *now)
{
    struct err err;

    if (sel < 3) {
        struct fpeer *fp = &peers[sel];
        if (fp->p && br_relay_from_peer(r, fp->p, p, n, *now, &err) < 0) {
            br_relay_peer_gone(r, fp->p);
            fp->p = NULL;
        }
    } else if (sel == 3) {
        if (br_relay_from_parent(r, p, n, *now, &err) < 0)
            br_relay_parent_lost(r);
    } else if (sel == 4) {
        *now += n * 64;
        br_relay_tick(r, *now);
    } else if (!peers[n % 3].p) {
        peers[n % 3].p = br_relay_accept(r, &peers[n % 3], *now, &err);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const struct br_relay_ops ops = { down, up, closed };
    struct br_relay_conf conf = { .token = token, .expect = 3,
                                  .max_waiting = 2, .auth_timeout_ms = 1000,
                                  .max_unauth = 1, .max_peers = 4 };
    struct bp_msg ok = { .op = BP_AUTH, .id = UINT32_MAX, .arg = 4096 };
    uint8_t f[BP_HDR_LEN];
    struct br_relay *r;
    struct err err;
    uint64_t now = 1;
    int i;

    bp_conn_init(&up_check, BP_SERVER, token, BP_MAX_VALUE_CEILING, any, NULL);
    up_bad = 0;
    r = br_relay_create(&conf, &ops, NULL, &err);
    if (!r)
        return 0;
    bp_encode(f, &ok);
    br_relay_from_parent(r, f, sizeof f, now, &err);
    for (i = 0; i < 3; i++) {
        bp_conn_init(&peers[i].check, BP_CLIENT, NULL, BP_MAX_VALUE_CEILING,
                     any, NULL);
        peers[i].p = br_relay_accept(r, &peers[i], now, &err);
        feed_auth(r, &peers[i], now);
    }
    while (size >= 2) {
        size_t n = data[1] < size - 2 ? data[1] : size - 2;
        chunk(r, data[0] % 6, data + 2, n, &now);
        data += 2 + n;
        size -= 2 + n;
    }
    br_relay_destroy(r);
    for (i = 0; i < 3; i++)
        bp_conn_free(&peers[i].check);
    bp_conn_free(&up_check);
    return 0;
}
