/* broker.h - the rendezvous broker: a TCP or Unix-socket server (one
 * epoll loop, one thread) that serves the protocol of broker_proto.h from
 * the store of broker_store.h to thousands of ranks.
 *
 * It never blocks and never starts a thread: the head drives it from its
 * own loop (poll broker_fd() for readability, call broker_run_once(b, 0)
 * when it is readable or broker_timeout_ms() has passed), and
 * `dlrun broker` runs it alone.  Peers that break the protocol, present a
 * wrong token or stay silent past the AUTH deadline are dropped without
 * disturbing the others; those without the token go first when the table
 * is full; those that stop reading their answers are no longer read.
 * dlrun-broker(7) documents the protocol, limits and security model. */
#ifndef DLRUN_BROKER_H
#define DLRUN_BROKER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "util/err.h"
#include "rendezvous/token.h"

/* Zero fields take the default given. */
struct broker_limits {
    size_t max_value;       /* bytes in one value; 1 MiB (at most 256 MiB) */
    size_t max_conns;       /* connections at once; 65536, and never more
                               than RLIMIT_NOFILE leaves room for.  When
                               full, a new connection takes the place of
                               the oldest one that has not authenticated */
    size_t max_unauth_per_src; /* connections not yet authenticated from
                               one IP address; 1024: past it, that address's
                               oldest one goes.  Unix sockets: no cap */
    size_t max_out;         /* answers queued for one peer, bytes counted
                               as allocated, before the broker stops
                               reading its requests; 1 MiB */
    size_t max_mem;         /* all peers' queued answers and partly read
                               requests, as allocated; 256 MiB: past it,
                               every peer with answers still queued is not
                               read until they are written */
    size_t max_bytes;       /* the store: keys, values, parked requests;
                               1 GiB */
    size_t max_parked;      /* parked GET/BARRIER per connection; 1024 */
    int auth_timeout_ms;    /* from connect to a valid AUTH; 5000 */
};

/* Counters since broker_create, for tests and logs. */
struct broker_stats {
    size_t conns;           /* open now */
    size_t accepted;        /* since the start */
    size_t refused;         /* closed at once: max_conns reached and every
                               connection authenticated */
    size_t evicted;         /* not yet authenticated, closed to make room
                               (max_conns or max_unauth_per_src) */
    size_t auth_failed;     /* wrong token, not AUTH first, AUTH timeout */
    size_t proto_failed;    /* bad frame after AUTH */
    size_t slow_dropped;    /* out of memory for a peer's answers */
    size_t paused;          /* times a peer was no longer read (max_out or
                               max_mem) */
    size_t requests;        /* valid requests after AUTH */
    size_t mem;             /* bytes counted against max_mem now */
    size_t mem_peak;        /* the most ever */
};

struct broker;

/* Listen on bind_addr (a numeric IPv4/IPv6 address or a host name;
 * borrowed) and port (0: an ephemeral one the kernel picks); or, when
 * bind_addr is "unix:PATH", on a Unix socket at PATH (port unused), and
 * when it is "unix:" alone, at broker.sock in a new 0700 folder under
 * $TMPDIR or /tmp that broker_destroy removes.  token (16 bytes) is
 * copied; lim (NULL: all defaults) is copied.  Caller must
 * broker_destroy().  NULL with err ("cannot listen on ADDR:PORT: ..."). */
struct broker *broker_create(const char *bind_addr, int port,
                             const uint8_t token[TOKEN_BYTES],
                             const struct broker_limits *lim,
                             struct err *err);

/* Close every connection (parked requests are not answered) and the
 * listening socket; free b.  NULL is a no-op. */
void broker_destroy(struct broker *b);

/* An fd (the epoll set) that polls readable when broker_run_once has
 * work; owned by b. */
int broker_fd(const struct broker *b);

/* The port and numeric address actually bound; the string is owned by b.
 * "0.0.0.0" or "::" when bound to every address.  A Unix socket: port 0
 * and "unix:PATH", the form clients take in DLRUN_BROKER. */
int broker_port(const struct broker *b);
const char *broker_addr(const struct broker *b);

/* Raise this process's soft open-file limit to the hard one: every
 * connection is a file.  Children inherit it. */
void broker_raise_nofile(void);

/* Milliseconds until the next deadline (a GET, a barrier, an AUTH
 * timeout) is due, 0 if one is due now, -1 when none. */
int broker_timeout_ms(const struct broker *b);

/* Wait up to timeout_ms (-1: until something happens; shortened to the
 * next deadline) for events and handle them all: accept, read, answer,
 * expire, write, close.  Returns the number of events (0 on timeout or
 * when a signal interrupted the wait), or -1 with err when the epoll set
 * itself fails (the broker cannot go on). */
int broker_run_once(struct broker *b, int timeout_ms, struct err *err);

/* Copy the value of key (a C string) into buf (len bytes, NUL-terminated,
 * cut if longer); 0, or -1 when the key has no value.  For the thread
 * that runs b, e.g. to watch the agents' heartbeat counters. */
int broker_peek(const struct broker *b, const char *key, char *buf,
                size_t len);

/* Copy the counters into out. */
void broker_get_stats(const struct broker *b, struct broker_stats *out);

/* Call log(ctx, line) for every dropped peer ("dropped 10.0.0.7:51234:
 * wrong token"); line is borrowed for the call.  NULL: quiet (default). */
void broker_set_log(struct broker *b, void (*log)(void *ctx, const char *line),
                    void *ctx);

/* Call fn(ctx, sa) each time a peer on TCP presents the token (sa: its
 * address, borrowed for the call), from the thread that runs b: the head
 * lets the nodes its agents connect from talk to the Gloo store
 * (job/horovod.c).  NULL: nothing (default). */
void broker_on_auth(struct broker *b,
                    void (*fn)(void *ctx, const struct sockaddr *sa),
                    void *ctx);

#endif
