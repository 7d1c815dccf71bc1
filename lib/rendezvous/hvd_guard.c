/* hvd_guard.c - see hvd_guard.h. */
#include "rendezvous/hvd_guard.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static const unsigned char v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                            0xff, 0xff };

int hvd_addr_of(const struct sockaddr *sa, struct hvd_addr *out, int *port)
{
    int p;

    memset(out, 0, sizeof *out);
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        memcpy(out->b, v4mapped, sizeof v4mapped);
        memcpy(out->b + 12, &in->sin_addr, 4);
        p = ntohs(in->sin_port);
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        memcpy(out->b, &in6->sin6_addr, 16);
        p = ntohs(in6->sin6_port);
    } else {
        return -1;
    }
    if (port)
        *port = p;
    return 0;
}

int hvd_addr_parse(const char *text, struct hvd_addr *out)
{
    struct in_addr v4;

    memset(out, 0, sizeof *out);
    if (inet_pton(AF_INET, text, &v4) == 1) {
        memcpy(out->b, v4mapped, sizeof v4mapped);
        memcpy(out->b + 12, &v4, 4);
        return 0;
    }
    return inet_pton(AF_INET6, text, out->b) == 1 ? 0 : -1;
}

static int is_v4(const struct hvd_addr *a)
{
    return memcmp(a->b, v4mapped, sizeof v4mapped) == 0;
}

const char *hvd_addr_text(const struct hvd_addr *a, char *buf, size_t len)
{
    if (!inet_ntop(is_v4(a) ? AF_INET : AF_INET6, is_v4(a) ? a->b + 12 : a->b,
                   buf, (socklen_t)len) && len)
        buf[0] = '\0';
    return buf;
}

int hvd_addr_loopback(const struct hvd_addr *a)
{
    static const unsigned char one[16] = { [15] = 1 };

    return is_v4(a) ? a->b[12] == 127 : memcmp(a->b, one, 16) == 0;
}

static int addr_in(const struct hvd_addr *a, const struct hvd_addr *v, int n)
{
    for (int i = 0; i < n; i++)
        if (memcmp(a->b, v[i].b, 16) == 0)
            return 1;
    return 0;
}

/* Add a to *v (*n held, *cap allocated) unless it is there.  0 / -1. */
static int addr_add(struct hvd_addr **v, int *n, int *cap,
                    const struct hvd_addr *a)
{
    if (addr_in(a, *v, *n))
        return 0;
    if (*n == *cap) {
        int c = *cap ? *cap * 2 : 16;
        struct hvd_addr *nv = realloc(*v, (size_t)c * sizeof *nv);
        if (!nv)
            return -1;
        *v = nv;
        *cap = c;
    }
    (*v)[(*n)++] = *a;
    return 0;
}

/* Every address name resolves to into a->nodes.  0 / -1 out of memory. */
static int add_name(struct hvd_allow *a, int *cap, const char *name)
{
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL;
    struct hvd_addr x;
    int rc = 0;

    if (!name || getaddrinfo(name, NULL, &hints, &res) != 0)
        return 0;
    for (struct addrinfo *r = res; r && rc == 0; r = r->ai_next)
        if (hvd_addr_of(r->ai_addr, &x, NULL) == 0)
            rc = addr_add(&a->nodes, &a->nnodes, cap, &x);
    freeaddrinfo(res);
    return rc;
}

/* This host's interfaces' addresses into a->mine.  0 / -1 with err. */
static int add_mine(struct hvd_allow *a, struct err *err)
{
    struct ifaddrs *all = NULL;
    struct hvd_addr x;
    int cap = 0, rc = 0;

    if (getifaddrs(&all) < 0)
        return err_set(err, "cannot list the network interfaces: %s",
                       strerror(errno));
    for (struct ifaddrs *i = all; i && rc == 0; i = i->ifa_next)
        if (i->ifa_addr && hvd_addr_of(i->ifa_addr, &x, NULL) == 0)
            rc = addr_add(&a->mine, &a->nmine, &cap, &x);
    freeifaddrs(all);
    return rc == 0 ? 0 : err_set(err, "out of memory");
}

