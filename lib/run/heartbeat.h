/* heartbeat.h - the head's side of the agents' heartbeats: every agent
 * adds to the counter dlrun.hb.NODE in the head's broker about once a
 * second (lib/run/headlink.h); a node whose counter stops moving for the
 * timeout after it first moved is lost (killed, or its network cut).
 *
 * Checked from the thread that runs the broker (broker_peek); the lost
 * node may be read from any thread. */
#ifndef DLRUN_HEARTBEAT_H
#define DLRUN_HEARTBEAT_H

#include "util/err.h"

struct broker;
struct heartbeat;

/* For nnodes agents and a timeout of timeout_ms.  NULL with err. */
struct heartbeat *heartbeat_create(int nnodes, int timeout_ms,
                                   struct err *err);

/* Look at every node's counter in b (borrowed) at now_ms (a monotonic
 * clock): a counter that moved was seen now, one that has not moved for
 * longer than the timeout since is lost.  Returns the node found lost by
 * this call (only the first one ever is), or -1. */
int heartbeat_check(struct heartbeat *h, const struct broker *b, long now_ms);

/* The node found lost, -1 while none (any thread). */
int heartbeat_lost(const struct heartbeat *h);

/* When node's counter last moved (heartbeat_check's now_ms), 0 while it
 * has not; for the broker's thread (the lost node's moment: the fault's
 * last sign of life). */
long heartbeat_seen_ms(const struct heartbeat *h, int node);

/* The timeout given to heartbeat_create. */
int heartbeat_timeout_ms(const struct heartbeat *h);

/* Each node's last counter, 0 while its agent has not beaten (nnodes
 * entries, owned by h; for the broker's thread). */
const long long *heartbeat_counters(const struct heartbeat *h);

/* NULL is a no-op. */
void heartbeat_free(struct heartbeat *h);

#endif
