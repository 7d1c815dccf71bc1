/* placement.h - where a planned rank's CPUs lie on its node: which
 * sockets and NUMA nodes, for `dlrun plan --profile`'s table. */
#ifndef DLRUN_PLACEMENT_H
#define DLRUN_PLACEMENT_H

#include <sched.h>
#include <stddef.h>

#include "place/topo.h"

enum placement_kind { PLACE_SOCKET, PLACE_NUMA };

/* The logical indices of t's sockets (or NUMA nodes) that hold a CPU of
 * mask, as a list "0" or "0,1", into buf (len bytes); "-" when mask is
 * empty (not bound: anywhere) or none holds one. */
void placement_where(const struct topo *t, const cpu_set_t *mask,
                     enum placement_kind kind, char *buf, size_t len);

#endif
