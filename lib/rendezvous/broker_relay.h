/* broker_relay.h - an agent's stand-in for the head's broker: it serves
 * its own node's ranks (and child agents) on a local socket, answers what
 * it safely can itself, and forwards the rest over ONE connection to its
 * parent (the head's broker or the parent agent's relay), so the head's
 * work grows with nodes, not ranks.
 *
 * Pure protocol engine, like broker_proto.h and broker_store.h: no
 * sockets and no clock.  The caller feeds it the bytes each side sent
 * and the time; the engine hands back bytes to write through callbacks.
 *
 * What it does with each request of a local peer:
 *   AUTH     checked here against the same token; answered once the
 *            parent has answered the relay's own AUTH.
 *   PUT, ADD, DEL   forwarded as they are (writes are never answered
 *            locally); each also ends the sharing of an in-flight GET of
 *            the same key (a peer reads its own writes).
 *   GET      forwarded; a GET of a key that already has a GET in flight
 *            upstream, with a deadline no earlier, shares its answer
 *            instead of sending another (single flight).  No value is
 *            kept after it is answered: PUT may overwrite and DEL delete
 *            a key, so a cache could serve stale values.  GET without
 *            waiting (timeout 0) is never shared.
 *   BARRIER  aggregated: the arrivals of a name are held until they make
 *            up the barrier's count, or the ranks this relay serves
 *            (expect), or linger_ms passed; then they go up as ONE
 *            arrival of that weight (protocol version 2).  A TIMEOUT from
 *            upstream (sent with the earliest deadline of the group)
 *            answers the members whose deadline passed and sends the rest
 *            up again.  Arrivals without waiting go up alone.
 * A peer that goes away loses its held barrier arrivals and answers; an
 * arrival already sent up in a group stays counted there (the protocol
 * cannot withdraw part of a weight).  When the parent is lost, every
 * local peer is closed, so every rank's wait fails with an error.
 *
 * Limits, so that one local peer cannot spend what the others (and the
 * one upstream connection) need: a peer may have max_waiting GETs and
 * BARRIERs that wait (timeout_ms > 0) unanswered at once; one more is
 * answered LIMIT by the relay itself and never sent up.  A connection
 * must present the token within auth_timeout_ms (else it is told TIMEOUT
 * and closed); at most max_unauth wait to do so (a new one pushes the
 * oldest out, told LIMIT), and at most max_peers are open (when full, a
 * new one takes the place of the oldest that has not authenticated, or
 * is refused when every one has) -- the shape of the head's broker's. */
#ifndef DLRUN_BROKER_RELAY_H
#define DLRUN_BROKER_RELAY_H

#include <stddef.h>
#include <stdint.h>

#include "rendezvous/broker_proto.h"
#include "util/err.h"
#include "rendezvous/token.h"

struct br_relay;
struct br_peer;

/* Where the engine's output goes; user is what br_relay_accept was given.
 * Bytes are borrowed for the call.  None may call back into the engine. */
struct br_relay_ops {
    void (*down)(void *ctx, void *user, const uint8_t *p, size_t n);
    void (*up)(void *ctx, const uint8_t *p, size_t n);
    /* the engine has let go of this peer (parent lost, no AUTH in time,
     * pushed out by a newer one): close it; the struct br_peer is freed
     * already */
    void (*close)(void *ctx, void *user);
};

struct br_relay_conf {
    const uint8_t *token;   /* TOKEN_BYTES, borrowed for r's life: what
                               local peers must present and the relay
                               presents upstream */
    uint32_t expect;        /* ranks (arrivals) this relay stands for, its
                               children's included; 0: unknown */
    unsigned linger_ms;     /* longest a barrier arrival is held; 0: 2 */
    size_t max_waiting;     /* waiting GETs and BARRIERs per peer; 0: 256
                               (a quarter of what the head's broker parks
                               for the relay's one connection) */
    unsigned auth_timeout_ms; /* from accept to a valid AUTH; 0: 5000 */
    size_t max_unauth;      /* peers not yet authenticated; 0: 256 */
    size_t max_peers;       /* peers at once; 0: 4096 */
};

struct br_relay_stats {
    size_t peers;           /* local peers now */
    size_t requests;        /* valid requests from local peers */
    size_t sent_up;         /* requests sent to the parent */
    size_t gets_shared;     /* GETs answered from another's flight */
    size_t barrier_groups;  /* weighted arrivals sent up */
    size_t refused_waiting; /* answered LIMIT: the peer's max_waiting */
    size_t auth_expired;    /* closed: no AUTH within auth_timeout_ms */
    size_t evicted;         /* closed: pushed out by a newer connection
                               (max_unauth, max_peers) */
    size_t refused;         /* not accepted: max_peers, all authenticated */
    int parent_ready;       /* the parent answered the relay's AUTH */
    int parent_lost;
};

/* A relay; it writes its AUTH (version 2) to ops->up at once.  conf and
 * ops are copied.  Caller must br_relay_destroy().  NULL with err. */
struct br_relay *br_relay_create(const struct br_relay_conf *conf,
                                 const struct br_relay_ops *ops, void *ctx,
                                 struct err *err);

/* Free r and every peer without calling ops.  NULL is a no-op. */
void br_relay_destroy(struct br_relay *r);

/* A new local connection at now_ms; user is the caller's handle for it.
 * It may push out an older peer that has not authenticated (ops->close).
 * NULL with err when the parent is lost, every one of max_peers has
 * authenticated, or memory is short: close the connection. */
struct br_peer *br_relay_accept(struct br_relay *r, void *user,
                                uint64_t now_ms, struct err *err);

/* Bytes peer p sent, at now_ms.  0, or -1 with err when p broke the
 * protocol or presented a wrong token (it was told): call
 * br_relay_peer_gone and close it. */
int br_relay_from_peer(struct br_relay *r, struct br_peer *p,
                       const uint8_t *data, size_t len, uint64_t now_ms,
                       struct err *err);

/* p's connection is gone: forget it (p is freed). */
void br_relay_peer_gone(struct br_relay *r, struct br_peer *p);

/* Bytes the parent sent, at now_ms.  0, or -1 with err when the parent
 * broke the protocol or refused the relay: call br_relay_parent_lost. */
int br_relay_from_parent(struct br_relay *r, const uint8_t *data, size_t len,
                         uint64_t now_ms, struct err *err);

/* The parent is gone: every local peer is closed (ops->close) and freed,
 * and later connections are refused. */
void br_relay_parent_lost(struct br_relay *r);

/* Send up the barrier arrivals held for linger_ms; close the peers whose
 * AUTH deadline passed (ops->close). */
void br_relay_tick(struct br_relay *r, uint64_t now_ms);

/* When br_relay_tick next has work, or UINT64_MAX. */
uint64_t br_relay_next_deadline(const struct br_relay *r);

void br_relay_get_stats(const struct br_relay *r, struct br_relay_stats *out);

#endif
