/* broker_bench.c - N simulated ranks against the broker over loopback:
 * each connects, authenticates, GETs one key (already set) and enters one
 * barrier of all N.  Prints how long until the last barrier answer came.
 * Goal: 10000 ranks under 1 s on a 2-core machine.
 *
 * The broker runs alone in a child process (one core, as in the head);
 * this process plays every rank with non-blocking sockets in one epoll
 * loop, each rank strictly one request after the other, as a real rank
 * would.  Connections are opened WINDOW at a time (a rank's start is
 * staggered in real jobs too) so that the listen backlog (somaxconn)
 * never overflows: an overflow costs a SYN retransmission, a full second.
 *
 *   make && cc -std=c11 -O2 -D_GNU_SOURCE -Ilib -o build/broker_bench \
 *       bench/broker_bench.c build/libdlrun-core.a -ldl
 *   ulimit -n 65536      # as root; each rank is one fd here, one there
 *   build/broker_bench [-p] [N [WINDOW]]     (defaults: 10000 1000)
 *
 * -p: each rank writes AUTH, GET and BARRIER at once (the protocol allows
 * pipelining; answers are matched by id) instead of one after the other.
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
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rendezvous/broker.h"
#include "rendezvous/broker_proto.h"
#include "rendezvous/client.h"
#include "rendezvous/token.h"

enum rank_state { IDLE, CONNECTING, AUTHING, GETTING, BARRIER_WAIT, DONE,
                  FAILED };

struct bench;

struct rank {
    struct bench *B;
    int fd;
    enum rank_state state;
    struct bp_conn pc;
    int64_t gen;
};

struct bench {
    int n, window, port, ep, done, failed, inflight, next;
    int pipelined;              /* AUTH, GET, BARRIER sent in one write */
    struct rank *ranks;
    uint8_t token[TOKEN_BYTES];
    double t_auth, t_get;       /* when the last AUTH, GET answer came */
    int nauth, nget;
    double t0;
};

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The broker, alone in this child, until SIGTERM. */
static void run_server(int n, const uint8_t *tok, int port_fd)
{
    struct broker_limits lim = { .max_conns = (size_t)n + 16 };
    struct err err = { "" };
    struct broker *b = broker_create("127.0.0.1", 0, tok, &lim, &err);
    int port = b ? broker_port(b) : -1;

    if (write(port_fd, &port, sizeof port) != sizeof port || !b) {
        fprintf(stderr, "broker_bench: %s\n", err.msg);
        _exit(1);
    }
    close(port_fd);
    signal(SIGTERM, SIG_DFL);
    for (;;)
        if (broker_run_once(b, -1, &err) < 0)
            _exit(1);
}

/* Append one request of rank r to frame at *len. */
static void encode_req(struct bench *B, struct rank *r, uint8_t op,
                       uint8_t *frame, size_t *len)
{
    struct bp_msg m = { .op = op, .id = (uint32_t)(r - B->ranks) };

    if (op == BP_AUTH) {
        m.val = B->token;
        m.vlen = TOKEN_BYTES;
        m.arg = BP_VERSION;
    } else if (op == BP_GET) {
        m.key = (const uint8_t *)"master";
        m.timeout_ms = 60000;
    } else {
        m.key = (const uint8_t *)"start";
        m.arg = B->n;
        m.timeout_ms = 60000;
    }
    m.klen = m.key ? strlen((const char *)m.key) : 0;
    bp_encode(frame + *len, &m);
    *len += bp_frame_size(&m);
}

/* Send op; pipelined (then op is AUTH), GET and BARRIER with it. */
static void send_req(struct bench *B, struct rank *r, uint8_t op)
{
    uint8_t frame[3 * (BP_HDR_LEN + 32)];
    size_t len = 0;

    encode_req(B, r, op, frame, &len);
    if (B->pipelined) {
        encode_req(B, r, BP_GET, frame, &len);
        encode_req(B, r, BP_BARRIER, frame, &len);
    }
    /* a hundred bytes into an empty socket buffer: all or nothing */
    if (send(r->fd, frame, len, MSG_NOSIGNAL) != (ssize_t)len)
        r->state = FAILED;
}

