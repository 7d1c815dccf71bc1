/* t_net.c - addresses and ports for the rendezvous, on this machine's
 * own interfaces and resolver: this host by any of its names, lo's
 * address, a name that resolves only to loopback replaced by an address
 * other nodes can reach, unknown names and interfaces refused with the
 * name in the message, free ports that are free, different and outside
 * the kernel's ephemeral range (the candidates for other ranges), and the
 * derived port: in its range, and the same number on every host and
 * build (the values below are FNV-1a's as dlrun(1) documents it,
 * computed apart from this code). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/net.h"
#include "fixedport.h"
#include "tap.h"

static void this_host(void)
{
    char me[256] = "", longer[300];

    gethostname(me, sizeof me - 1);
    me[strcspn(me, ".")] = '\0';
    snprintf(longer, sizeof longer, "%s.some.domain", me);
    ok(net_is_this_host(me), "this host's short name");
    ok(net_is_this_host(longer), "with a domain: the short names compared");
    ok(net_is_this_host("localhost") && net_is_this_host("127.0.0.1"),
       "localhost and 127.0.0.1");
    snprintf(longer, sizeof longer, "%sx", me);
    ok(!net_is_this_host(longer), "a longer name is another host");
    ok(!net_is_this_host(NULL) && !net_is_this_host("dlrun-no-such-node"),
       "NULL and another name are not");
}

static void addrs(void)
{
    char a[64] = "", me[256] = "";
    struct err err = { "" };

    ok(net_iface_addr("lo", a, sizeof a, &err) == 0 && !strcmp(a, "127.0.0.1"),
       "lo's address");
    ok(net_iface_addr("dlrun0", a, sizeof a, &err) < 0 &&
       strstr(err.msg, "--iface dlrun0"), "no such interface: named");
    ok(net_host_addr("127.0.0.2", a, sizeof a, &err) < 0 &&
       strstr(err.msg, "loopback"),
       "a loopback address of another name: refused (other nodes cannot reach it)");
    ok(net_host_addr("dlrun-no-such-host.invalid", a, sizeof a, &err) < 0 &&
       strstr(err.msg, "dlrun-no-such-host.invalid") &&
       strstr(err.msg, "--master-addr"), "an unknown host: named, what to do");
    gethostname(me, sizeof me - 1);
    if (net_host_addr(me, a, sizeof a, &err) == 0)
        ok(strncmp(a, "127.", 4) != 0 && strcmp(a, "::1") != 0,
           "this host by name: an address other nodes can reach");
    else
        ok(strstr(err.msg, me) != NULL, "this host has no such address: named");
    ok(net_resolves("localhost", &err) == 0, "localhost resolves");
    ok(net_resolves("dlrun-no-such-host.invalid", &err) < 0 &&
       strstr(err.msg, "cannot resolve host dlrun-no-such-host.invalid"),
       "an unknown name does not, and is named");
    ok(net_route_addr("127.0.0.1", a, sizeof a, &err) == 0 &&
       !strcmp(a, "127.0.0.1"), "the route to 127.0.0.1 starts at 127.0.0.1");
    ok(net_route_addr("dlrun-no-such-host.invalid", a, sizeof a, &err) < 0,
       "no route to an unknown name");
}

/* 1 when port can be bound on this host now. */
/* Bindable as dlrun's listeners bind: with SO_REUSEADDR, so that a
 * neighbour's closed connection in TIME_WAIT on the port (common beside
 * other jobs) does not count as an owner, as it does not for
 * net_port_taken. */
static int bindable(int port)
{
    struct sockaddr_in sa = { .sin_family = AF_INET,
                              .sin_port = htons((uint16_t)port) };
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1, ok_ = 0;

    ok_ = fd >= 0 &&
          setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0 &&
          bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
    if (fd >= 0)
        close(fd);
    return ok_;
}

/* Outside this host's ephemeral range and the derived one. */
static int outside(int p)
{
    int lo, hi;

    net_ephemeral_range(&lo, &hi);
    return p >= 10000 && p <= 65535 && (p < lo || p > hi) &&
           (p < 20000 || p > 29999);
}

