/* broker_flood.c - `dlrun broker` under the two floods of issue 11, with
 * ranks connecting meanwhile:
 *
 *  1. lock-out: IDLE connections that never authenticate (another local
 *     user, any host on the network), opened before and while the ranks
 *     come; the broker has --max-conns 1024;
 *  2. memory: DEAF authenticated connections that send GETs of an 8-byte
 *     value as fast as the broker takes them and never read an answer
 *     (small answers: many queue entries per byte on the wire).
 *
 * It prints, per phase, how many of the flood's connections are still
 * held, how many ranks got through (each: connect with a 30 s timeout,
 * ADD, close), and the broker's peak and current memory (VmHWM, VmRSS of
 * its process), then its memory after the flood went.  It drives the
 * binary given, so the same run measures an older dlrun.
 *
 *   make && cc -std=c11 -O2 -D_GNU_SOURCE -Ilib -o build/broker_flood \
 *       bench/broker_flood.c build/libdlrun-core.a -ldl
 *   build/broker_flood build/dlrun [IDLE [DEAF [RANKS]]]
 *                                   (defaults: 3000 40 200)
 *
 * Exit status: 0 when every rank got through in both phases, 1 when some
 * did not, 2 bad usage or set-up failure. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rendezvous/broker_proto.h"
#include "rendezvous/client.h"
#include "rendezvous/token.h"

struct target {
    pid_t pid;
    int port;
    char addr[64], token[TOKEN_HEX_LEN + 1];
};

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* VmHWM or VmRSS of pid, in MiB; -1 when unknown. */
static double vm(pid_t pid, const char *what)
{
    char path[64], line[256];
    double kib = -1;
    FILE *f;

    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    f = fopen(path, "r");
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, what, strlen(what)) == 0)
            kib = atof(line + strlen(what) + 1);
    if (f)
        fclose(f);
    return kib < 0 ? -1 : kib / 1024;
}

/* Start `dlrun broker` and read its two lines. */
static int start_broker(const char *dlrun, struct target *t)
{
    int p[2];
    char buf[512] = "";
    size_t have = 0;
    ssize_t r;
    const char *b, *k;

    if (pipe(p) < 0)
        return -1;
    t->pid = fork();
    if (t->pid == 0) {
        dup2(p[1], 1);
        close(p[0]);
        execl(dlrun, dlrun, "broker", "--bind", "127.0.0.1", "--max-conns",
              "1024", (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    while (have < sizeof buf - 1 && !strstr(buf, "DLRUN_TOKEN=") &&
           (r = read(p[0], buf + have, sizeof buf - 1 - have)) > 0)
        buf[have += (size_t)r] = '\0';
    usleep(100000);
    r = read(p[0], buf + have, 0);
    close(p[0]);
    b = strstr(buf, "DLRUN_BROKER=");
    k = strstr(buf, "DLRUN_TOKEN=");
    if (!b || !k || sscanf(b, "DLRUN_BROKER=%63s", t->addr) != 1 ||
        sscanf(k, "DLRUN_TOKEN=%32s", t->token) != 1)
        return -1;
    t->port = atoi(strrchr(t->addr, ':') + 1);
    return 0;
}

/* A non-blocking TCP connection to the broker, or -1. */
static int dial(const struct target *t)
{
    struct sockaddr_in sa = { .sin_family = AF_INET,
                              .sin_port = htons((uint16_t)t->port) };
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0 &&
        errno != EINPROGRESS) {
        close(fd);
        return -1;
    }
    return fd;
}

/* How many of the n fds the broker has not closed. */
static int still_held(int *fds, int n)
{
    int held = 0;

    for (int i = 0; i < n; i++) {
        struct pollfd p = { .fd = fds[i], .events = POLLRDHUP };
        if (fds[i] >= 0 && poll(&p, 1, 0) >= 0 &&
            !(p.revents & (POLLRDHUP | POLLHUP | POLLERR)))
            held++;
    }
    return held;
}

/* RANKS children, each: connect (30 s), ADD 1, close; how many got
 * through. */
static int ranks(const struct target *t, int n, double *secs)
{
    double t0 = now_s();
    int ok = 0, status, running = 0;

    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            struct err err = { "" };
            struct client *c = client_connect(t->addr, t->token, 30000, &err);
            int rc = c ? client_add(c, "ranks", 1, NULL, &err) : -1;
            if (rc != 0 && i < 3)       /* the first few say why */
                fprintf(stderr, "rank %d: %s\n", i, err.msg);
            _exit(rc != 0);
        }
        running += pid > 0;
    }
    while (running > 0 && wait(&status) > 0) {
        running--;
        ok += WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }
    *secs = now_s() - t0;
    return ok;
}

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
    (void)sig;
    stop = 1;
}

/* The idle flood, in a child until SIGTERM: keep n connections open,
 * dialling again any the broker closed, as an attacker would; then write
 * how many it held at the end to fd. */
