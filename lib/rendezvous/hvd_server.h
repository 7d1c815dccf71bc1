/* hvd_server.h - Horovod's Gloo rendezvous server, as horovodrun serves
 * it (horovod/runner/http/http_server.py, RendezvousServer): HTTP on one
 * TCP port, PUT/GET/DELETE of /SCOPE/KEY into an hvd_store, one request
 * per connection (HTTP/1.0: the answer, then close), served from a thread
 * of its own so that neither the one-node supervisor nor the head's loop
 * has to know about it.
 *
 * Who may connect and for how long: hvd_guard.h.  A connection refused
 * (another user's on this host, an address of no node of the plan, a
 * source over its slots) is closed at once, unanswered; every connection
 * is closed deadline_ms after it was accepted, whatever it still sends.
 *
 * Answers: GET 200 with the value or 404 (Horovod's client polls for keys
 * not there yet); PUT 200, 411 without Content-Length, 507 when the store
 * is full; DELETE 200 (finalize: hvd_store.h); a path that is not
 * /SCOPE/KEY 400; other methods 501. */
#ifndef DLRUN_HVD_SERVER_H
#define DLRUN_HVD_SERVER_H

#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "util/err.h"
#include "rendezvous/http_req.h"
#include "rendezvous/hvd_store.h"
#include "place/plan.h"

struct hvd_server_opts {
    const char *ip;         /* listen on this address (numeric), borrowed */
    int port;               /* 0: a free one */
    size_t max_bytes;       /* the store's budget */
    size_t max_body;        /* the largest value one PUT may carry */
    int max_conns;          /* connections served at once (more wait) */
    int max_per_source;     /* of them from one source (hvd_guard.h's
                               hvd_source): more are refused; 0: max_conns */
    int idle_ms;            /* a connection silent this long is closed */
    int deadline_ms;        /* a connection's whole life; 0: idle_ms */
    /* the user whose processes on this host are served: this process's
     * (geteuid) unless other_uid is set (tests see a refusal with it) */
    int other_uid;
    uid_t uid;
    /* called from the server's thread with one line about a request the
     * store refused (full) or a connection refused (from where, why), at
     * most once per kind per attempt; may be NULL */
    void (*log)(void *ctx, const char *line);
    void *log_ctx;
};

struct hvd_server;

/* Listen and start serving.  NULL with err (cannot listen, no thread). */
struct hvd_server *hvd_server_start(const struct hvd_server_opts *o,
                                    struct err *err);

/* The port it listens on. */
int hvd_server_port(const struct hvd_server *s);

/* Declare the scopes horovodrun declares for plan p ("global": every
 * rank, "local_HOST": the ranks on HOST, "cross_L": the nodes that have
 * local rank L) and empty the store: call before each attempt's ranks
 * start.  Unless it listens on loopback, the addresses of p's nodes
 * (plan_addr_name, resolved now) and those hvd_server_allow adds are the
 * only others that may connect.
 * 0 / -1 with err (out of memory). */
int hvd_server_begin(struct hvd_server *s, const struct plan *p,
                     struct err *err);

/* Let address sa (borrowed) connect too until the next hvd_server_begin:
 * where one of the job's agents connected from (its node may reach this
 * host from an address its name does not resolve to).  Thread-safe;
 * nothing when out of memory. */
void hvd_server_allow(struct hvd_server *s, const struct sockaddr *sa);

/* Stop the thread, close every socket, free s (NULL is fine). */
void hvd_server_stop(struct hvd_server *s);

/* The name of this host's interface that has address ip (numeric) into
 * out: horovodrun gives the ranks the interface of its server's address
 * (HOROVOD_GLOO_IFACE; "lo" for 127.0.0.1).  0 / -1 with err. */
int hvd_iface_of(const char *ip, char *out, size_t len, struct err *err);

/* The answer to one request, computed on store st (no socket): the
 * status, and the value for a GET that found one (borrowed from st until
 * its next change).  The server's core, for tests and fuzzing; err gets
 * the store's refusal for a 507. */
int hvd_answer(struct hvd_store *st, const struct http_request *r,
               const void **body, size_t *len, struct err *err);

#endif
