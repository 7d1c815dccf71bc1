/* t_broker_proto.c - the broker's wire engine: frames split anywhere,
 * the AUTH rules, every way a frame can be bad, limits, and encoding. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rendezvous/broker_proto.h"
#include "tap.h"

static const uint8_t token[TOKEN_BYTES] = "0123456789abcdef";
static const uint8_t bad_token[TOKEN_BYTES] = "0123456789abcdeF";

/* What the callback saw, one line per frame. */
static char seen[8192];
static int stop_after = -1;     /* make the callback refuse the Nth frame */
static int nseen;

static int record(void *ctx, const struct bp_msg *m)
{
    size_t at = strlen(seen);

    (void)ctx;
    if (nseen++ == stop_after)
        return -1;
    snprintf(seen + at, sizeof seen - at, "%s#%u s%u t%u a%lld k'%.*s' v%zu\n",
             bp_op_name(m->op), (unsigned)m->id, (unsigned)m->status,
             (unsigned)m->timeout_ms, (long long)m->arg, (int)m->klen,
             (const char *)m->key, m->vlen);
    return 0;
}

/* A stream under construction. */
struct stream {
    uint8_t b[1 << 16];
    size_t n;
};

static void add(struct stream *s, uint8_t op, uint32_t id, const char *key,
                const void *val, size_t vlen, int64_t arg, uint32_t tmo)
{
    struct bp_msg m = { .op = op, .id = id, .arg = arg, .timeout_ms = tmo,
                        .key = (const uint8_t *)key,
                        .klen = key ? strlen(key) : 0, .val = val,
                        .vlen = vlen };

    bp_encode(s->b + s->n, &m);
    s->n += bp_frame_size(&m);
}

static void add_auth(struct stream *s, const uint8_t *tok, int64_t version)
{
    add(s, BP_AUTH, 1, NULL, tok, TOKEN_BYTES, version, 0);
}

/* Feed the stream as a server (max_value 64) in pieces of at most step
 * bytes, starting with a first piece of first bytes.  0 / -1; err kept. */
static int feed(const struct stream *s, size_t first, size_t step,
                struct err *err)
{
    struct bp_conn c;
    size_t off = 0;
    int rc = 0;

    seen[0] = '\0';
    nseen = 0;
    bp_conn_init(&c, BP_SERVER, token, 64, record, NULL);
    while (rc == 0 && off < s->n) {
        size_t take = off == 0 && first ? first : step;

        if (take > s->n - off)
            take = s->n - off;
        rc = bp_feed(&c, s->b + off, take, err);
        off += take;
    }
    bp_conn_free(&c);
    return rc;
}

static const char good_seen[] =
    "auth#1 s0 t0 a1 k'' v16\n"
    "put#2 s0 t0 a0 k'key' v5\n"
    "get#3 s0 t1500 a0 k'key' v0\n"
    "add#4 s0 t0 a-7 k'n' v0\n"
    "barrier#5 s0 t4294967295 a3 k'b' v0\n"
    "del#4294967295 s0 t0 a0 k'key' v0\n"
    "put#7 s0 t0 a0 k'e' v0\n";

static void good_stream(struct stream *s)
{
    s->n = 0;
    add_auth(s, token, BP_VERSION);
    add(s, BP_PUT, 2, "key", "value", 5, 0, 0);
    add(s, BP_GET, 3, "key", NULL, 0, 0, 1500);
    add(s, BP_ADD, 4, "n", NULL, 0, -7, 0);
    add(s, BP_BARRIER, 5, "b", NULL, 0, 3, BP_WAIT_FOREVER);
    add(s, BP_DEL, UINT32_MAX, "key", NULL, 0, 0, 0);
    add(s, BP_PUT, 7, "e", NULL, 0, 0, 0);
}

static void test_splits(void)
{
    struct stream s;
    struct err err = { "" };
    int bad = 0;

    good_stream(&s);
    is_int(feed(&s, 0, s.n, &err), 0, "whole stream in one piece");
    is_str(seen, good_seen, "every frame decoded");
    for (size_t cut = 1; cut < s.n; cut++)
        if (feed(&s, cut, s.n, &err) != 0 || strcmp(seen, good_seen) != 0)
            bad++;
    is_int(bad, 0, "split in two at every byte boundary");
    for (size_t step = 1; step <= 7; step++)
        if (feed(&s, 0, step, &err) != 0 || strcmp(seen, good_seen) != 0)
            bad++;
    is_int(bad, 0, "fed 1 to 7 bytes at a time");
}

