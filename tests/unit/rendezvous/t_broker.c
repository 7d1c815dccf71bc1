/* t_broker.c - the real broker over loopback, in this process: a thousand
 * clients at once, then every kind of bad peer (wrong token, garbage, an
 * oversized frame, silence, one that never reads, one too many), after
 * which a good client must still be served.  Then the blocking client
 * library and dlrun.h, from forked children, against the same broker. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../../contrib/include/dlrun.h"
#include "rendezvous/broker.h"
#include "rendezvous/broker_proto.h"
#include "rendezvous/client.h"
#include "util/clock.h"
#include "tap.h"

static const uint8_t token[TOKEN_BYTES] = "secret-token-16b";
static const uint8_t wrong[TOKEN_BYTES] = "secret-token-16c";

#define MAX_VALUE 65536
#define MAX_OUT (256 * 1024)
#define AUTH_MS 300

/* ---- a non-blocking test client, pumped by hand ---- */

struct tc {
    int fd, closed;
    int deaf;               /* never reads: a slow reader */
    uint8_t out[98304];
    size_t nout;
    struct bp_conn pc;
    char log[256];          /* "op#id status[ 'value'];..." */
    int nans;
};

static int tc_answer(void *ctx, const struct bp_msg *m)
{
    struct tc *t = ctx;
    size_t at = strlen(t->log);

    snprintf(t->log + at, sizeof t->log - at, "%s#%u %s", bp_op_name(m->op),
             (unsigned)m->id, bp_status_name(m->status));
    at = strlen(t->log);
    if (m->vlen)
        snprintf(t->log + at, sizeof t->log - at, " '%.*s'",
                 m->vlen > 20 ? 20 : (int)m->vlen, (const char *)m->val);
    at = strlen(t->log);
    snprintf(t->log + at, sizeof t->log - at, ";");
    t->nans++;
    return 0;
}

/* Connect (without waiting) to the broker on 127.0.0.1:port; rcvbuf > 0
 * shrinks the receive buffer first (a slow reader's window). */
static void tc_open(struct tc *t, int port, int rcvbuf)
{
    struct sockaddr_in sa = { .sin_family = AF_INET,
                              .sin_port = htons((uint16_t)port) };

    memset(t, 0, sizeof *t);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    t->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (rcvbuf > 0)
        setsockopt(t->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    if (connect(t->fd, (struct sockaddr *)&sa, sizeof sa) < 0 &&
        errno != EINPROGRESS)
        t->closed = 1;
    bp_conn_init(&t->pc, BP_CLIENT, NULL, BP_MAX_VALUE_CEILING, tc_answer, t);
}

static void tc_close(struct tc *t)
{
    if (t->fd >= 0)
        close(t->fd);
    t->fd = -1;
    bp_conn_free(&t->pc);
}

static void tc_raw(struct tc *t, const void *bytes, size_t n)
{
    if (t->nout + n <= sizeof t->out) {
        memcpy(t->out + t->nout, bytes, n);
        t->nout += n;
    }
}

static void tc_send(struct tc *t, uint8_t op, uint32_t id, const char *key,
                    const void *val, size_t vlen, int64_t arg, uint32_t tmo)
{
    struct bp_msg m = { .op = op, .id = id, .arg = arg, .timeout_ms = tmo,
                        .key = (const uint8_t *)key,
                        .klen = key ? strlen(key) : 0, .val = val,
                        .vlen = vlen };

    if (t->nout + bp_frame_size(&m) <= sizeof t->out) {
        bp_encode(t->out + t->nout, &m);
        t->nout += bp_frame_size(&m);
    }
}

static void tc_auth(struct tc *t, const uint8_t *tok)
{
    tc_send(t, BP_AUTH, 1, NULL, tok, TOKEN_BYTES, BP_VERSION, 0);
}

/* Write what is queued, read what came; note a close by the broker. */
static void tc_pump(struct tc *t)
{
    uint8_t buf[65536];
    struct err err = { "" };
    ssize_t n = -1;

    if (t->closed)
        return;
    if (t->nout && (n = send(t->fd, t->out, t->nout, MSG_NOSIGNAL)) > 0) {
        memmove(t->out, t->out + n, t->nout - (size_t)n);
        t->nout -= (size_t)n;
    }
    if (t->deaf)
        return;
    while ((n = recv(t->fd, buf, sizeof buf, 0)) > 0)
        if (bp_feed(&t->pc, buf, (size_t)n, &err) < 0)
            t->closed = 2;      /* the broker sent garbage: a failure */
    if (n == 0 || (errno != EAGAIN && errno != EINTR && errno != ENOTCONN))
        t->closed = t->closed ? t->closed : 1;
}

/* Serve and pump the n clients until done(ts, n) holds or ms pass.
 * Returns 1 when done. */
static int run_until(struct broker *b, struct tc *ts, size_t n,
                     int (*done)(struct tc *ts, size_t n), int ms)
{
    int64_t end = clock_ms() + ms;
    struct err err = { "" };

    do {
        if (broker_run_once(b, 1, &err) < 0)
            return 0;
        for (size_t i = 0; i < n; i++)
            tc_pump(&ts[i]);
        if (done(ts, n))
            return 1;
    } while (clock_ms() < end);
    return 0;
}

static int all_closed(struct tc *ts, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!ts[i].closed)
            return 0;
    return 1;
}

