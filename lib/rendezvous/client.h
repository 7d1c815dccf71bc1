/* client.h - a blocking client of the broker, for ranks, agents and
 * `dlrun kv`: one connection, one request at a time.
 *
 * Keys and barrier names are C strings of 1 to BP_MAX_KEY bytes.
 * Timeouts are in milliseconds: 0 = do not wait, CLIENT_FOREVER = no
 * deadline.  Every call returns 0 or one of the negative codes below with
 * err filled.  After CLIENT_ERROR on an established connection (the broker
 * went away, an answer did not come) the connection is closed and every
 * later call fails the same way: connect again.  contrib/include/dlrun.h
 * is the stable API for users; this one may change. */
#ifndef DLRUN_CLIENT_H
#define DLRUN_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

#define CLIENT_FOREVER (-1)
#define CLIENT_NCCL_ID_BYTES 128    /* sizeof(ncclUniqueId) */

enum client_rc {
    CLIENT_OK = 0,
    CLIENT_ERROR = -1,      /* connection, protocol, or a bad argument */
    CLIENT_TIMEOUT = -2,    /* GET or BARRIER: the deadline passed */
    CLIENT_NOTFOUND = -3,   /* GET without waiting, DEL: no such key */
    CLIENT_REFUSED = -4,    /* the broker said invalid or limit reached */
};

struct client;

/* Connect to broker ("HOST:PORT", "[V6ADDR]:PORT" or "unix:PATH",
 * borrowed) and authenticate with token_hex (32 hex digits, borrowed).
 * Refused connections, and connections the broker turns away before
 * AUTH (no room: a flood of connections without the token), are retried
 * with a growing pause until timeout_ms (> 0) has passed, so a client may
 * start before its broker and outlast a flood.  A wrong token is not
 * retried.  err says which happened.  Caller must client_close().  NULL
 * with err. */
struct client *client_connect(const char *broker, const char *token_hex,
                              int timeout_ms, struct err *err);

/* client_connect() with DLRUN_BROKER and DLRUN_TOKEN from the
 * environment; err names the variable that is missing. */
struct client *client_from_env(int timeout_ms, struct err *err);

/* Close the connection (parked requests are withdrawn) and free c.  NULL
 * is a no-op. */
void client_close(struct client *c);

/* How long past a request's own timeout an answer may take before the
 * connection counts as broken (default 30 s): an agent's heartbeat uses
 * its --heartbeat-timeout. */
void client_set_answer_grace(struct client *c, int ms);

/* The largest value the broker accepts (it said so at AUTH). */
size_t client_max_value(const struct client *c);

/* Set key to the len bytes at val (borrowed; copied by the broker). */
int client_put(struct client *c, const char *key, const void *val,
               size_t len, struct err *err);

/* The value of key, waiting up to timeout_ms for it to be set.  On 0,
 * *val is malloc'd (one NUL byte past *len, for text; caller frees) and
 * *len its size; on failure *val is NULL. */
int client_get(struct client *c, const char *key, int timeout_ms,
               void **val, size_t *len, struct err *err);

/* Add delta to the counter key (created at 0; stored as decimal text) and
 * set *result (may be NULL) to the new value. */
int client_add(struct client *c, const char *key, int64_t delta,
               int64_t *result, struct err *err);

/* Wait until count callers (this one included) have reached barrier
 * name, or timeout_ms passed (this arrival is then withdrawn).  *gen (may
 * be NULL) gets the generation released: 0, then 1 for the next use of the
 * same name... */
int client_barrier(struct client *c, const char *name, uint32_t count,
                   int timeout_ms, int64_t *gen, struct err *err);

/* Delete key (CLIENT_NOTFOUND when there was none). */
int client_del(struct client *c, const char *key, struct err *err);

/* The NCCL unique id of group name, agreed through the broker: the first
 * caller of the group creates it with ncclGetUniqueId (libnccl.so.2, or
 * $DLRUN_NCCL_LIBRARY, loaded with dlopen and kept loaded: the id's
 * bootstrap thread runs in it) and publishes it; the others wait up to
 * timeout_ms for it.  If the creator cannot load NCCL, it publishes the
 * reason and every member fails with it. */
int client_nccl_unique_id(struct client *c, const char *name, int timeout_ms,
                          uint8_t id[CLIENT_NCCL_ID_BYTES], struct err *err);

/* A connected socket (close-on-exec, its mode as dial left it: the
 * caller sets O_NONBLOCK as it needs; caller closes) to broker
 * (as client_connect takes it), refused connections retried until
 * timeout_ms; nothing sent.  -1 with err.  For an agent's relay, which
 * speaks the protocol itself. */
int client_dial(const char *broker, int timeout_ms, struct err *err);

/* Split "HOST:PORT" or "[V6]:PORT" (borrowed) into host (len bytes) and
 * *port.  0 / -1 with err. */
int client_parse_addr(const char *broker, char *host, size_t len, int *port,
                      struct err *err);

#endif
