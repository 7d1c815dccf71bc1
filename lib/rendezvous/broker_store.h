/* broker_store.h - what the broker keeps: keys and values, counters,
 * barriers, and the requests parked until a key appears, a barrier fills
 * or a deadline passes.
 *
 * Pure: no sockets and no clock (each call is given "now" in
 * milliseconds), so the tests and the fuzzer drive it directly.  Answers
 * go out through one callback, now or later; a peer is whatever the caller
 * embeds a struct bs_peer in (a connection).  Keys live in a hash table,
 * deadlines in a binary heap: every operation is O(1) or O(log n) plus
 * the answers it sends. */
#ifndef DLRUN_BROKER_STORE_H
#define DLRUN_BROKER_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "rendezvous/broker_proto.h"
#include "util/err.h"

/* A value, shared (reference counted) between the store and the output
 * queues of every peer it is being sent to: a 1 MiB value answered to ten
 * thousand waiters is held once. */
struct bs_value {
    size_t refs;
    size_t len;
    size_t *orphans;    /* once the store let go while others held it:
                           the store's count of such bytes (private) */
    uint8_t data[];
};

/* Take or drop one reference; the last drop frees v.  NULL is a no-op.
 * A value the store let go of must not outlive the store. */
void bs_value_ref(struct bs_value *v);
void bs_value_unref(struct bs_value *v);

struct bs_limits {
    size_t max_value;   /* bytes in one value (the protocol engine checks
                           it too); 0: BP_DEFAULT_MAX_VALUE */
    size_t max_bytes;   /* keys, values, barriers and parked requests,
                           with their bookkeeping; 0: 1 GiB */
    size_t max_parked;  /* parked GET/BARRIER requests per peer; 0: 1024 */
};

struct bs_waiter;

/* The store's view of one peer: the caller embeds it (bs_peer_init) and
 * passes it with each request; the store links the peer's parked requests
 * here so they can be dropped with it. */
struct bs_peer {
    struct bs_waiter *parked;   /* private */
    size_t nparked;
    void *user;                 /* the caller's, untouched */
};

/* One answer.  val is borrowed for the callback (take a reference to keep
 * it); NULL when the answer has no value. */
struct bs_reply {
    uint8_t op, status;
    uint32_t id;
    int64_t arg;
    struct bs_value *val;
};

/* Called for every answer.  It must not call back into the store (it
 * may be in the middle of releasing a barrier); to drop a peer, mark it
 * and call bs_peer_drop() afterwards. */
typedef void (*bs_reply_fn)(void *ctx, struct bs_peer *peer,
                            const struct bs_reply *r);

struct bs_store;

/* A new, empty store.  lim is copied; seed salts the key hash; reply and
 * ctx are kept.  Caller must bs_destroy().  NULL with err. */
struct bs_store *bs_create(const struct bs_limits *lim, uint64_t seed,
                           bs_reply_fn reply, void *ctx, struct err *err);

/* Free everything, parked requests included, answering none.  NULL ok. */
void bs_destroy(struct bs_store *s);

/* Make p a peer with nothing parked; user is stored as is. */
void bs_peer_init(struct bs_peer *p, void *user);

/* Carry out one request m (borrowed: key and value are copied) from peer
 * p at time now_ms.  Answers at once through the callback, or parks the
 * request (GET of an absent key, BARRIER not yet full) and answers it
 * later from bs_request, bs_expire.  AUTH is not a store request: it is
 * answered BP_INVALID. */
void bs_request(struct bs_store *s, struct bs_peer *p, const struct bp_msg *m,
                uint64_t now_ms);

/* The arrivals a BARRIER request m stands for: 1, or the u32 weight its
 * 4-byte value carries (protocol version 2: an agent's aggregate).  0 is
 * answered INVALID. */
uint32_t bs_barrier_weight(const struct bp_msg *m);

/* Forget p's parked requests without answering (its connection is gone);
 * its barrier arrivals are withdrawn.  p may then be reused or freed. */
void bs_peer_drop(struct bs_store *s, struct bs_peer *p);

/* Answer BP_TIMEOUT to every parked request whose deadline is <= now_ms
 * (a timed-out barrier arrival is withdrawn). */
void bs_expire(struct bs_store *s, uint64_t now_ms);

/* The earliest deadline of a parked request, or UINT64_MAX when none. */
uint64_t bs_next_deadline(const struct bs_store *s);

/* The value of key (a C string) or NULL; borrowed until the next call
 * that changes the store.  For the process that embeds the store. */
const struct bs_value *bs_peek(const struct bs_store *s, const char *key);

/* Statistics, for tests and limits. */
size_t bs_bytes(const struct bs_store *s);      /* accounted bytes */
size_t bs_nkeys(const struct bs_store *s);      /* keys with a value */
size_t bs_nparked(const struct bs_store *s);    /* all peers' */
/* Bytes of values the store replaced or deleted that are still held
 * elsewhere (answers not yet written): memory the store no longer
 * counts in max_bytes, which the holder must. */
size_t bs_orphan_bytes(const struct bs_store *s);

#endif