static void next_step(struct bench *B, struct rank *r)
{
    switch (r->state) {
    case AUTHING:
        B->nauth++;
        B->t_auth = now_s();
        B->inflight--;      /* authenticated: the next one may connect */
        r->state = GETTING;
        if (!B->pipelined)
            send_req(B, r, BP_GET);
        break;
    case GETTING:
        B->nget++;
        B->t_get = now_s();
        r->state = BARRIER_WAIT;
        if (!B->pipelined)
            send_req(B, r, BP_BARRIER);
        break;
    case BARRIER_WAIT:
        r->state = r->gen == 0 ? DONE : FAILED;
        B->done += r->state == DONE;
        break;
    default:
        r->state = FAILED;
    }
}

/* An answer for rank ctx: on to its next step. */
static int on_answer(void *ctx, const struct bp_msg *m)
{
    struct rank *r = ctx;

    if (m->status != BP_OK || m->id != (uint32_t)(r - r->B->ranks))
        return -1;
    r->gen = m->arg;
    next_step(r->B, r);
    return 0;
}

static void rank_read(struct rank *r)
{
    uint8_t buf[4096];
    struct err err = { "" };
    ssize_t n = recv(r->fd, buf, sizeof buf, 0);

    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0 || bp_feed(&r->pc, buf, (size_t)n, &err) < 0)
        r->state = FAILED;
}

/* Connect r and send its first request at once: over loopback the
 * handshake is usually done when connect() returns, and waiting for
 * EPOLLOUT would cost an event and an epoll_ctl per rank. */
static void rank_connect(struct bench *B, struct rank *r)
{
    struct sockaddr_in sa = { .sin_family = AF_INET,
                              .sin_port = htons((uint16_t)B->port) };
    struct epoll_event ev = { .events = EPOLLIN, .data.ptr = r };

    /* no TCP_NODELAY: one request at a time, so Nagle never holds one */
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    r->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    bp_conn_init(&r->pc, BP_CLIENT, NULL, BP_MAX_VALUE_CEILING, on_answer, r);
    r->B = B;
    r->state = CONNECTING;
    B->inflight++;
    if (connect(r->fd, (struct sockaddr *)&sa, sizeof sa) < 0 &&
        errno != EINPROGRESS) {
        r->state = FAILED;
        return;
    }
    r->state = AUTHING;
    send_req(B, r, BP_AUTH);
    if (r->state == FAILED) {     /* not connected yet: wait for it */
        r->state = CONNECTING;
        ev.events |= EPOLLOUT;
    }
    if (epoll_ctl(B->ep, EPOLL_CTL_ADD, r->fd, &ev) < 0)
        r->state = FAILED;
}

static void rank_event(struct bench *B, struct rank *r, uint32_t events)
{
    struct epoll_event ev = { .events = EPOLLIN, .data.ptr = r };

    if (r->state == CONNECTING && (events & (EPOLLOUT | EPOLLERR))) {
        epoll_ctl(B->ep, EPOLL_CTL_MOD, r->fd, &ev);
        r->state = AUTHING;
        send_req(B, r, BP_AUTH);
        return;
    }
    if (events & (EPOLLIN | EPOLLHUP | EPOLLERR))
        rank_read(r);
}

/* Count r as failed if it just did; before its AUTH answer it also
 * frees its place in the window. */
static void tally(struct bench *B, const struct rank *r,
                  enum rank_state before)
{
    if (r->state != FAILED)
        return;
    B->failed++;
    if (before == CONNECTING || before == AUTHING || before == IDLE)
        B->inflight--;
}

/* Play every rank until all are through or failed, or 60 s pass. */
static void drive(struct bench *B)
{
    struct epoll_event ev[512];
    double end = now_s() + 60;

    while (B->done + B->failed < B->n && now_s() < end) {
        int n;

        while (B->next < B->n && B->inflight < B->window) {
            struct rank *r = &B->ranks[B->next++];

            rank_connect(B, r);
            tally(B, r, IDLE);
        }
        n = epoll_wait(B->ep, ev, 512, 100);
        for (int i = 0; i < n; i++) {
            struct rank *r = ev[i].data.ptr;
            enum rank_state before = r->state;

            if (before == FAILED || before == DONE)
                continue;
            rank_event(B, r, ev[i].events);
            tally(B, r, before);
        }
    }
}