int hvd_allow_build(struct hvd_allow *a, uid_t uid, const char *const *names,
                    int n, struct err *err)
{
    int cap = 0;

    memset(a, 0, sizeof *a);
    a->uid = uid;
    for (int i = 0; i < n; i++)
        if (add_name(a, &cap, names[i]) < 0) {
            err_set(err, "out of memory");
            goto fail;
        }
    if (add_mine(a, err) < 0)
        goto fail;
    return 0;
fail:
    hvd_allow_free(a);
    return -1;
}

int hvd_allow_add(struct hvd_allow *a, const struct hvd_addr *x)
{
    struct hvd_addr *v;

    if (addr_in(x, a->nodes, a->nnodes))
        return 0;
    v = realloc(a->nodes, ((size_t)a->nnodes + 1) * sizeof *v);
    if (!v)
        return -1;
    v[a->nnodes++] = *x;
    a->nodes = v;
    return 0;
}

void hvd_allow_free(struct hvd_allow *a)
{
    free(a->nodes);
    free(a->mine);
    a->nodes = a->mine = NULL;
    a->nnodes = a->nmine = 0;
}

enum hvd_verdict hvd_verdict(const struct hvd_allow *a,
                             const struct hvd_addr *peer, long owner)
{
    if (owner >= 0)
        return (uid_t)owner == a->uid ? HVD_ALLOW : HVD_DENY_USER;
    /* on this host the peer's socket must have been found: without its
     * owner, a local peer is anyone */
    if (owner != HVD_OWNER_NONE || hvd_addr_loopback(peer) ||
        addr_in(peer, a->mine, a->nmine))
        return HVD_DENY_UNKNOWN;
    return addr_in(peer, a->nodes, a->nnodes) ? HVD_ALLOW : HVD_DENY_ADDR;
}

const char *hvd_verdict_why(enum hvd_verdict v)
{
    switch (v) {
    case HVD_ALLOW: return "allowed";
    case HVD_DENY_USER: return "another user's process on this host";
    case HVD_DENY_UNKNOWN: return "a process on this host whose user the "
                                  "kernel's socket table does not tell";
    case HVD_DENY_ADDR: return "not an address of the job's nodes";
    }
    return "refused";
}

int hvd_same_source(const struct hvd_source *a, const struct hvd_source *b)
{
    if (a->owner >= 0 || b->owner >= 0)
        return a->owner == b->owner;
    return memcmp(a->addr.b, b->addr.b, 16) == 0;
}

int hvd_expired(long start_ms, long last_ms, long now, int deadline_ms,
                int idle_ms)
{
    return now - start_ms > deadline_ms || now - last_ms > idle_ms;
}

/* The owner is asked of the kernel over NETLINK_SOCK_DIAG (inet_diag, as
 * ss(8) does) rather than read from /proc/net/tcp: the request names the
 * one socket by its four addresses and ports and the kernel looks it up
 * in its hash, so a flood of connections costs one look-up each, not a
 * read of every socket of the host each; nothing is parsed from text; and
 * /proc/net/tcp, read in pages while sockets come and go, may skip a
 * line.  It is read only where sock_diag does not work (a kernel without
 * tcp_diag, which then says "not found" of every socket).  A socket of
 * this host whose local end is the peer's and whose far end is ours is
 * the client's own; a listener the kernel falls back to (a port that
 * happens to equal the peer's) or a closed one is not. */
struct diag_req {
    struct nlmsghdr nh;
    struct inet_diag_req_v2 r;
};

static void put_addr(__be32 *dst, const struct hvd_addr *a)
{
    memcpy(dst, is_v4(a) ? a->b + 12 : a->b, is_v4(a) ? 4 : 16);
}

/* The request for the socket whose local end is peer:pport and far end
 * me:mport. */
