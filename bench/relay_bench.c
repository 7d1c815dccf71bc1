/* relay_bench.c - N ranks over M nodes, each node's ranks served by an
 * agent's relay (lib/rendezvous/broker_relay.c, the code agents run), the relays
 * connected to the head's broker (lib/rendezvous/broker.c).  Every rank
 * authenticates, GETs one key (already set) and enters one barrier of
 * all N, one request after the other.  Prints how long until the last
 * rank was through each step, and what the head's broker saw.
 *
 * What is real and what is simulated:
 *  - the head's broker is the real one, alone in a child process (one
 *    core, as in the head), on TCP loopback;
 *  - each node's relay is the real engine with its own TCP connection to
 *    the broker (M connections), all M relays in this one process (on a
 *    cluster, one per agent, each on its own node);
 *  - the ranks are in-process clients: their frames go to their relay's
 *    engine and its answers come back through the protocol decoder, with
 *    no socket between them (on a node, a unix socket each).  A 2-core
 *    machine with a 20,000-file limit cannot hold 100,000 sockets; the
 *    local socket's cost is per node and paid in parallel across nodes.
 *
 *   make && cc -std=c11 -O2 -D_GNU_SOURCE -Ilib -o build/relay_bench \
 *       bench/relay_bench.c build/libdlrun-core.a -ldl -lpthread
 *   build/relay_bench [NODES [RANKS_PER_NODE]]     (defaults: 1000 100)
 *
 * Exit status: 0 when every rank got through, 1 otherwise, 2 bad usage. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rendezvous/broker.h"
#include "rendezvous/broker_proto.h"
#include "rendezvous/broker_relay.h"
#include "rendezvous/client.h"
#include "rendezvous/token.h"

#define KEY "bench/key"
#define BARRIER "bench/all"

struct node;

struct rank {
    struct node *nd;
    struct br_peer *p;
    struct bp_conn pc;
    int step;                   /* 0 AUTH, 1 GET, 2 BARRIER, 3 done */
    int failed;
};

struct node {
    int fd;
    struct br_relay *r;
};

static struct {
    int nnodes, per, nranks, ep;
    struct node *nodes;
    struct rank *ranks, **todo;
    size_t ntodo;
    int counts[4];              /* ranks past each step */
    int failed;
    double t0, t[4];
    uint8_t token[TOKEN_BYTES];
} B;

static volatile sig_atomic_t stop;

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t now_ms(void)
{
    return (uint64_t)(now_s() * 1000.0);
}

static void on_stop(int sig)
{
    (void)sig;
    stop = 1;
}

/* The head's broker, alone in this child, until SIGTERM; then its
 * counters go to stats_fd. */
static void run_server(const uint8_t *tok, int port_fd, int stats_fd)
{
    struct broker_limits lim = { .max_conns = (size_t)B.nnodes + 16 };
    struct err err = { "" };
    struct broker *b = broker_create("127.0.0.1", 0, tok, &lim, &err);
    int port = b ? broker_port(b) : -1;
    struct broker_stats st;
    struct sigaction sa = { .sa_handler = on_stop };

    sigaction(SIGTERM, &sa, NULL);
    if (write(port_fd, &port, sizeof port) != sizeof port || !b) {
        fprintf(stderr, "relay_bench: %s\n", err.msg);
        _exit(1);
    }
    while (!stop)
        if (broker_run_once(b, -1, &err) < 0)
            _exit(1);
    broker_get_stats(b, &st);
    if (write(stats_fd, &st, sizeof st) != sizeof st)
        _exit(1);
    _exit(0);
}

static void write_all(int fd, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            perror("relay_bench: write to the broker");
            exit(1);
        }
        p += w;
        n -= (size_t)w;
    }
}

static void to_parent(void *ctx, const uint8_t *p, size_t n)
{
    write_all(((struct node *)ctx)->fd, p, n);
}

