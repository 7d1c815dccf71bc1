/* net.c - see net.h. */
#include "util/net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static size_t short_len(const char *name)
{
    return strcspn(name, ".");
}

int net_is_this_host(const char *name)
{
    char me[256] = "";

    if (!name)
        return 0;
    if (strcmp(name, "localhost") == 0 || strcmp(name, "127.0.0.1") == 0)
        return 1;
    gethostname(me, sizeof me - 1);
    return short_len(me) == short_len(name) &&
           strncmp(me, name, short_len(me)) == 0;
}

static int sockaddr_str(const struct sockaddr *sa, char *out, size_t len)
{
    const void *src = sa->sa_family == AF_INET ?
        (const void *)&((const struct sockaddr_in *)sa)->sin_addr :
        (const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr;

    return inet_ntop(sa->sa_family, src, out, (socklen_t)len) ? 0 : -1;
}

/* First address of an up interface matching iface (or any non-loopback
 * one when iface is NULL), IPv4 preferred. */
static int scan_ifaces(const char *iface, char *out, size_t len)
{
    struct ifaddrs *ifs = NULL, *i;
    int found = -1;

    if (getifaddrs(&ifs) < 0)
        return -1;
    for (int family = AF_INET; found < 0; family = AF_INET6) {
        for (i = ifs; i && found < 0; i = i->ifa_next) {
            if (!i->ifa_addr || i->ifa_addr->sa_family != family ||
                !(i->ifa_flags & IFF_UP))
                continue;
            if (iface ? strcmp(i->ifa_name, iface) != 0
                      : (i->ifa_flags & IFF_LOOPBACK) != 0)
                continue;
            found = sockaddr_str(i->ifa_addr, out, len);
        }
        if (family == AF_INET6)
            break;
    }
    freeifaddrs(ifs);
    return found;
}

int net_iface_addr(const char *iface, char *out, size_t len, struct err *err)
{
    if (scan_ifaces(iface, out, len) < 0)
        return err_set(err, "--iface %s: no such interface with an address "
                       "that is up (see `ip -brief addr`)", iface);
    return 0;
}

static int is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24)
               == 127;
    return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr);
}

int net_resolves(const char *host, struct err *err)
{
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL;
    int rc = getaddrinfo(host, NULL, &hints, &res);

    if (rc == 0) {
        freeaddrinfo(res);
        return 0;
    }
    return err_set(err, "cannot resolve host %s: %s", host, gai_strerror(rc));
}

int net_host_addr(const char *host, char *out, size_t len, struct err *err)
{
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL, *r;
    int rc, loop = 0;

    for (int family = AF_INET;; family = AF_UNSPEC) {
        hints.ai_family = family;
        rc = getaddrinfo(host, NULL, &hints, &res);
        if (rc == 0 || family == AF_UNSPEC)
            break;
    }
    if (rc != 0)
        return err_set(err, "cannot resolve host %s: %s (add it to DNS or "
                       "/etc/hosts, give it a HostName in ~/.ssh/config, or "
                       "pass --master-addr)", host, gai_strerror(rc));
    for (r = res; r; r = r->ai_next)
        if (!(loop = is_loopback(r->ai_addr)))
            break;
    rc = r ? sockaddr_str(r->ai_addr, out, len) : -1;
    freeaddrinfo(res);
    if (rc == 0)
        return 0;
    if (loop && net_is_this_host(host) && scan_ifaces(NULL, out, len) == 0)
        return 0;
    return err_set(err, "host %s resolves only to a loopback address, which "
                   "other nodes cannot reach; pass --master-addr or --iface",
                   host);
}

int net_route_addr(const char *host, char *out, size_t len, struct err *err)
{
    struct addrinfo hints = { .ai_socktype = SOCK_DGRAM }, *res = NULL;
    struct sockaddr_storage me;
    socklen_t slen = sizeof me;
    int rc = getaddrinfo(host, "9", &hints, &res), fd = -1;

    if (rc != 0)
        return err_set(err, "cannot resolve host %s: %s", host, gai_strerror(rc));
    fd = socket(res->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    /* connect() on UDP sends nothing: it only picks the route */
    rc = fd < 0 || connect(fd, res->ai_addr, res->ai_addrlen) < 0 ||
         getsockname(fd, (struct sockaddr *)&me, &slen) < 0 ||
         sockaddr_str((struct sockaddr *)&me, out, len) < 0 ? -1 : 0;
    if (rc < 0)
        err_set(err, "no route to host %s: %s", host, strerror(errno));
    if (fd >= 0)
        close(fd);
    freeaddrinfo(res);
    return rc;
}

void net_ephemeral_range(int *lo, int *hi)
{
    FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "re");

    *lo = 32768, *hi = 60999;   /* Linux's default */
    if (f) {
        if (fscanf(f, "%d %d", lo, hi) != 2 || *lo < 1 || *hi < *lo)
            *lo = 32768, *hi = 60999;
        fclose(f);
    }
}