static int all_three_answers(struct tc *ts, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (ts[i].nans < 3)
            return 0;
    return 1;
}

static int never(struct tc *ts, size_t n)
{
    (void)ts;
    (void)n;
    return 0;
}

/* ---- the server against many clients and bad ones ---- */

static struct broker *g_b;      /* for the predicates below */
static struct broker_stats st0; /* counters before a test */

static struct broker_stats stats(void)
{
    struct broker_stats s;

    broker_get_stats(g_b, &s);
    return s;
}

/* For run_until: wait for *watched to have watched_n answers. */
static struct tc *watched;
static int watched_n;

static int answered(struct tc *ts, size_t n)
{
    (void)ts;
    (void)n;
    return watched->nans >= watched_n;
}

static void run_until_answers(struct tc *ts, size_t n, struct tc *t,
                              int answers)
{
    watched = t;
    watched_n = answers;
    run_until(g_b, ts, n, answered, 60000);
}

static int no_conns(struct tc *ts, size_t n)
{
    (void)ts;
    (void)n;
    return stats().conns == 0;
}

/* n ranks, each: AUTH, GET k (parked until a PUT), BARRIER of all n. */
static void test_many_clients(size_t n)
{
    struct tc *ts = calloc(n + 1, sizeof *ts);
    size_t good = 0;
    int64_t t0 = clock_ms();
    char what[120];
    int done;

    for (size_t i = 0; i < n; i++) {
        tc_open(&ts[i], broker_port(g_b), 0);
        tc_auth(&ts[i], token);
        tc_send(&ts[i], BP_GET, 2, "k", NULL, 0, 0, 20000);
        tc_send(&ts[i], BP_BARRIER, 3, "all", NULL, 0, (int64_t)n, 20000);
    }
    tc_open(&ts[n], broker_port(g_b), 0);
    tc_auth(&ts[n], token);
    tc_send(&ts[n], BP_PUT, 2, "k", "v", 1, 0, 0);
    tc_send(&ts[n], BP_GET, 3, "k", NULL, 0, 0, 0);
    done = run_until(g_b, ts, n + 1, all_three_answers, 60000);
    for (size_t i = 0; i < n; i++)
        good += ts[i].nans == 3 && strstr(ts[i].log, "auth#1 ok;") &&
                strstr(ts[i].log, "get#2 ok 'v';") &&
                strstr(ts[i].log, "barrier#3 ok;");
    snprintf(what, sizeof what, "%zu clients: AUTH, GET answered by a later "
             "PUT, barrier of all", n);
    ok(done && good == n, what);
    printf("# %zu clients served in %lld ms\n", n, (long long)(clock_ms() - t0));
    is_str(ts[n].log, "auth#1 ok;put#2 ok;get#3 ok 'v';", "the putter");
    for (size_t i = 0; i <= n; i++)
        tc_close(&ts[i]);
    run_until(g_b, ts, 0, no_conns, 60000);
    is_int(stats().conns, 0, "all their connections closed");
    free(ts);
}

enum { WRONG, GARBAGE, PUT_FIRST, HUGE_VALUE, HUGE_KEY, SILENT, HALF_AUTH,
       NBAD };