static void to_rank(void *ctx, void *user, const uint8_t *p, size_t n)
{
    struct rank *rk = user;
    struct err err;

    (void)ctx;
    if (bp_feed(&rk->pc, p, n, &err) < 0 && !rk->failed) {
        rk->failed = 1;
        B.failed++;
    }
}

static void closed(void *ctx, void *user)
{
    struct rank *rk = user;

    (void)ctx;
    rk->p = NULL;
    if (!rk->failed) {
        rk->failed = 1;
        B.failed++;
    }
}

/* A rank's answer: on to the next step (sent from the main loop: the
 * relay must not be called back from its own callback). */
static int on_answer(void *ctx, const struct bp_msg *m)
{
    struct rank *rk = ctx;

    if (m->status != BP_OK) {
        rk->failed = 1;
        B.failed++;
        return 0;
    }
    B.counts[rk->step]++;
    B.t[rk->step] = now_s();
    rk->step++;
    if (rk->step < 3)
        B.todo[B.ntodo++] = rk;
    return 0;
}

static void send_step(struct rank *rk)
{
    static const uint8_t ops[] = { BP_AUTH, BP_GET, BP_BARRIER };
    struct bp_msg m = { .op = ops[rk->step], .id = (uint32_t)rk->step + 1 };
    uint8_t f[BP_HDR_LEN + 64];
    struct err err;

    if (!rk->p)
        return;
    if (m.op == BP_AUTH) {
        m.arg = BP_VERSION;
        m.val = B.token;
        m.vlen = TOKEN_BYTES;
    } else {
        m.key = (const uint8_t *)(m.op == BP_GET ? KEY : BARRIER);
        m.klen = strlen((const char *)m.key);
        m.timeout_ms = BP_WAIT_FOREVER;
        m.arg = m.op == BP_BARRIER ? B.nranks : 0;
    }
    bp_encode(f, &m);
    if (br_relay_from_peer(rk->nd->r, rk->p, f, bp_frame_size(&m), now_ms(),
                           &err) < 0) {
        fprintf(stderr, "relay_bench: %s\n", err.msg);
        exit(1);
    }
}

static void drain(void)
{
    while (B.ntodo)
        send_step(B.todo[--B.ntodo]);
}

static int connect_to(int port)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        perror("relay_bench: connect");
        exit(1);
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

/* Node i: its relay, its connection up, its ranks connected to it. */
static void start_node(int i, int port)
{
    static const struct br_relay_ops ops = { to_rank, to_parent, closed };
    struct node *nd = &B.nodes[i];
    struct br_relay_conf conf = { .token = B.token, .expect = (uint32_t)B.per };
    struct epoll_event ev = { .events = EPOLLIN, .data.ptr = nd };
    struct err err;
    int j;

    nd->fd = connect_to(port);
    nd->r = br_relay_create(&conf, &ops, nd, &err);
    if (!nd->r || epoll_ctl(B.ep, EPOLL_CTL_ADD, nd->fd, &ev) < 0) {
        fprintf(stderr, "relay_bench: %s\n", nd->r ? "epoll" : err.msg);
        exit(1);
    }
    for (j = 0; j < B.per; j++) {
        struct rank *rk = &B.ranks[i * B.per + j];
        rk->nd = nd;
        bp_conn_init(&rk->pc, BP_CLIENT, NULL, BP_MAX_VALUE_CEILING,
                     on_answer, rk);
        rk->p = br_relay_accept(nd->r, rk, &err);
        B.todo[B.ntodo++] = rk;
    }
    drain();
}

static void on_readable(struct node *nd)
{
    uint8_t buf[65536];
    struct err err;
    ssize_t n;

    while ((n = recv(nd->fd, buf, sizeof buf, MSG_DONTWAIT)) > 0)
        if (br_relay_from_parent(nd->r, buf, (size_t)n, now_ms(), &err) < 0) {
            fprintf(stderr, "relay_bench: %s\n", err.msg);
            exit(1);
        }
    if (n == 0) {
        fprintf(stderr, "relay_bench: the broker closed a relay\n");
        exit(1);
    }
    drain();
}

