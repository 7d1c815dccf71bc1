/* t_hvd_guard.c - who may talk to the Gloo rendezvous server: the
 * addresses, the verdict for every kind of peer (table), sources, the
 * deadline that trickling bytes cannot extend, and the owner of a real
 * loopback connection's far end as the kernel's socket table has it. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rendezvous/hvd_guard.h"
#include "tap.h"

static struct hvd_addr A(const char *text)
{
    struct hvd_addr a;

    if (hvd_addr_parse(text, &a) < 0)
        memset(&a, 0xee, sizeof a);
    return a;
}

static void test_addr(void)
{
    struct hvd_addr a, b;
    struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons(4000) };
    char buf[64];
    int port = 0;

    ok(hvd_addr_parse("10.1.2.3", &a) == 0, "an IPv4 address parses");
    is_str(hvd_addr_text(&a, buf, sizeof buf), "10.1.2.3", "... and prints");
    ok(hvd_addr_parse("::ffff:10.1.2.3", &b) == 0 && memcmp(&a, &b, 16) == 0,
       "IPv4 and its IPv4-mapped IPv6 spelling are one address");
    ok(hvd_addr_parse("fe80::1", &a) == 0, "an IPv6 address parses");
    is_str(hvd_addr_text(&a, buf, sizeof buf), "fe80::1", "... and prints");
    ok(hvd_addr_parse("node1", &a) < 0, "a name is not an address");
    ok(hvd_addr_parse("", &a) < 0, "nor is nothing");
    inet_pton(AF_INET, "192.0.2.7", &in.sin_addr);
    ok(hvd_addr_of((struct sockaddr *)&in, &a, &port) == 0 && port == 4000,
       "a sockaddr_in: its port");
    is_str(hvd_addr_text(&a, buf, sizeof buf), "192.0.2.7", "... its address");
    in.sin_family = AF_UNIX;
    ok(hvd_addr_of((struct sockaddr *)&in, &a, NULL) < 0, "AF_UNIX: refused");
    a = A("127.0.0.1"), ok(hvd_addr_loopback(&a), "127.0.0.1: loopback");
    a = A("127.8.9.1"), ok(hvd_addr_loopback(&a), "127.8.9.1: loopback");
    a = A("::1"), ok(hvd_addr_loopback(&a), "::1: loopback");
    a = A("::ffff:127.0.0.1"), ok(hvd_addr_loopback(&a), "::ffff:127.0.0.1");
    a = A("10.0.0.1"), ok(!hvd_addr_loopback(&a), "10.0.0.1: not loopback");
    a = A("::2"), ok(!hvd_addr_loopback(&a), "::2: not loopback");
}

static void test_verdict(void)
{
    struct hvd_addr nodes[] = { A("10.77.0.2"), A("10.77.0.3") },
                    mine[] = { A("127.0.0.1"), A("10.77.0.1") };
    struct hvd_allow a = { .uid = 1000, .nodes = nodes, .nnodes = 2,
                           .mine = mine, .nmine = 2 };
    static const struct {
        const char *peer;
        long owner;
        enum hvd_verdict want;
        const char *what;
    } t[] = {
        { "127.0.0.1", 1000, HVD_ALLOW, "loopback, the job's user" },
        { "127.0.0.1", 1001, HVD_DENY_USER, "loopback, another user" },
        { "127.0.0.1", 0, HVD_DENY_USER, "loopback, root (not the job's)" },
        { "127.0.0.1", HVD_OWNER_NONE, HVD_DENY_UNKNOWN,
          "loopback with no socket found: refused" },
        { "127.0.0.1", HVD_OWNER_UNKNOWN, HVD_DENY_UNKNOWN,
          "loopback, the table could not be asked: refused" },
        { "::1", 1001, HVD_DENY_USER, "::1, another user" },
        { "10.77.0.1", 1000, HVD_ALLOW, "this host's address, the job's user" },
        { "10.77.0.1", 1001, HVD_DENY_USER,
          "this host's address, another user" },
        { "10.77.0.1", HVD_OWNER_NONE, HVD_DENY_UNKNOWN,
          "this host's address with no socket found" },
        { "10.77.0.2", HVD_OWNER_NONE, HVD_ALLOW, "a node of the plan" },
        { "::ffff:10.77.0.3", HVD_OWNER_NONE, HVD_ALLOW,
          "a node of the plan, IPv4-mapped" },
        { "10.77.0.9", HVD_OWNER_NONE, HVD_DENY_ADDR, "a host of no node" },
        { "10.77.0.2", HVD_OWNER_UNKNOWN, HVD_DENY_UNKNOWN,
          "a node's address when the table could not be asked: refused" },
        { "10.77.0.2", 1001, HVD_DENY_USER,
          "a node's address owned here by another user" },
    };

    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        struct hvd_addr p = A(t[i].peer);
        is_int(hvd_verdict(&a, &p, t[i].owner), t[i].want, t[i].what);
    }
    a.nnodes = 0;
    {
        struct hvd_addr p = A("10.77.0.2");
        is_int(hvd_verdict(&a, &p, HVD_OWNER_NONE), HVD_DENY_ADDR,
               "no nodes (a server on loopback): every other host refused");
    }
    ok(strstr(hvd_verdict_why(HVD_DENY_USER), "another user") != NULL,
       "the refusal of a user names it");
    ok(strstr(hvd_verdict_why(HVD_DENY_ADDR), "job's nodes") != NULL,
       "the refusal of an address names the nodes");
}

static void test_source(void)
{
    struct hvd_source u1 = { 1000, A("127.0.0.1") },
                      u1b = { 1000, A("10.77.0.1") },
                      u2 = { 1001, A("127.0.0.1") },
                      n2 = { HVD_OWNER_NONE, A("10.77.0.2") },
                      n2b = { HVD_OWNER_NONE, A("10.77.0.2") },
                      n3 = { HVD_OWNER_NONE, A("10.77.0.3") };

    ok(hvd_same_source(&u1, &u1b), "one user's connections are one source");
    ok(!hvd_same_source(&u1, &u2), "two users are two");
    ok(hvd_same_source(&n2, &n2b), "one node's address is one source");
    ok(!hvd_same_source(&n2, &n3), "two nodes are two");
    ok(!hvd_same_source(&u1, &n2), "a local user and a node are two");
}

static void test_expired(void)
{
    /* a client sending one byte every 9 s never goes idle (10 s), and is
     * still closed when its 20 s are up */
    long start = 1000, last = start;
    int closed_at = -1;

    for (long now = start; now <= start + 60000 && closed_at < 0; now += 1000) {
        if ((now - start) % 9000 == 0)
            last = now;
        if (hvd_expired(start, last, now, 20000, 10000))
            closed_at = (int)(now - start);
    }
    is_int(closed_at, 21000, "a trickling client: closed past its deadline");
    ok(!hvd_expired(0, 0, 9999, 20000, 10000), "silent 9.9 s: open");
    ok(hvd_expired(0, 0, 10001, 20000, 10000), "silent over 10 s: closed");
    ok(!hvd_expired(0, 19000, 20000, 20000, 10000), "20 s: open");
    ok(hvd_expired(0, 20000, 20001, 20000, 10000), "over 20 s: closed");
}