/* A frame that breaks one rule: built good, then one field patched. */
struct bad {
    const char *what;
    int auth;                   /* a good AUTH before it */
    uint8_t op;
    int klen;                   /* that many 'k's */
    size_t vlen;                /* that many 'v's */
    int64_t arg;
    int poff, pbytes;           /* patch pbytes (0: none) at poff... */
    uint32_t pval;              /* ...with pval, big-endian */
    const char *want;           /* in the error */
};

static const struct bad bads[] = {
    { "PUT before AUTH", 0, BP_PUT, 1, 16, 0, 0, 0, 0,
      "first frame is not AUTH" },
    { "AUTH with a wrong token", 0, BP_AUTH, 0, 0, 0, 0, 0, 0,
      "wrong token" },
    { "AUTH of version 3", 0, BP_AUTH, 0, 16, 3, 0, 0, 0,
      "protocol version 3" },
    { "AUTH with a key (length 37)", 0, BP_AUTH, 1, 16, 1, 0, 0, 0,
      "first frame is not AUTH (length 37)" },
    { "AUTH with a status byte", 0, BP_AUTH, 0, 16, 1, 5, 1, 1,
      "first frame is not AUTH" },
    { "AUTH twice", 1, BP_AUTH, 0, 16, 1, 0, 0, 0, "AUTH sent twice" },
    { "length 19", 1, BP_PUT, 1, 0, 0, 0, 4, 19, "frame length 19" },
    { "length 0", 1, BP_PUT, 1, 0, 0, 0, 4, 0, "frame length 0" },
    { "length above key + value limits", 1, BP_PUT, 1, 0, 0, 0, 4,
      20 + 256 + 64 + 1, "frame length 341" },
    { "length 4 GiB - 1", 1, BP_PUT, 1, 0, 0, 0, 4, UINT32_MAX,
      "frame length 4294967295" },
    { "operation 0", 1, BP_PUT, 1, 0, 0, 4, 1, 0, "unknown operation 0" },
    { "operation 7", 1, BP_PUT, 1, 0, 0, 4, 1, 7, "unknown operation 7" },
    { "operation 255", 1, BP_PUT, 1, 0, 0, 4, 1, 255,
      "unknown operation 255" },
    { "status byte in a request", 1, BP_GET, 1, 0, 0, 5, 1, 2,
      "status byte 2" },
    { "key of 257 bytes", 1, BP_GET, 257, 0, 0, 0, 0, 0,
      "key of 257 bytes" },
    { "key length beyond the frame", 1, BP_GET, 1, 0, 0, 6, 2, 200,
      "key of 200 bytes in a frame of 25" },
    { "value of 65 bytes (limit 64)", 1, BP_PUT, 1, 65, 0, 0, 0, 0,
      "value of 65 bytes" },
    { "GET with a value", 1, BP_GET, 1, 1, 0, 0, 0, 0,
      "get carries no value" },
    { "BARRIER with a value", 1, BP_BARRIER, 1, 2, 2, 0, 0, 0,
      "barrier carries no value" },
};

static void build_bad(const struct bad *b, struct stream *s)
{
    char key[300], val[100];
    size_t at;

    memset(key, 'k', sizeof key);
    key[b->klen] = '\0';
    memset(val, 'v', sizeof val);
    s->n = 0;
    if (b->auth)
        add_auth(s, token, BP_VERSION);
    at = s->n;
    if (b->op == BP_AUTH && !b->vlen && !b->klen)
        add_auth(s, bad_token, BP_VERSION);
    else
        add(s, b->op, 9, b->klen ? key : NULL, val, b->vlen, b->arg, 0);
    for (int i = 0; i < b->pbytes; i++)
        s->b[at + (size_t)b->poff + (size_t)i] =
            (uint8_t)(b->pval >> (8 * (b->pbytes - 1 - i)));
}