/* [from, to] without [lo, hi] into v (up to 2 ranges); their number. */
static int cut(int from, int to, int lo, int hi, int v[][2])
{
    int n = 0;

    if (lo > from)
        v[n][0] = from, v[n][1] = lo - 1 < to ? lo - 1 : to, n++;
    if (hi < to)
        v[n][0] = hi + 1 > from ? hi + 1 : from, v[n][1] = to, n++;
    return n;
}

/* NET_PICK_LO..65535 without the derived range and, unless ephemeral_too,
 * without lo..hi, as up to 3 ranges into v; how many ports they hold. */
static int ranges(int lo, int hi, int ephemeral_too, int v[][2], int *nv)
{
    int two[2][2], n = cut(NET_PICK_LO, 65535, NET_DERIVED_LO,
                           NET_DERIVED_HI, two), ports = 0;

    *nv = 0;
    for (int i = 0; i < n; i++) {
        if (ephemeral_too) {
            v[(*nv)][0] = two[i][0], v[(*nv)++][1] = two[i][1];
            continue;
        }
        *nv += cut(two[i][0], two[i][1], lo, hi, v + *nv);
    }
    for (int i = 0; i < *nv; i++)
        ports += v[i][1] - v[i][0] + 1;
    return ports;
}

int net_pick_candidate(int lo, int hi, unsigned k)
{
    int v[4][2], nv, n = ranges(lo, hi, 0, v, &nv);

    if (n == 0)     /* the ephemeral range covers them all */
        n = ranges(lo, hi, 1, v, &nv);
    k %= (unsigned)n;
    for (int i = 0; i < nv; i++) {
        unsigned len = (unsigned)(v[i][1] - v[i][0] + 1);
        if (k < len)
            return v[i][0] + (int)k;
        k -= len;
    }
    return 0;
}

/* A start that differs between processes choosing at once. */
static unsigned pick_start(void)
{
    unsigned r = 0;

    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
        r = (unsigned)time(NULL) * 7919u ^ (unsigned)getpid() * 104729u;
    return r;
}

static int chosen(const int *ports, int n, int p)
{
    for (int i = 0; i < n; i++)
        if (ports[i] == p)
            return 1;
    return 0;
}

int net_free_ports(int *ports, int n, struct err *err)
{
    int lo, hi, got = 0;
    unsigned start = pick_start(), tries = (unsigned)n + 4096u;

    net_ephemeral_range(&lo, &hi);
    for (unsigned i = 0; i < tries && got < n; i++) {
        int p = net_pick_candidate(lo, hi, start + i);
        if (!chosen(ports, got, p) && net_port_taken(p) == 0)
            ports[got++] = p;
    }
    if (got < n)
        return err_set(err, "cannot find %d free TCP port(s) outside the "
                       "kernel's ephemeral ports %d-%d "
                       "(net.ipv4.ip_local_port_range) and 20000-29999: "
                       "pass --master-port", n, lo, hi);
    return 0;
}

int net_free_port(struct err *err)
{
    int port;

    return net_free_ports(&port, 1, err) < 0 ? -1 : port;
}

int net_derived_port(const char *jobid, const char *stepid)
{
    uint32_t h = 2166136261u;   /* FNV-1a: stable across hosts and builds */
    const char *parts[2] = { jobid ? jobid : "", stepid ? stepid : "" };

    for (int k = 0; k < 2; k++) {
        for (const char *p = parts[k]; *p; p++)
            h = (h ^ (unsigned char)*p) * 16777619u;
        h = (h ^ '.') * 16777619u;
    }
    return NET_DERIVED_LO + (int)(h % (NET_DERIVED_HI - NET_DERIVED_LO + 1));
}

int net_port_taken(int port)
{
    struct sockaddr_in sa = { .sin_family = AF_INET,
                              .sin_port = htons((uint16_t)port) };
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1, rc = -1;

    /* SO_REUSEADDR: a connection of an earlier job in TIME_WAIT is no
     * owner; only a socket bound now is */
    if (fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0)
        rc = bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 ? 0 :
             errno == EADDRINUSE ? 1 : -1;
    if (fd >= 0)
        close(fd);
    return rc;
}
