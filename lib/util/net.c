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
#include <sys/socket.h>
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

int net_free_ports(int *ports, int n, struct err *err)
{
    int *fds = calloc((size_t)n, sizeof *fds), rc = 0, i;

    if (!fds)
        return err_set(err, "out of memory");
    /* all bound at once, so that the kernel hands out n different ports */
    for (i = 0; i < n && rc == 0; i++) {
        struct sockaddr_in sa = { .sin_family = AF_INET };
        socklen_t len = sizeof sa;
        fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fds[i] < 0 || bind(fds[i], (struct sockaddr *)&sa, sizeof sa) < 0 ||
            getsockname(fds[i], (struct sockaddr *)&sa, &len) < 0)
            rc = err_set(err, "cannot find a free TCP port: %s",
                         strerror(errno));
        else
            ports[i] = ntohs(sa.sin_port);
    }
    while (i-- > 0)
        if (fds[i] >= 0)
            close(fds[i]);
    free(fds);
    return rc;
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
    return 20000 + (int)(h % 10000);
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