static void test_bad_frames(void)
{
    char what[160];

    for (size_t i = 0; i < sizeof bads / sizeof bads[0]; i++) {
        struct stream s;
        struct err e1 = { "" }, e2 = { "" };
        int whole, bytewise;

        build_bad(&bads[i], &s);
        whole = feed(&s, 0, s.n, &e1);
        bytewise = feed(&s, 0, 1, &e2);
        snprintf(what, sizeof what, "bad frame: %s -> '%s'", bads[i].what,
                 bads[i].want);
        ok(whole < 0 && bytewise < 0 && strstr(e1.msg, bads[i].want) &&
           strcmp(e1.msg, e2.msg) == 0 && nseen == bads[i].auth, what);
        if (!strstr(e1.msg, bads[i].want) || strcmp(e1.msg, e2.msg) != 0)
            printf("#   whole: '%s'\n#   bytewise: '%s'\n", e1.msg, e2.msg);
    }
}

/* Oversized and non-AUTH lengths are refused on their 4th byte, before
 * any of the body is held. */
static void test_early_refusal(void)
{
    static const uint8_t huge[4] = { 0x7f, 0xff, 0xff, 0xff };
    static const uint8_t http[] = "GET / HTTP/1.1\r\n";
    struct stream s;
    struct bp_conn c;
    struct err err = { "" };

    bp_conn_init(&c, BP_SERVER, token, 64, record, NULL);
    is_int(bp_feed(&c, huge, 3, &err), 0, "3 bytes of a length: held");
    is_int(bp_pending(&c), 3, "3 bytes pending");
    ok(bp_feed(&c, huge + 3, 1, &err) < 0 && strstr(err.msg, "not AUTH"),
       "a huge first frame is refused at its 4th byte");
    bp_conn_free(&c);
    bp_conn_init(&c, BP_SERVER, token, 64, record, NULL);
    ok(bp_feed(&c, http, sizeof http - 1, &err) < 0 &&
       strstr(err.msg, "first frame is not AUTH"), "HTTP is refused");
    bp_conn_free(&c);
    s.n = 0;
    add_auth(&s, token, BP_VERSION);
    memcpy(s.b + s.n, huge, 4);
    bp_conn_init(&c, BP_SERVER, token, 64, record, NULL);
    ok(bp_feed(&c, s.b, s.n + 4, &err) < 0 && bp_pending(&c) <= 4 &&
       strstr(err.msg, "frame length 2147483647"),
       "after AUTH, an oversized frame is refused before its body");
    bp_conn_free(&c);
}

/* The limits themselves are accepted: a 256-byte key, a 64-byte value. */
static void test_limits_exact(void)
{
    struct stream s;
    struct err err = { "" };
    char key[BP_MAX_KEY + 1], val[64];

    memset(key, 'k', BP_MAX_KEY);
    key[BP_MAX_KEY] = '\0';
    memset(val, 'v', sizeof val);
    s.n = 0;
    add_auth(&s, token, BP_VERSION);
    add(&s, BP_PUT, 2, key, val, sizeof val, 0, 0);
    ok(feed(&s, 0, 1000, &err) == 0 && nseen == 2,
       "256-byte key and a value at the limit are accepted");
}

/* Requests before AUTH are refused even when split; nothing is delivered
 * from a connection whose AUTH failed. */
static void test_auth_rules(void)
{
    struct stream s;
    struct err err = { "" };

    s.n = 0;
    add_auth(&s, bad_token, BP_VERSION);
    add(&s, BP_PUT, 2, "k", "v", 1, 0, 0);
    ok(feed(&s, 0, 1, &err) < 0 && nseen == 0 &&
       strstr(err.msg, "wrong token"), "wrong token: nothing delivered");
    s.n = 0;
    add_auth(&s, token, BP_VERSION);
    add(&s, BP_PUT, 2, "k", "v", 1, 0, 0);
    ok(feed(&s, 0, 1, &err) == 0 && nseen == 2, "good token: AUTH, then PUT");
    stop_after = 1;
    ok(feed(&s, 0, s.n, &err) < 0 && strcmp(err.msg, "stopped") == 0,
       "a callback that refuses stops the feed");
    stop_after = -1;
}

/* Client side: answers decode; an answer with a key or an unknown status
 * is refused. */
