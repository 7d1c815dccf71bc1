/* net.h - addresses and ports for the rendezvous. */
#ifndef DLRUN_NET_H
#define DLRUN_NET_H

#include <stddef.h>

#include "util/err.h"

/* 1 when name is this host (short names compared, so "n1" = "n1.cluster"). */
int net_is_this_host(const char *name);

/* The IPv4 (else IPv6) address of interface iface into out.  0 / -1. */
int net_iface_addr(const char *iface, char *out, size_t len, struct err *err);

/* An address of host into out.  For this host, a name that resolves to
 * loopback (Debian maps the hostname to 127.0.1.1) is replaced by the
 * first non-loopback interface that is up: other nodes must reach it.
 * 0 / -1 with err. */
int net_host_addr(const char *host, char *out, size_t len, struct err *err);

/* 0 when host (borrowed) resolves to some address; -1 with err naming it
 * and the resolver's reason: a host of -H checked before anything starts. */
int net_resolves(const char *host, struct err *err);

/* The address of this host that the kernel would use to reach host (the
 * source address of the route to it), into out.  0 / -1 with err. */
int net_route_addr(const char *host, char *out, size_t len, struct err *err);

/* The ports dlrun chooses from when it picks one: NET_PICK_LO..65535
 * without the derived range and without the kernel's ephemeral ports.
 * An ephemeral port free now may be any process's next connect()'s source
 * port before the program binds it (that is what binding port 0 and
 * closing hands out); a port outside that range stays free unless someone
 * binds it by number. */
#define NET_PICK_LO 10000
#define NET_DERIVED_LO 20000
#define NET_DERIVED_HI 29999

/* The kernel's ephemeral range (net.ipv4.ip_local_port_range) into *lo
 * and *hi; Linux's default 32768-60999 when it cannot be read. */
void net_ephemeral_range(int *lo, int *hi);

/* The k-th (modulo their number) port dlrun may choose from when the
 * ephemeral range is lo..hi, in increasing order; when that range covers
 * them all, the k-th of NET_PICK_LO..65535 without the derived range. */
int net_pick_candidate(int lo, int hi, unsigned k);

/* A TCP port that no socket on this host holds now (net_port_taken),
 * chosen from a random start among net_pick_candidate's: the program
 * binds it later, so dlrun cannot hold it meanwhile.  Returns the port or
 * -1 with err. */
int net_free_port(struct err *err);

/* n different such ports into ports.  0 / -1 with err. */
int net_free_ports(int *ports, int n, struct err *err);

/* The documented port derived from a job and step id when no port can be
 * agreed: 20000 + hash % 10000 (below Linux's ephemeral range). */
int net_derived_port(const char *jobid, const char *stepid);

/* 1 when a socket on this host holds TCP port (on any address) so that a
 * server binding it with SO_REUSEADDR, as PyTorch's TCPStore does, would
 * fail; 0 when it is free now; -1 when that cannot be told. */
int net_port_taken(int port);

#endif