/* A connected pair on loopback: the client's and the accepted socket. */
static int pair(int *cl, int *sv)
{
    struct sockaddr_in sa = { .sin_family = AF_INET };
    socklen_t sl = sizeof sa;
    int l = socket(AF_INET, SOCK_STREAM, 0), rc = -1;

    *cl = *sv = -1;
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof sa) < 0 ||
        listen(l, 1) < 0 || getsockname(l, (struct sockaddr *)&sa, &sl) < 0)
        goto out;
    *cl = socket(AF_INET, SOCK_STREAM, 0);
    if (*cl < 0 || connect(*cl, (struct sockaddr *)&sa, sizeof sa) < 0)
        goto out;
    *sv = accept(l, NULL, NULL);
    rc = *sv < 0 ? -1 : 0;
out:
    if (l >= 0)
        close(l);
    return rc;
}

/* The address of fd's end (peer: the other) and its port. */
static int end_of(int fd, int peer, struct hvd_addr *a, int *port)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;

    if ((peer ? getpeername : getsockname)(fd, (struct sockaddr *)&ss, &sl) < 0)
        return -1;
    return hvd_addr_of((struct sockaddr *)&ss, a, port);
}

/* An address as /proc/net/tcp prints it: each 32-bit word as the kernel
 * holds it, %08X. */
static void tcp_hex(const char *ip, char *out)
{
    struct hvd_addr a = A(ip);
    uint32_t w[4];
    int v4 = strchr(ip, ':') == NULL;

    memcpy(w, a.b, 16);
    if (v4)
        sprintf(out, "%08X", w[3]);
    else
        sprintf(out, "%08X%08X%08X%08X", w[0], w[1], w[2], w[3]);
}

