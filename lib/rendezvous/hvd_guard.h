/* hvd_guard.h - who may talk to the Gloo rendezvous server
 * (hvd_server.c), and for how long.
 *
 * Horovod's HTTPStore sends no credential, so the server decides from
 * the connection itself: a peer on this host (loopback or one of this
 * host's addresses) is served when the socket at its end belongs to the
 * job's user, a peer elsewhere when its address is one of the job's
 * nodes'.  The decisions are pure (hvd_verdict, hvd_expired); the one
 * fact they need from the kernel, the owner of the peer's socket, is
 * hvd_peer_owner. */
#ifndef DLRUN_HVD_GUARD_H
#define DLRUN_HVD_GUARD_H

#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "util/err.h"

/* An address: IPv6, IPv4 as ::ffff:a.b.c.d, so that one compare serves both. */
struct hvd_addr {
    unsigned char b[16];
};

/* sa's address into out (and its port, host order, into *port when not
 * NULL).  0 / -1 for a family that is neither IPv4 nor IPv6. */
int hvd_addr_of(const struct sockaddr *sa, struct hvd_addr *out, int *port);

/* A numeric address (borrowed) into out.  0 / -1 when it is not one. */
int hvd_addr_parse(const char *text, struct hvd_addr *out);

/* a as text into buf (len bytes): "127.0.0.1", "::1"; returns buf. */
const char *hvd_addr_text(const struct hvd_addr *a, char *buf, size_t len);

/* 1 when a is a loopback address (127.0.0.0/8, ::1, ::ffff:127.x.y.z). */
int hvd_addr_loopback(const struct hvd_addr *a);

/* Who may talk: everything owned (free with hvd_allow_free). */
struct hvd_allow {
    uid_t uid;                  /* the job's user */
    struct hvd_addr *nodes;     /* the addresses of the job's nodes */
    int nnodes;
    struct hvd_addr *mine;      /* this host's own addresses */
    int nmine;
};

/* Fill a for user uid: every address each of the n names (borrowed: the
 * plan's node names) resolves to, and this host's interfaces' addresses.
 * A name that does not resolve adds nothing (its ranks are refused and
 * the server says so).  0 / -1 with err (out of memory, no interface
 * list); a is empty then. */
int hvd_allow_build(struct hvd_allow *a, uid_t uid, const char *const *names,
                    int n, struct err *err);

/* Add x to a's nodes (a node the job's agents connect from).  0 / -1
 * when out of memory (a is unchanged). */
int hvd_allow_add(struct hvd_allow *a, const struct hvd_addr *x);

/* Free what a holds and empty it (the uid stays). */
void hvd_allow_free(struct hvd_allow *a);

/* What hvd_peer_owner found: a uid (>= 0), or one of these. */
enum {
    HVD_OWNER_NONE = -1,        /* no socket of this host has the
                                   connection's far end: the peer is
                                   on another host */
    HVD_OWNER_UNKNOWN = -2      /* the kernel's table could not be asked */
};

enum hvd_verdict {
    HVD_ALLOW,
    HVD_DENY_USER,              /* a socket of this host, another user's */
    HVD_DENY_UNKNOWN,           /* on this host, its owner not known */
    HVD_DENY_ADDR               /* another host, not one of the job's nodes */
};

/* May the peer at address peer, whose socket hvd_peer_owner said owner,
 * talk?  Pure. */
enum hvd_verdict hvd_verdict(const struct hvd_allow *a,
                             const struct hvd_addr *peer, long owner);

/* The reason of a refusal, for the line the server says. */
const char *hvd_verdict_why(enum hvd_verdict v);

/* The owner (uid) of the socket at the other end of connected TCP socket
 * fd, from the kernel's socket table; HVD_OWNER_NONE or
 * HVD_OWNER_UNKNOWN as above.  sock_diag first; /proc/net/tcp{,6} where
 * it does not work (no tcp_diag in the kernel). */
long hvd_peer_owner(int fd);

/* The same from /proc/net/tcp and tcp6: the owner of the socket whose
 * local end is peer:pport and far end me:mport. */
long hvd_proc_owner(const struct hvd_addr *peer, int pport,
                    const struct hvd_addr *me, int mport);

/* One line of /proc/net/tcp or tcp6 (borrowed): its uid when it is that
 * socket, in a state a client's connected socket has; else
 * HVD_OWNER_NONE.  Pure. */
long hvd_tcp_line_owner(const char *line, const struct hvd_addr *peer,
                        int pport, const struct hvd_addr *me, int mport);

/* What a connection's slot counts against: its user on this host (all of
 * a user's local connections are one source, whatever address they come
 * from), else its address. */
struct hvd_source {
    long owner;                 /* hvd_peer_owner's answer */
    struct hvd_addr addr;
};

/* 1 when a and b are the same source.  Pure. */
int hvd_same_source(const struct hvd_source *a, const struct hvd_source *b);

/* 1 when a connection accepted at start_ms, last heard from at last_ms,
 * must be closed at now: its whole life (request, answer, the client's
 * close) is over deadline_ms, however its bytes trickle in, or it was
 * silent for idle_ms.  Pure. */
int hvd_expired(long start_ms, long last_ms, long now, int deadline_ms,
                int idle_ms);

#endif