static void test_client_role(void)
{
    static const uint8_t big[100] = { 1 };
    struct stream s = { .n = 0 };
    struct bp_conn c;
    struct err err = { "" };
    struct bp_msg m = { .op = BP_GET, .status = BP_TIMEOUT, .id = 42 };

    bp_encode(s.b, &m);
    s.n = bp_frame_size(&m);
    m = (struct bp_msg){ .op = BP_GET, .id = 43, .val = big, .vlen = 100 };
    bp_encode(s.b + s.n, &m);
    s.n += bp_frame_size(&m);
    seen[0] = '\0';
    nseen = 0;
    bp_conn_init(&c, BP_CLIENT, NULL, BP_MAX_VALUE_CEILING, record, NULL);
    ok(bp_feed(&c, s.b, s.n, &err) == 0 && nseen == 2 &&
       strcmp(seen, "get#42 s2 t0 a0 k'' v0\nget#43 s0 t0 a0 k'' v100\n") == 0,
       "client: answers decoded, no AUTH needed");
    s.b[5] = 9;
    ok(bp_feed(&c, s.b, BP_HDR_LEN, &err) < 0 &&
       strstr(err.msg, "unknown status 9"), "client: unknown status refused");
    bp_conn_free(&c);
    m = (struct bp_msg){ .op = BP_PUT, .key = (const uint8_t *)"k", .klen = 1 };
    bp_encode(s.b, &m);
    bp_conn_init(&c, BP_CLIENT, NULL, BP_MAX_VALUE_CEILING, record, NULL);
    ok(bp_feed(&c, s.b, bp_frame_size(&m), &err) < 0 &&
       strstr(err.msg, "with a key"), "client: an answer with a key refused");
    bp_conn_free(&c);
}

/* Encoding is exact: known bytes for one frame, and extreme fields. */
static void test_encoding(void)
{
    static const uint8_t want[] = {
        0, 0, 0, 23, 4, 0, 0, 2, 0, 0, 1, 2, 0, 0, 0, 9,
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe, 'a', 'b', 'c' };
    uint8_t out[64];
    struct bp_msg m = { .op = BP_ADD, .id = 258, .timeout_ms = 9, .arg = -2,
                        .key = (const uint8_t *)"ab", .klen = 2,
                        .val = (const uint8_t *)"c", .vlen = 1 };
    struct stream s = { .n = 0 };
    struct err err = { "" };

    bp_encode(out, &m);
    ok(bp_frame_size(&m) == sizeof want && memcmp(out, want, sizeof want) == 0,
       "frame bytes are big-endian, as documented");
    add_auth(&s, token, BP_VERSION);
    add(&s, BP_ADD, 7, "x", NULL, 0, INT64_MIN, 0);
    add(&s, BP_ADD, 8, "y", NULL, 0, INT64_MAX, 0);
    feed(&s, 0, s.n, &err);
    ok(strstr(seen, "add#7 s0 t0 a-9223372036854775808 k'x'") &&
       strstr(seen, "add#8 s0 t0 a9223372036854775807 k'y'"),
       "INT64_MIN and INT64_MAX survive the trip");
    is_str(bp_op_name(0), "?", "op name of 0");
    is_str(bp_status_name(BP_LIMIT), "limit reached", "status name");
}

/* A large frame's buffer is released once it is delivered. */
static void test_buffer_release(void)
{
    static uint8_t val[60000];
    struct stream s = { .n = 0 };
    struct bp_conn c;
    struct err err = { "" };

    add_auth(&s, token, BP_VERSION);
    add(&s, BP_PUT, 2, "k", val, sizeof val, 0, 0);
    bp_conn_init(&c, BP_SERVER, token, sizeof val, record, NULL);
    ok(bp_feed(&c, s.b, 100, &err) == 0 && c.cap >= sizeof val,
       "a partial large frame is buffered whole");
    ok(bp_feed(&c, s.b + 100, s.n - 100, &err) == 0 && c.cap == 0 &&
       bp_pending(&c) == 0, "then released once delivered");
    bp_conn_free(&c);
}

int main(void)
{
    test_splits();
    test_bad_frames();
    test_early_refusal();
    test_limits_exact();
    test_auth_rules();
    test_client_role();
    test_encoding();
    test_buffer_release();
    return tap_done();
}