static void diag_request(struct diag_req *q, const struct hvd_addr *peer,
                         int pport, const struct hvd_addr *me, int mport)
{
    memset(q, 0, sizeof *q);
    q->nh.nlmsg_len = sizeof *q;
    q->nh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    q->nh.nlmsg_flags = NLM_F_REQUEST;
    q->r.sdiag_family = is_v4(peer) ? AF_INET : AF_INET6;
    q->r.sdiag_protocol = IPPROTO_TCP;
    q->r.idiag_states = ~0u;
    q->r.id.idiag_sport = htons((uint16_t)pport);
    q->r.id.idiag_dport = htons((uint16_t)mport);
    put_addr(q->r.id.idiag_src, peer);
    put_addr(q->r.id.idiag_dst, me);
    q->r.id.idiag_cookie[0] = q->r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
}

/* a (network order, of family fam) as an hvd_addr. */
static struct hvd_addr diag_addr(int fam, const __be32 *a)
{
    struct hvd_addr x = { { 0 } };

    if (fam == AF_INET) {
        memcpy(x.b, v4mapped, sizeof v4mapped);
        memcpy(x.b + 12, a, 4);
    } else {
        memcpy(x.b, a, 16);
    }
    return x;
}

/* 1 when m is a client's connected socket with q's addresses (an IPv6
 * socket with IPv4-mapped addresses is the same as an IPv4 one). */
static int diag_matches(const struct inet_diag_msg *m, const struct diag_req *q)
{
    int st = m->idiag_state;
    struct hvd_addr ms = diag_addr(m->idiag_family, m->id.idiag_src),
                    md = diag_addr(m->idiag_family, m->id.idiag_dst),
                    qs = diag_addr(q->r.sdiag_family, q->r.id.idiag_src),
                    qd = diag_addr(q->r.sdiag_family, q->r.id.idiag_dst);

    return st != TCP_LISTEN && st != TCP_TIME_WAIT && st != TCP_CLOSE &&
           st != TCP_SYN_RECV && st != TCP_SYN_SENT &&
           m->id.idiag_sport == q->r.id.idiag_sport &&
           m->id.idiag_dport == q->r.id.idiag_dport &&
           memcmp(ms.b, qs.b, 16) == 0 && memcmp(md.b, qd.b, 16) == 0;
}

/* The answer to q from netlink socket nl: the owner or HVD_OWNER_*. */
static long diag_answer(int nl, const struct diag_req *q)
{
    long buf[2048];
    ssize_t n = recv(nl, buf, sizeof buf, 0);
    const struct nlmsghdr *h = (const struct nlmsghdr *)buf;

    if (n < 0 || !NLMSG_OK(h, (size_t)n))
        return HVD_OWNER_UNKNOWN;
    if (h->nlmsg_type == NLMSG_ERROR) {
        const struct nlmsgerr *e = NLMSG_DATA(h);
        return h->nlmsg_len >= NLMSG_LENGTH(sizeof *e) && e->error == -ENOENT
               ? HVD_OWNER_NONE : HVD_OWNER_UNKNOWN;
    }
    if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
        h->nlmsg_len < NLMSG_LENGTH(sizeof(struct inet_diag_msg)))
        return HVD_OWNER_UNKNOWN;
    return diag_matches(NLMSG_DATA(h), q)
           ? (long)((const struct inet_diag_msg *)NLMSG_DATA(h))->idiag_uid
           : HVD_OWNER_NONE;
}

/* The owner of the socket whose local end is peer:pport and far end
 * me:mport, from sock_diag. */
static long diag_owner(const struct hvd_addr *peer, int pport,
                       const struct hvd_addr *me, int mport)
{
    struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
    struct timeval tv = { .tv_sec = 2 };
    struct diag_req q;
    long owner = HVD_OWNER_UNKNOWN;
    int nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);

    if (nl < 0)
        return HVD_OWNER_UNKNOWN;
    diag_request(&q, peer, pport, me, mport);
    setsockopt(nl, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (sendto(nl, &q, sizeof q, 0, (struct sockaddr *)&kernel,
               sizeof kernel) == (ssize_t)sizeof q)
        owner = diag_answer(nl, &q);
    close(nl);
    return owner;
}

