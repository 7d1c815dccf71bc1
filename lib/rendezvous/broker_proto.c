/* broker_proto.c - see broker_proto.h. */
#include "rendezvous/broker_proto.h"

#include <stdlib.h>
#include <string.h>

/* Buffers above this are freed after their frame, so that an idle peer
 * that once sent a large value does not keep a megabyte. */
#define KEEP_BUF 4096

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
           (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static void put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

void bp_conn_init(struct bp_conn *c, enum bp_role role, const uint8_t *token,
                  size_t max_value, bp_msg_fn on_msg, void *ctx)
{
    memset(c, 0, sizeof *c);
    c->role = role;
    c->token = token;
    c->max_value = max_value < BP_MAX_VALUE_CEILING ? max_value
                                                    : BP_MAX_VALUE_CEILING;
    c->on_msg = on_msg;
    c->ctx = ctx;
}

void bp_conn_free(struct bp_conn *c)
{
    free(c->buf);
    c->buf = NULL;
    c->have = c->need = c->cap = 0;
}

size_t bp_pending(const struct bp_conn *c)
{
    return c->have;
}

/* The whole frame's size from its length field, or 0 with err when the
 * length breaks a rule.  Checked as soon as 4 bytes are in, so an
 * oversized frame is refused before any of its body is buffered. */
static size_t frame_total(const struct bp_conn *c, const uint8_t *p,
                          struct err *err)
{
    uint32_t len = get_u32(p);
    size_t max = BP_FIXED_LEN + (c->role == BP_SERVER ? BP_MAX_KEY : 0) +
                 c->max_value;

    if (c->role == BP_SERVER && !c->authed &&
        len != BP_FIXED_LEN + TOKEN_BYTES) {
        err_set(err, "first frame is not AUTH (length %u)", (unsigned)len);
        return 0;
    }
    if (len < BP_FIXED_LEN || len > max) {
        err_set(err, "frame length %u outside %d..%zu", (unsigned)len,
                BP_FIXED_LEN, max);
        return 0;
    }
    return 4 + (size_t)len;
}

static void decode(const uint8_t *f, size_t total, struct bp_msg *m)
{
    uint64_t arg = (uint64_t)get_u32(f + 16) << 32 | get_u32(f + 20);

    m->op = f[4];
    m->status = f[5];
    m->klen = (size_t)f[6] << 8 | f[7];
    m->id = get_u32(f + 8);
    m->timeout_ms = get_u32(f + 12);
    /* two's complement on every target we build for; memcpy keeps it
     * free of implementation-defined conversion */
    memcpy(&m->arg, &arg, sizeof m->arg);
    m->key = f + BP_HDR_LEN;
    m->vlen = m->klen <= total - BP_HDR_LEN ? total - BP_HDR_LEN - m->klen : 0;
    m->val = m->key + m->klen;
}

/* The first frame of a server connection: AUTH (its length was checked
 * with the length field). */
static int check_auth_head(const struct bp_msg *m, struct err *err)
{
    if (m->op != BP_AUTH || m->status || m->klen)
        return err_set(err, "first frame is not AUTH");
    return 0;
}

/* AUTH's body: version 1 and the token. */
static int check_auth(struct bp_conn *c, const struct bp_msg *m,
                      struct err *err)
{
    c->auth_refused = 1;
    if (m->arg != BP_VERSION && m->arg != BP_VERSION_WEIGHTED)
        return err_set(err, "protocol version %lld (this broker speaks %d "
                       "and %d)", (long long)m->arg, BP_VERSION,
                       BP_VERSION_WEIGHTED);
    if (!token_equal(m->val, c->token, TOKEN_BYTES))
        return err_set(err, "wrong token");
    c->auth_refused = 0;
    c->authed = 1;
    c->version = (int)m->arg;
    return 0;
}

static int check_request(const struct bp_conn *c, const struct bp_msg *m,
                         struct err *err)
{
    if (m->op == BP_AUTH)
        return err_set(err, "AUTH sent twice");
    if (m->op < BP_PUT || m->op > BP_DEL)
        return err_set(err, "unknown operation %u", (unsigned)m->op);
    if (m->status != 0)
        return err_set(err, "status byte %u in a request (must be 0)",
                       (unsigned)m->status);
    if (m->klen > BP_MAX_KEY)
        return err_set(err, "key of %zu bytes (at most %d)", m->klen,
                       BP_MAX_KEY);
    if (m->vlen > c->max_value)
        return err_set(err, "value of %zu bytes (at most %zu)", m->vlen,
                       c->max_value);
    if (m->op == BP_BARRIER && m->vlen == 4 &&
        c->version >= BP_VERSION_WEIGHTED)
        return 0;   /* the weight of an agent's arrival */
    if (m->op != BP_PUT && m->vlen)
        return err_set(err, "%s carries no value", bp_op_name(m->op));
    return 0;
}

static int check_response(const struct bp_msg *m, struct err *err)
{
    if (m->op < BP_AUTH || m->op > BP_DEL)
        return err_set(err, "unknown operation %u", (unsigned)m->op);
    if (m->status > BP_LIMIT)
        return err_set(err, "unknown status %u", (unsigned)m->status);
    if (m->klen)
        return err_set(err, "a response with a key");
    return 0;
}

/* Check what the fixed part of a frame (total bytes in all) says, before
 * its body is read: an oversized key or value is refused at once. */
static int check_head(const struct bp_conn *c, const struct bp_msg *m,
                      size_t total, struct err *err)
{
    if (m->klen > total - BP_HDR_LEN)
        return err_set(err, "key of %zu bytes in a frame of %zu", m->klen,
                       total);
    if (c->role == BP_CLIENT)
        return check_response(m, err);
    return c->authed ? check_request(c, m, err) : check_auth_head(m, err);
}

/* Check the complete frame f (total bytes, length field included) and
 * hand it to the callback. */
static int deliver(struct bp_conn *c, const uint8_t *f, size_t total,
                   struct err *err)
{
    struct bp_msg m;

    decode(f, total, &m);
    if (check_head(c, &m, total, err) < 0)
        return -1;
    if (c->role == BP_SERVER && !c->authed && check_auth(c, &m, err) < 0)
        return -1;
    if (c->on_msg(c->ctx, &m) < 0)
        return err_set(err, "stopped");
    return 0;
}

static int reserve(struct bp_conn *c, size_t want, struct err *err)
{
    uint8_t *grown;

    if (c->cap >= want)
        return 0;
    grown = realloc(c->buf, want);
    if (!grown)
        return err_set(err, "out of memory for a frame of %zu bytes", want);
    c->buf = grown;
    c->cap = want;
    return 0;
}

/* Copy what belongs to the current frame from data into the buffer: the
 * length field, then the fixed part, each checked as soon as it is in,
 * then the rest.  Returns the bytes taken, or -1 with err. */
static long buffer_some(struct bp_conn *c, const uint8_t *data, size_t len,
                        struct err *err)
{
    size_t want = !c->need ? 4 : c->have < BP_HDR_LEN ? BP_HDR_LEN : c->need;
    size_t take = want - c->have < len ? want - c->have : len;
    struct bp_msg m;

    if (reserve(c, want, err) < 0)
        return -1;
    memcpy(c->buf + c->have, data, take);
    c->have += take;
    if (!c->need && c->have == 4) {
        c->need = frame_total(c, c->buf, err);
        if (!c->need || reserve(c, c->need, err) < 0)
            return -1;
    }
    if (c->have == BP_HDR_LEN) {
        decode(c->buf, c->need, &m);
        if (check_head(c, &m, c->need, err) < 0)
            return -1;
    }
    return (long)take;
}

/* Deliver the buffered frame and forget it. */
static int deliver_buffered(struct bp_conn *c, struct err *err)
{
    int rc = deliver(c, c->buf, c->need, err);

    c->have = c->need = 0;
    if (c->cap > KEEP_BUF)
        bp_conn_free(c);
    return rc;
}

int bp_feed(struct bp_conn *c, const uint8_t *data, size_t len,
            struct err *err)
{
    while (len > 0) {
        long took;

        /* whole frames straight from the caller's bytes: no copy */
        if (c->have == 0 && len >= 4) {
            size_t total = frame_total(c, data, err);

            if (!total)
                return -1;
            if (total <= len) {
                if (deliver(c, data, total, err) < 0)
                    return -1;
                data += total;
                len -= total;
                continue;
            }
        }
        took = buffer_some(c, data, len, err);
        if (took < 0)
            return -1;
        data += took;
        len -= (size_t)took;
        if (c->need && c->have == c->need && deliver_buffered(c, err) < 0)
            return -1;
    }
    return 0;
}

size_t bp_frame_size(const struct bp_msg *m)
{
    return BP_HDR_LEN + m->klen + m->vlen;
}

void bp_encode_hdr(uint8_t out[BP_HDR_LEN], const struct bp_msg *m)
{
    uint64_t arg;

    memcpy(&arg, &m->arg, sizeof arg);
    put_u32(out, (uint32_t)(BP_FIXED_LEN + m->klen + m->vlen));
    out[4] = m->op;
    out[5] = m->status;
    out[6] = (uint8_t)(m->klen >> 8);
    out[7] = (uint8_t)m->klen;
    put_u32(out + 8, m->id);
    put_u32(out + 12, m->timeout_ms);
    put_u32(out + 16, (uint32_t)(arg >> 32));
    put_u32(out + 20, (uint32_t)arg);
}

void bp_encode(uint8_t *out, const struct bp_msg *m)
{
    bp_encode_hdr(out, m);
    if (m->klen)
        memcpy(out + BP_HDR_LEN, m->key, m->klen);
    if (m->vlen)
        memcpy(out + BP_HDR_LEN + m->klen, m->val, m->vlen);
}

const char *bp_op_name(int op)
{
    static const char *const names[] = { "?", "auth", "put", "get", "add",
                                         "barrier", "del" };

    return op >= BP_AUTH && op <= BP_DEL ? names[op] : "?";
}

const char *bp_status_name(int status)
{
    static const char *const names[] = { "ok", "not found", "timed out",
                                         "invalid", "limit reached" };

    return status >= BP_OK && status <= BP_LIMIT ? names[status] : "?";
}