static void loop(double limit)
{
    struct epoll_event ev[256];
    int i, n;

    while (B.counts[2] + B.failed < B.nranks && now_s() - B.t0 < limit) {
        uint64_t t = now_ms();
        n = epoll_wait(B.ep, ev, 256, 1);
        for (i = 0; i < n; i++)
            on_readable(ev[i].data.ptr);
        for (i = 0; i < B.nnodes; i++)
            if (br_relay_next_deadline(B.nodes[i].r) <= t)
                br_relay_tick(B.nodes[i].r, t);
        drain();
    }
}

/* The key every rank fetches, set before the clock starts. */
static void put_key(int port)
{
    char addr[64], hex[2 * TOKEN_BYTES + 1];
    struct err err = { "" };
    struct client *c;
    int i;

    for (i = 0; i < TOKEN_BYTES; i++)
        snprintf(hex + 2 * i, 3, "%02x", B.token[i]);
    snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
    c = client_connect(addr, hex, 10000, &err);
    if (!c || client_put(c, KEY, "10.0.0.1:29500", 14, &err) != 0) {
        fprintf(stderr, "relay_bench: %s\n", err.msg);
        exit(1);
    }
    client_close(c);
}

static pid_t start_broker(int *port, int *stats_fd)
{
    int pp[2], sp[2];
    pid_t pid;

    if (pipe(pp) < 0 || pipe(sp) < 0)
        exit(1);
    pid = fork();
    if (pid == 0) {
        close(pp[0]);
        close(sp[0]);
        run_server(B.token, pp[1], sp[1]);
    }
    close(pp[1]);
    close(sp[1]);
    if (pid < 0 || read(pp[0], port, sizeof *port) != sizeof *port ||
        *port < 0)
        exit(1);
    close(pp[0]);
    *stats_fd = sp[0];
    return pid;
}

int main(int argc, char **argv)
{
    struct broker_stats st = { 0 };
    struct err err;
    int port, stats_fd, i, status;
    pid_t pid;

    B.nnodes = argc > 1 ? atoi(argv[1]) : 1000;
    B.per = argc > 2 ? atoi(argv[2]) : 100;
    if (B.nnodes < 1 || B.per < 1 || argc > 3) {
        fprintf(stderr, "usage: relay_bench [NODES [RANKS_PER_NODE]]\n");
        return 2;
    }
    B.nranks = B.nnodes * B.per;
    broker_raise_nofile();
    signal(SIGPIPE, SIG_IGN);
    if (token_new(B.token, &err) < 0)
        return 1;
    B.nodes = calloc((size_t)B.nnodes, sizeof *B.nodes);
    B.ranks = calloc((size_t)B.nranks, sizeof *B.ranks);
    B.todo = calloc((size_t)B.nranks, sizeof *B.todo);
    B.ep = epoll_create1(EPOLL_CLOEXEC);
    if (!B.nodes || !B.ranks || !B.todo || B.ep < 0)
        return 1;
    pid = start_broker(&port, &stats_fd);
    put_key(port);
    B.t0 = now_s();
    for (i = 0; i < B.nnodes; i++)
        start_node(i, port);
    loop(120.0);
    kill(pid, SIGTERM);
    if (read(stats_fd, &st, sizeof st) != sizeof st)
        fprintf(stderr, "relay_bench: no stats from the broker\n");
    waitpid(pid, &status, 0);
    printf("nodes %d ranks %d  auth %.3f s  get %.3f s  barrier %.3f s  "
           "failed %d  head: %zu connections, %zu requests\n",
           B.nnodes, B.nranks, B.t[0] - B.t0, B.t[1] - B.t0, B.t[2] - B.t0,
           B.failed + (B.nranks - B.counts[2] - B.failed), st.accepted,
           st.requests);
    return B.counts[2] == B.nranks ? 0 : 1;
}