/* hex (8 or 32 digits: the kernel's 32-bit words as it printed them)
 * into a.  0 / -1. */
static int tcp_hex_addr(const char *hex, struct hvd_addr *a)
{
    size_t n = strlen(hex);
    uint32_t w[4];

    if (n != 8 && n != 32)
        return -1;
    for (size_t i = 0; i < n / 8; i++) {
        char word[9];
        memcpy(word, hex + 8 * i, 8);
        word[8] = '\0';
        w[i] = (uint32_t)strtoul(word, NULL, 16);
    }
    memset(a, 0, sizeof *a);
    if (n == 8) {
        memcpy(a->b, v4mapped, sizeof v4mapped);
        memcpy(a->b + 12, w, 4);
    } else {
        memcpy(a->b, w, 16);
    }
    return 0;
}

long hvd_tcp_line_owner(const char *line, const struct hvd_addr *peer,
                        int pport, const struct hvd_addr *me, int mport)
{
    char lhex[33], rhex[33];
    unsigned lport, rport, st;
    unsigned long uid;
    struct hvd_addr l, r;

    if (sscanf(line, " %*u: %32[0-9A-Fa-f]:%x %32[0-9A-Fa-f]:%x %x %*x:%*x "
               "%*x:%*x %*x %lu", lhex, &lport, rhex, &rport, &st, &uid) != 6 ||
        tcp_hex_addr(lhex, &l) < 0 || tcp_hex_addr(rhex, &r) < 0)
        return HVD_OWNER_NONE;
    if (st == TCP_LISTEN || st == TCP_TIME_WAIT || st == TCP_CLOSE ||
        st == TCP_SYN_RECV || st == TCP_SYN_SENT ||
        lport != (unsigned)pport || rport != (unsigned)mport ||
        memcmp(l.b, peer->b, 16) || memcmp(r.b, me->b, 16))
        return HVD_OWNER_NONE;
    return uid > (unsigned long)(uid_t)-1 ? HVD_OWNER_NONE : (long)uid;
}

long hvd_proc_owner(const struct hvd_addr *peer, int pport,
                    const struct hvd_addr *me, int mport)
{
    static const char *const tables[] = { "/proc/net/tcp", "/proc/net/tcp6" };
    char line[512];
    long owner = HVD_OWNER_UNKNOWN;

    for (int i = 0; i < 2 && owner < 0; i++) {
        FILE *f = fopen(tables[i], "re");
        if (!f)
            continue;
        owner = HVD_OWNER_NONE;
        while (owner < 0 && fgets(line, sizeof line, f))
            owner = hvd_tcp_line_owner(line, peer, pport, me, mport);
        fclose(f);
    }
    return owner;
}

long hvd_peer_owner(int fd)
{
    struct sockaddr_storage ps, ms;
    socklen_t pl = sizeof ps, ml = sizeof ms;
    struct hvd_addr peer, me;
    int pport, mport;
    long owner;

    if (getpeername(fd, (struct sockaddr *)&ps, &pl) < 0 ||
        getsockname(fd, (struct sockaddr *)&ms, &ml) < 0 ||
        hvd_addr_of((struct sockaddr *)&ps, &peer, &pport) < 0 ||
        hvd_addr_of((struct sockaddr *)&ms, &me, &mport) < 0 ||
        is_v4(&peer) != is_v4(&me))
        return HVD_OWNER_UNKNOWN;
    owner = diag_owner(&peer, pport, &me, mport);
    if (owner >= 0)
        return owner;
    /* not found: elsewhere, when sock_diag finds our own end (it works);
     * without tcp_diag the kernel says "not found" of every socket */
    if (owner == HVD_OWNER_NONE && diag_owner(&me, mport, &peer, pport) >= 0)
        return HVD_OWNER_NONE;
    return hvd_proc_owner(&peer, pport, &me, mport);
}