/* One fd per rank here and one in the broker: raise the soft limit (and
 * the hard one, which root may) to fit. */
static int fit_fds(int n)
{
    struct rlimit rl;
    rlim_t want = (rlim_t)n + 256;

    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return -1;
    if (rl.rlim_max < want)
        rl.rlim_max = want;
    if (rl.rlim_cur < want)
        rl.rlim_cur = want;
    if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
        return 0;
    fprintf(stderr, "broker_bench: %d ranks need %llu open files here and "
            "in the broker; raise the limit first: ulimit -n %llu (as "
            "root), or LimitNOFILE / limits.conf\n", n,
            (unsigned long long)want, (unsigned long long)want);
    return -1;
}

/* Set "master" as the job's first rank would, with the blocking client. */
static int publish(struct bench *B)
{
    char addr[64], hex[TOKEN_HEX_LEN + 1];
    struct err err = { "" };
    struct client *c;
    int rc;

    snprintf(addr, sizeof addr, "127.0.0.1:%d", B->port);
    token_to_hex(B->token, hex);
    c = client_connect(addr, hex, 5000, &err);
    rc = c ? client_put(c, "master", "10.0.0.1:29500", 14, &err) : -1;
    client_close(c);
    if (rc != 0)
        fprintf(stderr, "broker_bench: %s\n", err.msg);
    return rc;
}

static void report(const struct bench *B, double total, pid_t server)
{
    struct rusage ru;
    int status;

    kill(server, SIGTERM);
    waitpid(server, &status, 0);
    getrusage(RUSAGE_CHILDREN, &ru);
    printf("broker_bench: %d ranks (window %d): connect + AUTH + GET + "
           "barrier of all, %s\n", B->n, B->window,
           B->pipelined ? "pipelined (one write)" : "one request at a time");
    printf("  all authenticated  %7.1f ms\n", (B->t_auth - B->t0) * 1e3);
    printf("  all GETs answered  %7.1f ms\n", (B->t_get - B->t0) * 1e3);
    printf("  barrier released   %7.1f ms   <- the figure (goal < 1000)\n",
           total * 1e3);
    printf("  broker CPU time    %7.1f ms (user %.1f + sys %.1f)\n",
           (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
           (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3,
           ru.ru_utime.tv_sec * 1e3 + ru.ru_utime.tv_usec / 1e3,
           ru.ru_stime.tv_sec * 1e3 + ru.ru_stime.tv_usec / 1e3);
    printf("  ranks through      %d of %d, %d failed\n", B->done, B->n,
           B->failed);
}

int main(int argc, char **argv)
{
    int pipelined = argc > 1 && strcmp(argv[1], "-p") == 0;
    struct bench B = { .pipelined = pipelined, .n = 10000, .window = 1000 };
    struct err err = { "" };
    int pfd[2];
    pid_t server;

    argc -= pipelined;
    argv += pipelined;
    if (argc > 1)
        B.n = atoi(argv[1]);
    if (argc > 2)
        B.window = atoi(argv[2]);
    if (B.n < 1 || B.window < 1 || argc > 3)
        return fprintf(stderr, "usage: broker_bench [-p] [N [WINDOW]]\n"), 2;
    if (fit_fds(B.n) < 0 || token_new(B.token, &err) < 0 || pipe(pfd) < 0)
        return 1;
    server = fork();
    if (server == 0)
        run_server(B.n, B.token, pfd[1]);
    close(pfd[1]);
    if (read(pfd[0], &B.port, sizeof B.port) != sizeof B.port || B.port < 0 ||
        publish(&B) != 0)
        return 1;
    B.ranks = calloc((size_t)B.n, sizeof *B.ranks);
    B.ep = epoll_create1(EPOLL_CLOEXEC);
    B.t0 = now_s();
    drive(&B);
    report(&B, now_s() - B.t0, server);
    return B.done == B.n ? 0 : 1;
}
