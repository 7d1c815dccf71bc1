/* broker_proto.h - the broker's wire protocol as an engine without sockets.
 *
 * Feed it the bytes a peer sent, in pieces of any size; it calls back
 * once per complete, valid frame and refuses (returns -1) at the first
 * byte that breaks a rule, so the caller can drop the peer.  Nothing here
 * reads a clock or touches a file descriptor: the tests and the fuzzer
 * drive it directly, the epoll server (broker.c), the blocking client
 * (client.c) and the benchmark share it.
 *
 * Every frame, either way, is a 4-byte length then a 20-byte fixed part,
 * then the key and the value (all integers big-endian):
 *
 *   len u32 | op u8 | status u8 | klen u16 | id u32 | timeout_ms u32 |
 *   arg i64 | key[klen] | value[len - 20 - klen]
 *
 * man/dlrun-broker.7 is the reference (operations, statuses, limits). */
#ifndef DLRUN_BROKER_PROTO_H
#define DLRUN_BROKER_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"
#include "rendezvous/token.h"

#define BP_VERSION 1                    /* what ranks speak */
#define BP_VERSION_WEIGHTED 2           /* v1 + weighted barrier arrivals:
                                           what an agent's relay speaks */
#define BP_FIXED_LEN 20                 /* after the length field */
#define BP_HDR_LEN (4 + BP_FIXED_LEN)   /* bytes before the key */
#define BP_MAX_KEY 256                  /* a key or barrier name, bytes */
#define BP_DEFAULT_MAX_VALUE (1u << 20) /* 1 MiB */
#define BP_MAX_VALUE_CEILING (256u << 20) /* what a server may be set to */
#define BP_WAIT_FOREVER UINT32_MAX      /* timeout_ms: no deadline */

enum bp_op {
    BP_AUTH = 1,        /* value: the 16 token bytes; arg: BP_VERSION */
    BP_PUT = 2,         /* key, value */
    BP_GET = 3,         /* key, timeout_ms */
    BP_ADD = 4,         /* key, arg: the amount */
    BP_BARRIER = 5,     /* key: the name, arg: the count, timeout_ms;
                           version 2: value may be a u32 weight, the
                           arrivals this one stands for (an agent's) */
    BP_DEL = 6,         /* key */
};

enum bp_status {
    BP_OK = 0,
    BP_NOTFOUND = 1,    /* GET without wait, DEL: no such key */
    BP_TIMEOUT = 2,     /* GET or BARRIER: the deadline passed */
    BP_INVALID = 3,     /* empty key, count 0 or different from the
                           barrier's, counter not an integer or overflowing */
    BP_LIMIT = 4,       /* the store is full, or too many parked requests */
};

/* One frame, decoded.  key and val point into the engine's buffer or the
 * caller's bytes: borrowed, valid only during the callback. */
struct bp_msg {
    uint8_t op, status;
    uint32_t id, timeout_ms;
    int64_t arg;
    const uint8_t *key, *val;
    size_t klen, vlen;
};

/* Server: the peer must authenticate first and sends requests.
 * Client: the peer is a broker and sends responses. */
enum bp_role { BP_SERVER, BP_CLIENT };

/* Called once per valid frame.  Return 0 to go on, -1 to stop feeding
 * (bp_feed then returns -1 with err "stopped"); it must not free the
 * connection. */
typedef int (*bp_msg_fn)(void *ctx, const struct bp_msg *m);

/* The parser state of one connection.  Fields are private. */
struct bp_conn {
    enum bp_role role;
    const uint8_t *token;       /* borrowed, TOKEN_BYTES (server only) */
    size_t max_value;
    int authed;
    int version;                /* server: what the peer's AUTH said */
    int auth_refused;           /* server: a well-formed AUTH came with a
                                   wrong token or version (the peer may be
                                   told so; garbage is not answered) */
    uint8_t *buf;               /* owned: the partial frame */
    size_t have, need, cap;     /* need: 0 until the length is known */
    bp_msg_fn on_msg;
    void *ctx;
};

/* Set up c (no allocation).  token: the server's secret, borrowed for the
 * life of c; NULL for BP_CLIENT.  max_value: the largest value accepted
 * (BP_CLIENT: use BP_MAX_VALUE_CEILING until AUTH's answer says). */
void bp_conn_init(struct bp_conn *c, enum bp_role role, const uint8_t *token,
                  size_t max_value, bp_msg_fn on_msg, void *ctx);

/* Release c's buffer; c may be initialised again. */
void bp_conn_free(struct bp_conn *c);

/* Parse len bytes at data (borrowed), calling on_msg per frame.  0, or -1
 * with err saying which rule the peer broke: the caller must then stop
 * reading from it (the state is not meant to go on). */
int bp_feed(struct bp_conn *c, const uint8_t *data, size_t len,
            struct err *err);

/* Bytes of input held for an incomplete frame (for limits and tests). */
size_t bp_pending(const struct bp_conn *c);

/* The size of m's whole frame, from m->klen and m->vlen. */
size_t bp_frame_size(const struct bp_msg *m);

/* Write m's length and fixed part (BP_HDR_LEN bytes) to out. */
void bp_encode_hdr(uint8_t out[BP_HDR_LEN], const struct bp_msg *m);

/* Write m's whole frame (bp_frame_size(m) bytes) to out. */
void bp_encode(uint8_t *out, const struct bp_msg *m);

/* "put", "get"... and "ok", "not found"...; "?" for other numbers.
 * Static strings. */
const char *bp_op_name(int op);
const char *bp_status_name(int status);

#endif