static pid_t idle_flood(const struct target *t, int n, int fd)
{
    pid_t pid = fork();
    int *fds, held;

    if (pid != 0)
        return pid;
    signal(SIGTERM, on_term);
    fds = calloc((size_t)n, sizeof *fds);
    for (int i = 0; fds && i < n; i++)
        fds[i] = dial(t);
    while (fds && !stop) {
        for (int i = 0; i < n; i++)
            if (fds[i] < 0 || !still_held(&fds[i], 1)) {
                if (fds[i] >= 0)
                    close(fds[i]);
                fds[i] = dial(t);
            }
        usleep(10000);
    }
    held = fds ? still_held(fds, n) : 0;
    if (write(fd, &held, sizeof held) != sizeof held)
        _exit(1);
    _exit(0);
}

/* DEAF authenticated connections sending GETs for about secs. */
static void deaf_flood(const struct target *t, int *fds, int n, double secs)
{
    uint8_t tok[TOKEN_BYTES], buf[64 * (BP_HDR_LEN + 1)];
    struct bp_msg m = { .op = BP_AUTH, .arg = BP_VERSION, .val = tok,
                        .vlen = TOKEN_BYTES };
    struct err err = { "" };
    double end = now_s() + secs;
    size_t len = 0;

    token_from_hex(t->token, tok, &err);
    for (int i = 0; i < n; i++) {
        uint8_t f[BP_HDR_LEN + TOKEN_BYTES];
        struct pollfd p;
        fds[i] = dial(t);
        p = (struct pollfd){ .fd = fds[i], .events = POLLOUT };
        poll(&p, 1, 5000);
        bp_encode(f, &m);
        if (fds[i] < 0 || send(fds[i], f, sizeof f, MSG_NOSIGNAL) < 0)
            fprintf(stderr, "broker_flood: cannot open flood connection\n");
    }
    for (uint32_t k = 0; k < 64; k++) {
        struct bp_msg g = { .op = BP_GET, .id = k + 2,
                            .key = (const uint8_t *)"v", .klen = 1 };
        bp_encode(buf + len, &g);
        len += bp_frame_size(&g);
    }
    while (now_s() < end)
        for (int i = 0; i < n; i++)
            if (fds[i] >= 0 && send(fds[i], buf, len,
                                    MSG_NOSIGNAL | MSG_DONTWAIT) < 0 &&
                errno != EAGAIN && errno != EWOULDBLOCK) {
                close(fds[i]);
                fds[i] = -1;
            }
}

static int put_value(const struct target *t)
{
    struct err err = { "" };
    struct client *c = client_connect(t->addr, t->token, 5000, &err);
    char v[8];
    int rc;

    memset(v, 'v', sizeof v);
    rc = c ? client_put(c, "v", v, sizeof v, &err) : -1;
    client_close(c);
    return rc;
}

int main(int argc, char **argv)
{
    int nidle = argc > 2 ? atoi(argv[2]) : 3000;
    int ndeaf = argc > 3 ? atoi(argv[3]) : 40;
    int nranks = argc > 4 ? atoi(argv[4]) : 200;
    struct rlimit rl = { 65536, 65536 };
    struct target t;
    pid_t flooder;
    int *fds, ok1, ok2, held, p[2];
    double s1, s2, hwm, rss;

    if (argc < 2 || argc > 5 || nidle < 1 || ndeaf < 1 || nranks < 1)
        return fprintf(stderr, "usage: broker_flood DLRUN [IDLE [DEAF "
                       "[RANKS]]]\n"), 2;
    setrlimit(RLIMIT_NOFILE, &rl);
    signal(SIGPIPE, SIG_IGN);
    fds = calloc((size_t)ndeaf, sizeof *fds);
    if (!fds || start_broker(argv[1], &t) < 0 || put_value(&t) < 0)
        return fprintf(stderr, "broker_flood: cannot start %s broker\n",
                       argv[1]), 2;
    /* 1. connections that never authenticate */
    if (pipe(p) < 0)
        return 2;
    flooder = idle_flood(&t, nidle, p[1]);
    sleep(1);
    ok1 = ranks(&t, nranks, &s1);
    kill(flooder, SIGTERM);
    if (read(p[0], &held, sizeof held) != sizeof held)
        held = -1;
    waitpid(flooder, NULL, 0);
    printf("broker_flood: %s broker --max-conns 1024\n", argv[1]);
    printf("  %d idle connections without the token, kept open: %d held "
           "at the end; ranks through %d of %d in %.2f s\n", nidle, held,
           ok1, nranks, s1);
    usleep(300000);
    /* 2. connections that ask and never read */
    deaf_flood(&t, fds, ndeaf, 3.0);
    ok2 = ranks(&t, nranks, &s2);
    hwm = vm(t.pid, "VmHWM:");
    rss = vm(t.pid, "VmRSS:");
    printf("  %d connections sending GETs, never reading: %d held; ranks "
           "through %d of %d in %.2f s; broker memory peak %.1f MiB, "
           "now %.1f MiB\n", ndeaf, still_held(fds, ndeaf), ok2, nranks, s2,
           hwm, rss);
    for (int i = 0; i < ndeaf; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    sleep(1);
    printf("  after they closed: broker memory %.1f MiB\n",
           vm(t.pid, "VmRSS:"));
    kill(t.pid, SIGTERM);
    waitpid(t.pid, NULL, 0);
    return ok1 == nranks && ok2 == nranks ? 0 : 1;
}