static void test_tcp_lines(void)
{
    static const struct {
        const char *local, *remote;
        int lport, rport, st;
        long want;
        const char *what;
    } t[] = {
        { "127.0.0.1", "127.0.0.1", 40000, 5000, 1, 1001,
          "/proc/net/tcp: the client's socket, established: its uid" },
        { "127.0.0.1", "127.0.0.1", 40000, 5000, 4, 1001,
          "... in FIN_WAIT1 (it shut its side): still its uid" },
        { "127.0.0.1", "0.0.0.0", 40000, 0, 10, HVD_OWNER_NONE,
          "a listener on the peer's port: not the client" },
        { "127.0.0.1", "127.0.0.1", 40000, 5000, 6, HVD_OWNER_NONE,
          "TIME_WAIT: not a client" },
        { "127.0.0.1", "127.0.0.1", 40001, 5000, 1, HVD_OWNER_NONE,
          "another port: not it" },
        { "127.0.0.2", "127.0.0.1", 40000, 5000, 1, HVD_OWNER_NONE,
          "another address: not it" },
        { "::ffff:127.0.0.1", "::ffff:127.0.0.1", 40000, 5000, 1, 1001,
          "/proc/net/tcp6, an IPv4-mapped socket: its uid" },
    };
    struct hvd_addr peer = A("127.0.0.1"), me = A("127.0.0.1");
    char line[400], l[40], r[40];

    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        tcp_hex(t[i].local, l);
        tcp_hex(t[i].remote, r);
        snprintf(line, sizeof line, "   7: %s:%04X %s:%04X %02X "
                 "00000000:00000000 00:00000000 00000000  1001        0 "
                 "94474531 1 0000 100 0 0 10 0\n", l, t[i].lport, r,
                 t[i].rport, t[i].st);
        is_int(hvd_tcp_line_owner(line, &peer, 40000, &me, 5000), t[i].want,
               t[i].what);
    }
    is_int(hvd_tcp_line_owner("  sl  local_address rem_address   st tx_queue",
                              &peer, 40000, &me, 5000), HVD_OWNER_NONE,
           "the heading: nothing");
    is_int(hvd_tcp_line_owner("   0: 0100007F:9C40", &peer, 40000, &me, 5000),
           HVD_OWNER_NONE, "a cut line: nothing");
}

static void test_owner(void)
{
    struct hvd_addr pa, ma;
    int cl, sv, pp = 0, mp = 0;

    if (!ok(pair(&cl, &sv) == 0, "a loopback connection"))
        return;
    is_int(hvd_peer_owner(sv), (long)geteuid(),
           "the owner of the client's socket: this process's user");
    is_int(hvd_peer_owner(cl), (long)geteuid(),
           "the same seen from the client (the listener's socket)");
    ok(end_of(sv, 1, &pa, &pp) == 0 && end_of(sv, 0, &ma, &mp) == 0,
       "its addresses");
    is_int(hvd_proc_owner(&pa, pp, &ma, mp), (long)geteuid(),
           "/proc/net/tcp (without sock_diag) finds the same owner");
    is_int(hvd_proc_owner(&pa, pp == 65535 ? 1 : pp + 1, &ma, mp),
           HVD_OWNER_NONE, "... and no socket for another port");
    close(cl);
    close(sv);
    is_int(hvd_peer_owner(-1), HVD_OWNER_UNKNOWN, "a bad fd: unknown");
}

static void test_build(void)
{
    const char *names[] = { "127.0.0.1", "no-such-host.invalid", NULL };
    struct hvd_allow a;
    struct hvd_addr lo = A("127.0.0.1");
    struct err err = { "" };

    ok(hvd_allow_build(&a, 42, names, 3, &err) == 0, "build an allow list");
    is_int(a.uid, 42, "... for the job's user");
    is_int(a.nnodes, 1, "... a name that does not resolve adds nothing");
    ok(a.nmine >= 1, "... this host's addresses");
    is_int(hvd_verdict(&a, &lo, HVD_OWNER_NONE), HVD_DENY_UNKNOWN,
           "loopback stays uid-checked even when a node resolves to it");
    {
        struct hvd_addr far = A("10.77.0.9");
        is_int(hvd_verdict(&a, &far, HVD_OWNER_NONE), HVD_DENY_ADDR,
               "an address no name resolves to: refused");
        ok(hvd_allow_add(&a, &far) == 0 && hvd_allow_add(&a, &far) == 0 &&
           a.nnodes == 2, "added once (an agent connected from it)");
        is_int(hvd_verdict(&a, &far, HVD_OWNER_NONE), HVD_ALLOW,
               "... then allowed");
    }
    hvd_allow_free(&a);
    ok(a.nodes == NULL && a.nnodes == 0, "freed and empty");
}

int main(void)
{
    test_addr();
    test_verdict();
    test_source();
    test_expired();
    test_tcp_lines();
    test_owner();
    test_build();
    return tap_done();
}