static void bad_peers_open(struct tc *ts)
{
    static const char http[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    struct bp_msg big = { .op = BP_PUT, .klen = 1, .vlen = MAX_VALUE + 1 };
    uint8_t hdr[BP_HDR_LEN], auth[64];
    char key[300];

    memset(key, 'k', sizeof key);
    key[BP_MAX_KEY + 1] = '\0';
    for (int i = 0; i < NBAD; i++)
        tc_open(&ts[i], broker_port(g_b), 0);
    tc_auth(&ts[WRONG], wrong);
    tc_raw(&ts[GARBAGE], http, sizeof http - 1);
    tc_send(&ts[PUT_FIRST], BP_PUT, 1, "k", "0123456789abcdef", 16, 0, 0);
    tc_auth(&ts[HUGE_VALUE], token);
    bp_encode_hdr(hdr, &big);   /* the header alone: the body never comes */
    tc_raw(&ts[HUGE_VALUE], hdr, sizeof hdr);
    tc_auth(&ts[HUGE_KEY], token);
    tc_send(&ts[HUGE_KEY], BP_GET, 2, key, NULL, 0, 0, 0);
    tc_auth(&ts[HALF_AUTH], token);
    memcpy(auth, ts[HALF_AUTH].out, 10);
    ts[HALF_AUTH].nout = 0;
    tc_raw(&ts[HALF_AUTH], auth, 10);
}

/* Every bad peer is dropped, each for its reason, within the AUTH
 * timeout; the ones that authenticated got their AUTH answer first. */
static void test_bad_peers(void)
{
    struct tc ts[NBAD];
    struct broker_stats s;
    int64_t t0 = clock_ms(), took;
    int done;

    st0 = stats();
    bad_peers_open(ts);
    done = run_until(g_b, ts, NBAD, all_closed, 60000);
    took = clock_ms() - t0;
    s = stats();
    ok(done, "wrong token, garbage, PUT first, oversized value and key, "
       "silence, half an AUTH: all dropped");
    /* a lower bound only: a loaded machine may be late, never early */
    ok(took >= AUTH_MS - 20, "the silent ones after the AUTH timeout");
    is_int(s.auth_failed - st0.auth_failed, 5, "5 dropped for AUTH");
    is_int(s.proto_failed - st0.proto_failed, 2, "2 dropped for bad frames");
    is_str(ts[WRONG].log, "auth#0 invalid;",
           "wrong token: told so (id 0) before the close, not to retry");
    is_str(ts[GARBAGE].log, "", "garbage: no answer at all");
    for (int i = 0; i < NBAD; i++)
        tc_close(&ts[i]);
}

static int slow_paused_and_good_done(struct tc *ts, size_t n)
{
    (void)n;
    return stats().paused > st0.paused && ts[0].nans == 4;
}

/* A peer that asks for megabytes and never reads is no longer read once
 * its queue passes max_out (not dropped: a rank may be slow); meanwhile
 * another peer is served as usual, and its memory goes when it goes. */
static void test_slow_reader(void)
{
    static char big[60000];
    struct tc ts[2];
    struct broker_stats s;
    int done;

    st0 = stats();
    memset(big, 'B', sizeof big);
    tc_open(&ts[0], broker_port(g_b), 0);
    tc_auth(&ts[0], token);
    tc_send(&ts[0], BP_PUT, 2, "big", big, sizeof big, 0, 0);
    run_until_answers(ts, 1, &ts[0], 2);
    tc_open(&ts[1], broker_port(g_b), 4096);
    ts[1].deaf = 1;
    tc_auth(&ts[1], token);
    for (uint32_t i = 0; i < 1000; i++)   /* 60 MB of answers */
        tc_send(&ts[1], BP_GET, 2 + i, "big", NULL, 0, 0, 0);
    tc_send(&ts[0], BP_GET, 3, "big", NULL, 0, 0, 0);
    tc_send(&ts[0], BP_ADD, 4, "n", NULL, 0, 1, 0);
    done = run_until(g_b, ts, 2, slow_paused_and_good_done, 60000);
    s = stats();
    ok(done, "the reader that never reads is no longer read");
    is_int(s.slow_dropped - st0.slow_dropped, 0, "  not dropped");
    /* the answers share the one value: 1000 queue entries, not 60 MB */
    ok(s.mem < 256 * 1024, "  memory counted as allocated: 1000 entries");
    if (s.mem >= 256 * 1024)
        printf("# mem %zu\n", s.mem);
    is_str(ts[0].log, "auth#1 ok;put#2 ok;get#3 ok 'BBBBBBBBBBBBBBBBBBBB';"
           "add#4 ok;", "the other peer is served meanwhile");
    tc_close(&ts[0]);
    tc_close(&ts[1]);
    run_until(g_b, ts, 0, no_conns, 60000);
    ok(stats().mem < 4096, "  what it held is counted back when it goes");
}

static int all_answered_once(struct tc *ts, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (ts[i].nans < 1)
            return 0;
    return 1;
}

static int two_told_and_closed(struct tc *ts, size_t n)
{
    (void)n;
    return ts[3].closed && ts[4].closed;
}

/* With max_conns 3 and three authenticated peers, two more are closed at
 * once, told "limit" first (they retry); the rest work. */
static void test_max_conns(void)
{
    struct broker_limits lim = { .max_conns = 3 };
    struct err err = { "" };
    struct broker *b = broker_create("127.0.0.1", 0, token, &lim, &err);
    struct broker *saved = g_b;
    struct tc ts[5];
    struct broker_stats s;

    ok(b != NULL, "a broker with max_conns 3");
    if (!b)
        return;
    g_b = b;
    for (int i = 0; i < 3; i++) {
        tc_open(&ts[i], broker_port(b), 0);
        tc_auth(&ts[i], token);
    }
    ok(run_until(b, ts, 3, all_answered_once, 60000),
       "3 connections authenticated");
    for (int i = 3; i < 5; i++) {
        tc_open(&ts[i], broker_port(b), 0);
        tc_auth(&ts[i], token);
    }
    ok(run_until(b, ts, 5, two_told_and_closed, 60000),
       "2 more refused: every one in the table has the token");
    is_str(ts[3].log, "auth#0 limit reached;", "  told 'limit' before the close");
    s = stats();
    is_int(s.refused, 2, "counted as refused");
    is_int(s.evicted, 0, "  nobody evicted");
    for (int i = 0; i < 5; i++)
        tc_close(&ts[i]);
    g_b = saved;
    broker_destroy(b);
}

/* A connection the broker closes while a forked child still holds the
 * fd (a rank between fork and exec, in the head): epoll would go on
 * reporting the open file after close(), naming freed memory, unless the
 * broker removes it first.  ASan catches the use after free. */
static void test_fork_holds_fd(void)
{
    struct tc ts[2];
    pid_t pid;
    int status, closed;

    tc_open(&ts[0], broker_port(g_b), 0);
    tc_auth(&ts[0], token);
    run_until_answers(ts, 1, &ts[0], 1);
    pid = fork();
    if (pid == 0) {
        pause();            /* holds every fd of the broker meanwhile */
        _exit(0);
    }
    tc_raw(&ts[0], "garbage garbage garbage garbage!", 32);
    closed = run_until(g_b, ts, 1, all_closed, 60000);
    tc_open(&ts[1], broker_port(g_b), 0);
    tc_auth(&ts[1], token);
    tc_send(&ts[1], BP_GET, 2, "k", NULL, 0, 0, 0);
    tc_raw(&ts[1], "x", 1);     /* so that data arrives on a held file */
    run_until_answers(ts, 2, &ts[1], 2);
    run_until(g_b, ts, 2, never, 100);  /* and events, if any, come */
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    ok(closed, "a dropped peer is disconnected though a child holds the fd");
    ok(strstr(ts[1].log, "get#2 ok") != NULL,
       "and the broker goes on without stale events");
    tc_close(&ts[0]);
    tc_close(&ts[1]);
}

static int four_answers(struct tc *ts, size_t n)
{
    (void)n;
    return ts[0].nans >= 6;
}

/* After all of the above, the broker still serves a good client. */
static void test_survivor(void)
{
    struct tc t;

    tc_open(&t, broker_port(g_b), 0);
    tc_auth(&t, token);
    tc_send(&t, BP_PUT, 2, "after", "all", 3, 0, 0);
    tc_send(&t, BP_GET, 3, "after", NULL, 0, 0, 100);
    tc_send(&t, BP_ADD, 4, "count", NULL, 0, 2, 0);
    tc_send(&t, BP_BARRIER, 5, "one", NULL, 0, 1, 0);
    tc_send(&t, BP_DEL, 6, "after", NULL, 0, 0, 0);
    run_until(g_b, &t, 1, four_answers, 60000);
    is_str(t.log, "auth#1 ok;put#2 ok;get#3 ok 'all';add#4 ok;barrier#5 ok;"
           "del#6 ok;", "a good client is still served");
    tc_close(&t);
}

/* ---- the client library, from child processes ---- */

static char broker_env[64], token_hex[TOKEN_HEX_LEN + 1];
static char outs[4][1024];

typedef void (*child_fn)(int idx, FILE *out);

static void child_main(child_fn fn, int idx, int fd)
{
    FILE *out = fdopen(fd, "w");

    fn(idx, out);
    fclose(out);
    _exit(0);       /* no atexit, no leak report of the parent's heap */
}

/* Read what a child wrote into buf; at EOF close its pipe.  1 when it
 * closed now. */
static int drain(int *fd, char *buf, size_t *len, size_t cap)
{
    ssize_t r;

    if (*fd < 0)
        return 0;
    r = read(*fd, buf + *len, cap - 1 - *len);
    if (r > 0) {
        *len += (size_t)r;
        buf[*len] = '\0';
        return 0;
    }
    if (r < 0 && (errno == EAGAIN || errno == EINTR))
        return 0;
    close(*fd);
    *fd = -1;
    return 1;
}

/* Serve while reading what each child writes; 0 when all ended in
 * time. */
static int serve_children(const pid_t *pids, int *fds, int n)
{
    int64_t end = clock_ms() + 30000;
    int alive = n, open_fds = n, status;
    size_t len[4] = { 0 };
    struct err err = { "" };

    while ((alive || open_fds) && clock_ms() < end) {
        broker_run_once(g_b, 5, &err);
        for (int i = 0; i < n; i++)
            open_fds -= drain(&fds[i], outs[i], &len[i], sizeof outs[i]);
        while (alive && waitpid(-1, &status, WNOHANG) > 0)
            alive--;
    }
    for (int i = 0; alive && i < n; i++)
        kill(pids[i], SIGKILL);
    while (alive && waitpid(-1, &status, 0) > 0)
        alive--;
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    return open_fds ? -1 : 0;
}

/* Run fn(0..n-1) in n children against the broker; their output lands in
 * outs[].  0 on time. */
static int with_children(int n, child_fn fn)
{
    pid_t pids[4];
    int fds[4], p[2];

    fflush(stdout);
    for (int i = 0; i < n; i++) {
        outs[i][0] = '\0';
        if (pipe2(p, O_CLOEXEC) < 0)
            return -1;
        pids[i] = fork();
        if (pids[i] == 0) {
            close(p[0]);
            child_main(fn, i, p[1]);
        }
        close(p[1]);
        fcntl(p[0], F_SETFL, O_NONBLOCK);
        fds[i] = p[0];
    }
    return serve_children(pids, fds, n);
}

/* One line "what=rc[:detail]" per call of client.h. */
static void child_api(int idx, FILE *out)
{
    struct err err = { "" };
    struct client *c = client_connect(broker_env, token_hex, 5000, &err);
    char key[300], *big = calloc(1, MAX_VALUE + 1);
    void *val = NULL;
    size_t len = 0;
    int64_t n = 0, t0;
    int rc;

    (void)idx;
    if (!c) {
        fprintf(out, "connect failed: %s\n", err.msg);
        return;
    }
    fprintf(out, "max=%zu\n", client_max_value(c));
    fprintf(out, "put=%d\n", client_put(c, "ck", "hello", 5, &err));
    fprintf(out, "get=%d", client_get(c, "ck", 0, &val, &len, &err));
    fprintf(out, ":%s:%zu\n", (char *)val, len);
    free(val);
    fprintf(out, "miss=%d:%s\n", client_get(c, "nope", 0, &val, &len, &err),
            err.msg);
    t0 = clock_ms();
    fprintf(out, "wait=%d:%s", client_get(c, "nope", 200, &val, &len, &err),
            err.msg);
    fprintf(out, ":%s\n", clock_ms() - t0 >= 190 ? "waited" : "too soon");
    client_add(c, "cn", 5, &n, &err);
    rc = client_add(c, "cn", -1, &n, &err);
    fprintf(out, "add=%d:%lld\n", rc, (long long)n);
    rc = client_barrier(c, "solo", 1, 1000, &n, &err);
    fprintf(out, "bar=%d:%lld\n", rc, (long long)n);
    fprintf(out, "addtext=%d:%s\n", client_add(c, "ck", 1, &n, &err), err.msg);
    fprintf(out, "del=%d", client_del(c, "ck", &err));
    fprintf(out, ",%d:%s\n", client_del(c, "ck", &err), err.msg);
    memset(key, 'k', sizeof key);
    key[BP_MAX_KEY + 1] = '\0';
    fprintf(out, "longkey=%d:%s\n", client_put(c, key, "v", 1, &err), err.msg);
    fprintf(out, "big=%d:%s\n", client_put(c, "b", big, MAX_VALUE + 1, &err),
            err.msg);
    fprintf(out, "atmax=%d\n", client_put(c, "b", big, MAX_VALUE, &err));
    free(big);
    client_close(c);
}

static const char child_api_want[] =
    "max=65536\n"
    "put=0\n"
    "get=0:hello:5\n"
    "miss=-3:get 'nope': no such key\n"
    "wait=-2:get 'nope': timed out:waited\n"
    "add=0:4\n"
    "bar=0:0\n"
    "addtext=-4:add 'ck': refused by the broker: the key holds something "
    "other than an integer, or the sum overflows\n"
    "del=0,-3:del 'ck': no such key\n"
    "longkey=-1:key of 257 bytes (must be 1 to 256)\n"
    "big=-1:put 'b': value of 65537 bytes (the broker takes at most 65536)\n"
    "atmax=0\n";

/* Connections that fail: wrong token, nobody listening, bad addresses. */
static void child_connect_errors(int idx, FILE *out)
{
    struct err err = { "" };
    struct client *c;
    char wrong_hex[TOKEN_HEX_LEN + 1];

    (void)idx;
    token_to_hex(wrong, wrong_hex);
    c = client_connect(broker_env, wrong_hex, 5000, &err);
    fprintf(out, "wrong=%s:%s\n", c ? "connected" : "NULL", err.msg);
    client_close(c);
    c = client_connect("127.0.0.1:1", token_hex, 300, &err);
    fprintf(out, "refused=%s:%s\n", c ? "connected" : "NULL", err.msg);
    client_close(c);
    c = client_connect("127.0.0.1", token_hex, 300, &err);
    fprintf(out, "noport=%s\n", c ? "connected" : err.msg);
    c = client_connect(broker_env, "abc", 300, &err);
    fprintf(out, "shorttoken=%s\n", c ? "connected" : err.msg);
}

static const char child_connect_want[] =
    "wrong=NULL:the broker closed the connection at AUTH: the token "
    "(DLRUN_TOKEN) is not this broker's\n"
    "refused=NULL:cannot connect to the broker at 127.0.0.1:1: Connection "
    "refused\n"
    "noport=broker address '127.0.0.1' is not HOST:PORT, [IPV6]:PORT or "
    "unix:PATH\n"
    "shorttoken=a token is 32 hex digits (like DLRUN_TOKEN printed by "
    "`dlrun broker`)\n";

/* Two processes: one waits for a key the other sets, then both meet. */
static void child_pair(int idx, FILE *out)
{
    struct err err = { "" };
    struct client *c = client_connect(broker_env, token_hex, 5000, &err);
    void *val = NULL;
    size_t len;
    int64_t gen = -1;
    int rc;

    if (!c) {
        fprintf(out, "connect failed: %s\n", err.msg);
        return;
    }
    if (idx == 0) {
        fprintf(out, "get=%d", client_get(c, "handoff", 10000, &val, &len,
                                          &err));
        fprintf(out, ":%s ", val ? (char *)val : "");
        free(val);
    } else {
        usleep(100000);
        fprintf(out, "put=%d ", client_put(c, "handoff", "from-1", 6, &err));
    }
    rc = client_barrier(c, "pair", 2, 10000, &gen, &err);
    fprintf(out, "bar=%d:%lld\n", rc, (long long)gen);
    client_close(c);
}

/* Both children ask for the id of group nccl_group. */
static const char *nccl_group;

static void child_nccl(int idx, FILE *out)
{
    struct err err = { "" };
    struct client *c = client_connect(broker_env, token_hex, 5000, &err);
    uint8_t id[CLIENT_NCCL_ID_BYTES] = { 0 };
    int rc;

    (void)idx;
    if (!c) {
        fprintf(out, "connect failed: %s\n", err.msg);
        return;
    }
    rc = client_nccl_unique_id(c, nccl_group, 10000, id, &err);
    if (rc == 0)
        fprintf(out, "rc=0 id=%.*s\n", CLIENT_NCCL_ID_BYTES, (char *)id);
    else
        fprintf(out, "rc=%d %s\n", rc, err.msg);
    client_close(c);
}

/* A stand-in libnccl.so.2 built with the C compiler; 0 when built. */
static int build_fake_nccl(char *dir, char *lib, size_t len)
{
    static const char src[] =
        "#include <stdio.h>\n#include <string.h>\n#include <unistd.h>\n"
        "typedef struct { char internal[128]; } ncclUniqueId;\n"
        "int ncclGetUniqueId(ncclUniqueId *id) {\n"
        "  memset(id, 0, sizeof *id);\n"
        "  snprintf(id->internal, 128, \"fake-id-of-%d\", (int)getpid());\n"
        "  return 0;\n}\n";
    char path[200], cmd[600];
    FILE *f;

    if (!mkdtemp(dir))
        return -1;
    snprintf(path, sizeof path, "%s/fake.c", dir);
    snprintf(lib, len, "%s/libnccl.so.2", dir);
    f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(src, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "cc -shared -fPIC -o %s %s 2>/dev/null", lib,
             path);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_nccl(void)
{
    char dir[] = "/tmp/t_broker.XXXXXX", lib[200], cmd[300];
    int built = build_fake_nccl(dir, lib, sizeof lib) == 0;

    if (built) {
        setenv("DLRUN_NCCL_LIBRARY", lib, 1);
        nccl_group = "g1";
        ok(with_children(2, child_nccl) == 0 && strcmp(outs[0], outs[1]) == 0
           && strncmp(outs[0], "rc=0 id=fake-id-of-", 19) == 0,
           "NCCL id: created by one rank, the same in both");
        if (strcmp(outs[0], outs[1]) != 0)
            printf("#   '%s' / '%s'\n", outs[0], outs[1]);
    } else {
        ok(1, "NCCL id with a stand-in library # SKIP no C compiler");
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        printf("# could not remove %s\n", dir);
    setenv("DLRUN_NCCL_LIBRARY", "/nonexistent/libnccl.so.2", 1);
    nccl_group = "g2";
    ok(with_children(2, child_nccl) == 0 &&
       (strstr(outs[0], "rc=-1 cannot load NCCL: /nonexistent") ||
        strstr(outs[1], "rc=-1 cannot load NCCL: /nonexistent")) &&
       (strstr(outs[0], "rc=-1 NCCL id of group 'g2': the rank that creates "
               "it failed: cannot load NCCL") ||
        strstr(outs[1], "rc=-1 NCCL id of group 'g2': the rank that creates "
               "it failed: cannot load NCCL")),
       "no NCCL: the creator says why, the other rank hears it");
    if (!strstr(outs[0], "cannot load") || !strstr(outs[1], "cannot load"))
        printf("#   '%s' / '%s'\n", outs[0], outs[1]);
    unsetenv("DLRUN_NCCL_LIBRARY");
}

/* The public API of contrib/include/dlrun.h. */
static void child_public(int idx, FILE *out)
{
    dlrun_kv *kv;
    void *val = NULL;
    size_t len = 0;
    int64_t n = 0;
    uint8_t id[DLRUN_NCCL_ID_BYTES];

    (void)idx;
    unsetenv("DLRUN_BROKER");
    kv = dlrun_kv_connect();
    fprintf(out, "noenv=%s:%s\n", kv ? "kv" : "NULL", dlrun_last_error());
    setenv("DLRUN_BROKER", broker_env, 1);
    setenv("DLRUN_TOKEN", token_hex, 1);
    kv = dlrun_kv_connect();
    fprintf(out, "put=%d ", dlrun_kv_put(kv, "pub", "lic", 3));
    fprintf(out, "get=%d", dlrun_kv_get(kv, "pub", 0, &val, &len));
    fprintf(out, ":%s:%zu ", (char *)val, len);
    free(val);
    fprintf(out, "add=%d", dlrun_kv_add(kv, "pubn", 3, &n));
    fprintf(out, ":%lld ", (long long)n);
    fprintf(out, "bar=%d ", dlrun_kv_barrier(kv, "pubb", 1, DLRUN_FOREVER));
    fprintf(out, "del=%d ", dlrun_kv_del(kv, "pub"));
    fprintf(out, "miss=%d:%s\n", dlrun_kv_get(kv, "pub", 0, &val, &len),
            dlrun_last_error());
    dlrun_kv_close(kv);
    setenv("DLRUN_NCCL_LIBRARY", "/nonexistent/libnccl.so.2", 1);
    fprintf(out, "nccl=%d:%.22s\n", dlrun_nccl_unique_id("pubg", id),
            dlrun_last_error());
}

static const char child_public_want[] =
    "noenv=NULL:DLRUN_BROKER is not set (dlrun sets it in multi-node jobs; "
    "`dlrun broker` prints one)\n"
    "put=0 get=0:lic:3 add=0:3 bar=0 del=0 miss=-3:get 'pub': no such key\n"
    "nccl=-1:cannot load NCCL: /non\n";

static void test_client_library(void)
{
    ok(with_children(1, child_api) == 0, "client.h calls in a child");
    is_str(outs[0], child_api_want, "client.h: each call's result");
    ok(with_children(1, child_connect_errors) == 0, "connect errors");
    is_str(outs[0], child_connect_want, "connect errors: the messages");
    ok(with_children(2, child_pair) == 0, "two blocking clients at once");
    is_str(outs[0], "get=0:from-1 bar=0:0\n", "one waited for the other's "
           "key, then both met");
    is_str(outs[1], "put=0 bar=0:0\n", "the other put it and met");
    ok(with_children(1, child_public) == 0, "dlrun.h calls in a child");
    is_str(outs[0], child_public_want, "dlrun.h: results and errors");
}

/* Room for 2 fds per client (ours and the broker's). */
static size_t clients_that_fit(size_t want)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 2 * want + 200)
        want = rl.rlim_cur > 400 ? (rl.rlim_cur - 200) / 2 : 100;
    return want;
}

static int auths, auths_lo;

static void on_auth(void *ctx, const struct sockaddr *sa)
{
    const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

    (void)ctx;
    auths++;
    auths_lo += sa->sa_family == AF_INET &&
                ntohl(in->sin_addr.s_addr) == INADDR_LOOPBACK;
}

int main(void)
{
    struct broker_limits lim = { .max_value = MAX_VALUE, .max_out = MAX_OUT,
                                 .auth_timeout_ms = AUTH_MS };
    struct err err = { "" };

    signal(SIGPIPE, SIG_IGN);
    g_b = broker_create("127.0.0.1", 0, token, &lim, &err);
    ok(g_b != NULL, "broker listens on 127.0.0.1, an ephemeral port");
    if (!g_b) {
        printf("# %s\n", err.msg);
        return tap_done();
    }
    ok(broker_port(g_b) > 0 && strcmp(broker_addr(g_b), "127.0.0.1") == 0,
       "its address and port are known");
    snprintf(broker_env, sizeof broker_env, "127.0.0.1:%d", broker_port(g_b));
    token_to_hex(token, token_hex);
    test_many_clients(clients_that_fit(1000));
    broker_on_auth(g_b, on_auth, NULL);
    test_bad_peers();
    is_int(auths, 2, "on_auth: once for each peer that presented the token "
           "(not a wrong token, garbage or half an AUTH)");
    is_int(auths_lo, 2, "... with its address, 127.0.0.1");
    broker_on_auth(g_b, NULL, NULL);
    test_slow_reader();
    test_max_conns();
    test_fork_holds_fd();
    test_survivor();
    test_client_library();
    test_nccl();
    test_survivor();
    broker_destroy(g_b);
    return tap_done();
}
