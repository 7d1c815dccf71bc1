/* broker_relay_srv.h - an agent's relay (broker_relay.h) on sockets: it
 * listens on a Unix socket in a 0700 folder for this node's ranks,
 * holds one connection to the parent broker, and runs in its own thread
 * until stopped.  The agent hands its ranks DLRUN_BROKER=unix:PATH. */
#ifndef DLRUN_BROKER_RELAY_SRV_H
#define DLRUN_BROKER_RELAY_SRV_H

#include <stdint.h>

#include "util/err.h"
#include "rendezvous/token.h"

struct relay_srv;

/* Connect to parent (DLRUN_BROKER's forms; borrowed), authenticate with
 * token (copied), listen, and start the thread.  expect: the ranks this
 * relay serves (its barrier arrivals go up as one when all are in).
 * dir: the job's private folder (0700, borrowed) for relay.sock, which
 * its owner removes; NULL or too long a path: a folder of the relay's own.
 * Caller must relay_srv_stop().  NULL with err. */
struct relay_srv *relay_srv_start(const char *parent,
                                  const uint8_t token[TOKEN_BYTES],
                                  uint32_t expect, const char *dir,
                                  struct err *err);

/* "unix:PATH", for the ranks' DLRUN_BROKER; owned by s. */
const char *relay_srv_addr(const struct relay_srv *s);

/* Stop the thread, close every connection, remove the socket and its
 * folder, free s.  NULL is a no-op. */
void relay_srv_stop(struct relay_srv *s);

#endif
