/* t_broker_flood.c - what a neighbour without the token, and a rank that
 * asks without reading, can do to the broker (issue 11):
 *  - a table full of connections that never authenticate: a rank still
 *    gets in (the oldest of them goes), the client library retries with
 *    a pause and says what happened when the table stays full;
 *  - one address holds at most max_unauth_per_src of them;
 *  - a wrong token is told, not retried;
 *  - a Unix socket in a 0700 folder (one-node jobs);
 *  - 40 connections sending GETs and never reading: they are held, not
 *    read, within max_mem, and a rank is served meanwhile; the memory is
 *    counted back when they go.
 * The broker runs in this process; each rank is a forked child using
 * lib/rendezvous/client.c, its result read from a pipe. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rendezvous/broker.h"
#include "rendezvous/broker_proto.h"
#include "rendezvous/client.h"
#include "util/clock.h"
#include "tap.h"

static const uint8_t token[TOKEN_BYTES] = "flood-token-16by";
static char token_hex[TOKEN_HEX_LEN + 1];

/* A blocking TCP connection to the broker that sends nothing. */
static int silent(const struct broker *b)
{
    struct sockaddr_in sa = { .sin_family = AF_INET,
                              .sin_port = htons((uint16_t)broker_port(b)) };
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Write one request frame on fd without waiting (may be cut short). */
static void send_req(int fd, uint8_t op, uint32_t id, const char *key,
                     const void *val, size_t vlen)
{
    uint8_t f[BP_HDR_LEN + 64 + 4096];
    struct bp_msg m = { .op = op, .id = id, .arg = op == BP_AUTH,
                        .key = (const uint8_t *)key,
                        .klen = key ? strlen(key) : 0, .val = val,
                        .vlen = vlen };

    bp_encode(f, &m);
    if (send(fd, f, bp_frame_size(&m), MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
        return;     /* the broker stopped reading: the point of the test */
}

/* Serve b for ms. */
static void serve_for(struct broker *b, int ms)
{
    struct err err = { "" };
    long end = clock_ms() + ms;

    while (clock_ms() < end)
        broker_run_once(b, 5, &err);
}

/* A rank: connect to addr with timeout_ms, ADD 1 to "ranks", report. */
static void rank_main(const char *addr, int timeout_ms, int fd)
{
    struct err err = { "" };
    struct client *c = client_connect(addr, token_hex, timeout_ms, &err);
    int64_t n = 0;
    char line[600];
    int len;

    if (c && client_add(c, "ranks", 1, &n, &err) == CLIENT_OK)
        len = snprintf(line, sizeof line, "ok %lld", (long long)n);
    else
        len = snprintf(line, sizeof line, "fail %s", err.msg);
    if (write(fd, line, (size_t)len) < 0)
        _exit(1);
    client_close(c);
    _exit(0);
}

/* Start a rank in a child; its pipe's read end. */
static int rank_start(const char *addr, int timeout_ms, pid_t *pid)
{
    int p[2];

    if (pipe2(p, O_CLOEXEC) < 0)
        return -1;
    fflush(stdout);
    *pid = fork();
    if (*pid == 0) {
        /* the test's own connections stay the test's: closing one in the
         * parent must end it */
        for (int fd = 3; fd < 1024; fd++)
            if (fd != p[1])
                close(fd);
        rank_main(addr, timeout_ms, p[1]);
    }
    close(p[1]);
    fcntl(p[0], F_SETFL, O_NONBLOCK);
    return p[0];
}

/* Serve b until the rank of fd ends (or 60 s, a hang guard); its line
 * into out.  Every `at_ms`, hook(b) runs once (may be NULL). */
static void rank_wait(struct broker *b, int fd, pid_t pid, char *out,
                      size_t len, int at_ms, void (*hook)(struct broker *))
{
    struct err err = { "" };
    long start = clock_ms();
    size_t have = 0;
    ssize_t r = -1;

    out[0] = '\0';
    while (clock_ms() - start < 60000) {
        broker_run_once(b, 5, &err);
        if (hook && clock_ms() - start >= at_ms) {
            hook(b);
            hook = NULL;
        }
        r = read(fd, out + have, len - 1 - have);
        if (r > 0) {
            have += (size_t)r;
            out[have] = '\0';
        } else if (r == 0) {
            break;
        }
    }
    close(fd);
    if (r != 0)
        kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

static void run_rank(struct broker *b, const char *addr, int timeout_ms,
                     char *out, size_t len, int at_ms,
                     void (*hook)(struct broker *))
{
    pid_t pid;
    int fd = rank_start(addr, timeout_ms, &pid);

    if (fd < 0) {
        snprintf(out, len, "no pipe");
        return;
    }
    rank_wait(b, fd, pid, out, len, at_ms, hook);
}

static struct broker *make(const char *bind, struct broker_limits *lim,
                           char *addr, size_t len)
{
    struct err err = { "" };
    struct broker *b = broker_create(bind, 0, token, lim, &err);

    if (!b) {
        printf("# %s\n", err.msg);
        return NULL;
    }
    if (broker_port(b))
        snprintf(addr, len, "127.0.0.1:%d", broker_port(b));
    else
        snprintf(addr, len, "%s", broker_addr(b));
    return b;
}

/* 1. The table full of connections that never authenticate. */
static void test_table_full_of_silent(void)
{
    struct broker_limits lim = { .max_conns = 16, .auth_timeout_ms = 60000 };
    struct broker_stats st;
    char addr[64], out[600];
    struct broker *b = make("127.0.0.1", &lim, addr, sizeof addr);
    int fds[40], n = 0;

    if (!ok(b != NULL, "a broker with max_conns 16"))
        return;
    for (int i = 0; i < 40; i++)
        if ((fds[n] = silent(b)) >= 0)
            n++;
    serve_for(b, 200);
    broker_get_stats(b, &st);
    is_int(st.conns, 16, "40 silent connections: the table is full");
    run_rank(b, addr, 20000, out, sizeof out, 0, NULL);
    is_str(out, "ok 1", "a rank still gets in");
    broker_get_stats(b, &st);
    ok(st.evicted >= 25, "  the oldest silent ones made room");
    is_int(st.refused, 0, "  nobody refused: every silent one can go");
    for (int i = 0; i < n; i++)
        close(fds[i]);
    broker_destroy(b);
}

/* 2. One address's connections without the token are capped. */
static void test_per_source_cap(void)
{
    struct broker_limits lim = { .max_unauth_per_src = 4,
                                 .auth_timeout_ms = 60000 };
    struct broker_stats st;
    char addr[64], out[600];
    struct broker *b = make("127.0.0.1", &lim, addr, sizeof addr);
    int fds[10], n = 0;

    if (!ok(b != NULL, "a broker with max_unauth_per_src 4"))
        return;
    for (int i = 0; i < 10; i++)
        if ((fds[n] = silent(b)) >= 0)
            n++;
    serve_for(b, 200);
    broker_get_stats(b, &st);
    is_int(st.conns, 4, "10 silent connections from 127.0.0.1: 4 held");
    is_int(st.evicted, 6, "  the 6 oldest evicted");
    run_rank(b, addr, 20000, out, sizeof out, 0, NULL);
    is_str(out, "ok 1", "a rank from the same address gets in");
    for (int i = 0; i < n; i++)
        close(fds[i]);
    broker_destroy(b);
}

/* 3. A table full of connections that did authenticate: the client
 * retries until its timeout, then says what happened; and gets in when
 * one leaves meanwhile. */
static int authed[4];

static void free_one(struct broker *b)
{
    (void)b;
    close(authed[0]);
    authed[0] = -1;
}

static void test_full_of_ranks(void)
{
    struct broker_limits lim = { .max_conns = 4 };
    char addr[64], out[600];
    struct broker *b = make("127.0.0.1", &lim, addr, sizeof addr);

    if (!ok(b != NULL, "a broker with max_conns 4"))
        return;
    for (int i = 0; i < 4; i++) {
        authed[i] = silent(b);
        send_req(authed[i], BP_AUTH, 1, NULL, token, TOKEN_BYTES);
    }
    serve_for(b, 200);
    run_rank(b, addr, 1500, out, sizeof out, 0, NULL);
    ok(strstr(out, "fail the broker at 127.0.0.1:") &&
       strstr(out, "had no room for a new connection") &&
       strstr(out, "tries over"), "full of ranks: the client retries, "
       "then says the broker had no room");
    ok(!strstr(out, "token"), "  not a word about the token");
    if (!strstr(out, "had no room"))
        printf("# %s\n", out);
    run_rank(b, addr, 20000, out, sizeof out, 300, free_one);
    is_str(out, "ok 1", "one leaves after 300 ms: the retrying client "
           "gets in");
    for (int i = 0; i < 4; i++)
        if (authed[i] >= 0)
            close(authed[i]);
    broker_destroy(b);
}

/* 4. A wrong token is told and not retried. */
static void test_wrong_token(void)
{
    char addr[64], out[600], hex[TOKEN_HEX_LEN + 1];
    struct broker *b = make("127.0.0.1", NULL, addr, sizeof addr);
    static const uint8_t wrong[TOKEN_BYTES] = "not-the-token-16";
    pid_t pid;
    int fd;

    if (!ok(b != NULL, "a broker"))
        return;
    memcpy(hex, token_hex, sizeof hex);
    token_to_hex(wrong, token_hex);
    fd = rank_start(addr, 60000, &pid);
    memcpy(token_hex, hex, sizeof hex);
    rank_wait(b, fd, pid, out, sizeof out, 0, NULL);
    is_str(out, "fail the broker closed the connection at AUTH: the token "
           "(DLRUN_TOKEN) is not this broker's", "wrong token: said so");
    broker_destroy(b);
}

/* 5. One-node jobs: a Unix socket in a folder of mode 0700. */
static void test_unix(void)
{
    char addr[200], dir[200], out[600];
    struct broker *b = make("unix:", NULL, addr, sizeof addr);
    struct stat st;

    if (!ok(b != NULL, "a broker on a Unix socket"))
        return;
    ok(strncmp(addr, "unix:/", 6) == 0 && strstr(addr, "/broker.sock"),
       "  its address is unix:PATH");
    snprintf(dir, sizeof dir, "%s", addr + 5);
    *strrchr(dir, '/') = '\0';
    ok(stat(dir, &st) == 0 && (st.st_mode & 0777) == 0700 &&
       st.st_uid == getuid(), "  in a folder of ours, mode 0700");
    is_int(broker_port(b), 0, "  no TCP port");
    run_rank(b, addr, 20000, out, sizeof out, 0, NULL);
    is_str(out, "ok 1", "a rank connects through it");
    broker_destroy(b);
    ok(stat(dir, &st) < 0 && errno == ENOENT, "  the folder goes with it");
}

/* 6. Ranks that ask and never read. */
#define DEAF 40

static void test_deaf_flood(void)
{
    struct broker_limits lim = { .max_out = 64 * 1024, .max_mem = 1u << 20 };
    struct broker_stats st;
    char addr[64], out[600], val[4096];
    struct broker *b = make("127.0.0.1", &lim, addr, sizeof addr);
    int fds[DEAF], put;

    if (!ok(b != NULL, "a broker with max_out 64 KiB, max_mem 1 MiB"))
        return;
    memset(val, 'v', sizeof val);
    put = silent(b);
    send_req(put, BP_AUTH, 1, NULL, token, TOKEN_BYTES);
    send_req(put, BP_PUT, 2, "v", val, sizeof val);
    for (int i = 0; i < DEAF; i++) {
        int small = 4096;
        fds[i] = silent(b);
        setsockopt(fds[i], SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
        send_req(fds[i], BP_AUTH, 1, NULL, token, TOKEN_BYTES);
    }
    /* each sends GETs of the 4 KiB value until its socket is full */
    for (int round = 0; round < 20; round++) {
        for (int i = 0; i < DEAF; i++)
            for (uint32_t k = 0; k < 500; k++)
                send_req(fds[i], BP_GET, 2 + k, "v", NULL, 0);
        serve_for(b, 20);
    }
    run_rank(b, addr, 20000, out, sizeof out, 0, NULL);
    is_str(out, "ok 1", "40 connections flood GETs, never read: a rank is "
           "served");
    broker_get_stats(b, &st);
    is_int(st.conns, DEAF + 1, "  they are held, not dropped");
    ok(st.paused >= DEAF, "  and no longer read");
    /* max_mem, plus what each could add in the round it passed it: one
     * read of 64 KiB of 25-byte GETs, 64 bytes an entry */
    ok(st.mem_peak < lim.max_mem + DEAF * (65536 / 25 + 1) * 64,
       "  memory held near max_mem");
    printf("# memory peak %zu bytes, now %zu, %zu pauses\n", st.mem_peak,
           st.mem, st.paused);
    for (int i = 0; i < DEAF; i++)
        close(fds[i]);
    serve_for(b, 300);
    broker_get_stats(b, &st);
    is_int(st.conns, 1, "they go when they close");
    ok(st.mem < 8192, "  and their memory is counted back");
    close(put);
    broker_destroy(b);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    token_to_hex(token, token_hex);
    test_table_full_of_silent();
    test_per_source_cap();
    test_full_of_ranks();
    test_wrong_token();
    test_unix();
    test_deaf_flood();
    return tap_done();
}