static int outside_all(const int *v, int n)
{
    int all = 1;

    for (int i = 0; i < n; i++)
        all &= outside(v[i]) && bindable(v[i]);
    return all;
}

static void ports(void)
{
    struct err err = { "" };
    int p = net_free_port(&err), v[16], distinct = 1;

    ok(p > 0 && p < 65536 && bindable(p), "a free port, bindable");
    ok(net_free_ports(v, 16, &err) == 0, "16 free ports");
    for (int i = 0; i < 16; i++)
        for (int k = 0; k < i; k++)
            distinct &= v[i] != v[k];
    ok(distinct, "all different");
    ok(outside(p) && outside_all(v, 16), "never an ephemeral port (another "
       "process's connect() may take one) nor 20000-29999");

    is_int(net_derived_port("12345", "0"), 21816, "derived port of 12345.0");
    is_int(net_derived_port("12345", "1"), 28277, "another step, another port");
    is_int(net_derived_port(NULL, NULL), net_derived_port("", ""),
           "NULL ids count as empty");
    ok(net_derived_port("12345", "") != net_derived_port("1234", "5"),
       "the ids' boundary counts");
    p = net_derived_port("999999999999", "batch");
    ok(p >= 20000 && p < 30000, "in 20000-29999");
}

/* The ports to choose from, for ephemeral ranges other than this host's:
 * in order, without the range and 20000-29999, wrapping around. */
static void candidates(void)
{
    int bad = 0, n = 10000 + 2768 + 4536;

    is_int(net_pick_candidate(32768, 60999, 0), 10000, "first: 10000");
    is_int(net_pick_candidate(32768, 60999, 9999), 19999, "then up to 19999");
    is_int(net_pick_candidate(32768, 60999, 10000), 30000, "past 20000-29999");
    is_int(net_pick_candidate(32768, 60999, 12767), 32767, "up to the range");
    is_int(net_pick_candidate(32768, 60999, 12768), 61000, "past it");
    is_int(net_pick_candidate(32768, 60999, (unsigned)n - 1), 65535, "to 65535");
    is_int(net_pick_candidate(32768, 60999, (unsigned)n), 10000, "wraps around");
    for (unsigned k = 0; k < 70000; k++) {
        int p = net_pick_candidate(15000, 40000, k);
        bad += p < 10000 || (p >= 15000 && p <= 40000) || p > 65535;
    }
    is_int(bad, 0, "a range over 20000-29999: never in it");
    is_int(net_pick_candidate(1024, 65535, 0), 10000,
           "a range over every port: 10000.. all the same");
    is_int(net_pick_candidate(1024, 65535, 10000), 30000,
           "  without 20000-29999");
    is_int(net_pick_candidate(9000, 9999, 0), 10000, "a range below: no gap");
}

/* A port something listens on is taken; once closed it is free, even with
 * the closed side's connection left in TIME_WAIT (the listener had
 * SO_REUSEADDR, as a TCPStore's has: Linux lets a bind pass a TIME_WAIT
 * only when both sockets set it). */
static void taken(void)
{
    struct sockaddr_in sa = { .sin_family = AF_INET };
    int port, lfd = socket(AF_INET, SOCK_STREAM, 0), c, s, one = 1;

    if (!ok(fixed_ports(&port, 1) == 0 && lfd >= 0, "a port to listen on"))
        return;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ok(bind(lfd, (struct sockaddr *)&sa, sizeof sa) == 0 && listen(lfd, 4) == 0,
       "listening on 127.0.0.1");
    is_int(net_port_taken(port), 1, "a listener's port: taken");
    c = socket(AF_INET, SOCK_STREAM, 0);
    s = c >= 0 && connect(c, (struct sockaddr *)&sa, sizeof sa) == 0 ?
        accept(lfd, NULL, NULL) : -1;
    close(lfd);
    if (s >= 0)
        close(s);   /* the server's side closes first: its TIME_WAIT */
    if (c >= 0)
        close(c);
    is_int(net_port_taken(port), 0, "closed, a connection in TIME_WAIT: free");
}

int main(void)
{
    this_host();
    addrs();
    ports();
    candidates();
    taken();
    return tap_done();
}
