/* t_hvd_server.c - the Gloo rendezvous server over real sockets on
 * loopback: the exchanges Horovod's HTTPStore makes (PUT, GET polled
 * until the key is there, DELETE to finalize), one request per
 * connection, answers to bad requests, a new attempt emptying the store;
 * who may connect: another user's connection closed unanswered, a source
 * over its slots refused while others are served, a trickling connection
 * closed at its deadline (the fake clock). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rendezvous/hvd_server.h"
#include "util/clock.h"
#include "tap.h"

static int port;

/* Send req (len bytes, in two writes split at split), read the answer to
 * the server's close into buf; its status, -1 on a socket error. */
static int exchange(const char *req, size_t len, size_t split, char *buf,
                    size_t cap)
{
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
    int fd = socket(AF_INET, SOCK_STREAM, 0), status = -1;
    size_t got = 0;
    ssize_t n;

    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
        goto out;
    if (write(fd, req, split) < 0 ||
        (len > split && write(fd, req + split, len - split) < 0))
        goto out;
    while (got + 1 < cap && (n = read(fd, buf + got, cap - 1 - got)) > 0)
        got += (size_t)n;
    buf[got] = '\0';
    if (sscanf(buf, "HTTP/1.0 %d", &status) != 1)
        status = -1;
out:
    close(fd);
    return status;
}

static int http(const char *method, const char *path, const char *body,
                char *buf, size_t cap)
{
    char req[512];
    int n = snprintf(req, sizeof req, "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     "Content-Length: %zu\r\n\r\n%s", method, path,
                     strlen(body), body);

    return exchange(req, (size_t)n, (size_t)n / 2, buf, cap);
}

static const char *body_of(const char *answer)
{
    const char *b = strstr(answer, "\r\n\r\n");
    return b ? b + 4 : "";
}

static void test_kv(void)
{
    char buf[1024];

    is_int(http("GET", "/global/0", "", buf, sizeof buf), 404,
           "GET of a key not there yet: 404 (the client polls)");
    ok(strstr(buf, "Content-Length: 0\r\n") != NULL, "... with no body");
    is_int(http("PUT", "/global/0", "tcp://10.1.2.3:4000", buf, sizeof buf), 200,
           "PUT: 200");
    is_int(http("GET", "/global/0", "", buf, sizeof buf), 200, "GET: 200");
    is_str(body_of(buf), "tcp://10.1.2.3:4000", "... with the value");
    ok(strstr(buf, "Content-Length: 19\r\n") != NULL, "... and its length");
    is_int(http("GET", "/global", "", buf, sizeof buf), 400, "/scope alone: 400");
    is_int(http("GET", "/a/b/c", "", buf, sizeof buf), 400, "/a/b/c: 400");
    is_int(http("POST", "/a/b", "", buf, sizeof buf), 501, "POST: 501");
    is_int(http("HEAD", "/a/b", "", buf, sizeof buf), 501,
           "HEAD: 501 (horovodrun's would serve files)");
    is_int(exchange("PUT /a/b HTTP/1.1\r\n\r\n", 21, 21, buf, sizeof buf), 411,
           "PUT without Content-Length: 411");
    is_int(http("PUT", "/global/1", "", buf, sizeof buf), 200, "empty PUT");
    is_int(http("GET", "/global/1", "", buf, sizeof buf), 200,
           "an empty value is found");
}

static void test_bad_and_big(void)
{
    char buf[1024], req[256];
    int n = snprintf(req, sizeof req, "PUT /a/b HTTP/1.1\r\nContent-Length: "
                     "%d\r\n\r\n", 5 << 20);

    is_int(exchange(req, (size_t)n, (size_t)n, buf, sizeof buf), 413,
           "a value over the limit: 413 before the body is sent");
    is_int(exchange("GET /a/b HTTP/3.0\r\n\r\n", 21, 3, buf, sizeof buf), 505,
           "HTTP/3.0: 505");
    is_int(exchange("\x01\x02\r\n\r\n", 6, 1, buf, sizeof buf), 400,
           "garbage: 400");
    is_int(http("PUT", "/full/x", "0123456789012345678901234567890123456789"
                "0123456789012345678901234567890123456789", buf, sizeof buf),
           507, "over the store's budget: 507");
}

static void test_attempt(struct hvd_server *s)
{
    struct plan_node nodes[2] = { { .host = "n1", .nranks = 2 },
                                  { .host = "n2", .nranks = 1 } };
    struct plan p = { .nranks = 3, .nodes = nodes, .nnodes = 2 };
    struct err err = { "" };
    char buf[1024];

    is_int(hvd_server_begin(s, &p, &err), 0, "begin an attempt");
    is_int(http("GET", "/global/0", "", buf, sizeof buf), 404,
           "a new attempt starts empty");
    http("PUT", "/cross_0/0", "a", buf, sizeof buf);
    http("PUT", "/cross_0/1", "b", buf, sizeof buf);
    http("PUT", "/cross_1/0", "c", buf, sizeof buf);
    is_int(http("DELETE", "/cross_0/0", "", buf, sizeof buf), 200, "DELETE: 200");
    is_int(http("GET", "/cross_0/1", "", buf, sizeof buf), 200,
           "cross_0 (2 nodes) holds after one DELETE");
    is_int(http("DELETE", "/cross_1/0", "", buf, sizeof buf), 200,
           "cross_1 has one node");
    is_int(http("GET", "/cross_1/0", "", buf, sizeof buf), 404,
           "... so one DELETE empties it");
    http("DELETE", "/cross_0/1", "", buf, sizeof buf);
    is_int(http("GET", "/cross_0/1", "", buf, sizeof buf), 404,
           "cross_0 empties after its second node's DELETE");
}

static char last_line[512];

static void on_log(void *ctx, const char *line)
{
    snprintf(last_line, sizeof last_line, "%s", line);
    ++*(int *)ctx;
}

/* A connection to the server, nothing sent; -1 when refused. */
static int open_conn(void)
{
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* 1 when the server closed fd (end of file or reset) within ms. */
static int closed_within(int fd, int ms)
{
    struct pollfd p = { .fd = fd, .events = POLLIN };
    char c;

    return poll(&p, 1, ms) == 1 && read(fd, &c, 1) <= 0;
}

/* Another user's process on this host: the server's user is not ours. */
static void test_other_user(struct hvd_server_opts o)
{
    int logged = 0;
    struct err err = { "" };
    struct hvd_server *s;
    char buf[256];

    o.other_uid = 1;
    o.uid = geteuid() + 1;
    o.log_ctx = &logged;
    s = hvd_server_start(&o, &err);
    port = s ? hvd_server_port(s) : 0;
    is_int(http("PUT", "/global/1", "6.6.6.6:31337", buf, sizeof buf), -1,
           "another user's PUT: closed, unanswered");
    is_int(http("GET", "/global/0", "", buf, sizeof buf), -1,
           "another user's GET: closed, unanswered");
    is_int(http("DELETE", "/global/0", "", buf, sizeof buf), -1,
           "another user's DELETE: closed, unanswered");
    is_int(logged, 1, "said once");
    ok(strstr(last_line, "refused a connection from 127.0.0.1 (uid ") &&
       strstr(last_line, "another user's process"), "... who and why");
    hvd_server_stop(s);
}

/* One source holds at most max_per_source connections; the rest are
 * closed, and a freed slot serves again. */
static void test_slots(struct hvd_server_opts o)
{
    int logged = 0, fd[3];
    struct err err = { "" };
    struct hvd_server *s;
    char buf[256];

    o.max_per_source = 2;
    o.max_conns = 8;
    o.log_ctx = &logged;
    s = hvd_server_start(&o, &err);
    port = s ? hvd_server_port(s) : 0;
    for (int i = 0; i < 3; i++)
        fd[i] = open_conn();
    ok(!closed_within(fd[0], 200) && !closed_within(fd[1], 1),
       "two idle connections of one source: held");
    ok(closed_within(fd[2], 2000), "the third: closed");
    ok(strstr(last_line, "holds 2 connections already") != NULL,
       "... and said why");
    is_int(http("GET", "/global/0", "", buf, sizeof buf), -1,
           "a request of the same source while two are held: refused");
    close(fd[0]);
    usleep(200000);
    is_int(http("GET", "/global/0", "", buf, sizeof buf), 404,
           "one closed: the source is served again");
    close(fd[1]);
    close(fd[2]);
    hvd_server_stop(s);
}

static volatile long fake_now;

static long fake_clock(void *ctx)
{
    (void)ctx;
    return fake_now;
}

/* A byte every 4 s keeps a connection from going idle (5 s), never past
 * its deadline (8 s). */
static void test_deadline(struct hvd_server_opts o)
{
    struct err err = { "" };
    struct hvd_server *s;
    const char *req = "PUT /global/0 HTTP/1.1\r\nContent-Length: 5\r\n\r\n";
    int fd, ok_so_far = 1;

    o.deadline_ms = 8000;
    fake_now = 1000000;
    clock_fake(fake_clock, NULL);
    s = hvd_server_start(&o, &err);
    port = s ? hvd_server_port(s) : 0;
    fd = open_conn();
    usleep(100000);     /* accepted at the fake 0 s */
    for (int t = 1; t <= 7 && ok_so_far; t++) {
        fake_now += 1000;
        if (t % 4 == 0)
            ok_so_far = write(fd, req + t / 4 - 1, 1) == 1 &&
                        !closed_within(fd, 100);
    }
    ok(ok_so_far, "a byte every 4 s: open at 7 s");
    fake_now += 1500;
    ok(write(fd, req + 2, 1) == 1 && closed_within(fd, 3000),
       "... and closed past its 8 s although it still sends");
    close(fd);
    hvd_server_stop(s);
    clock_fake(NULL, NULL);
}

int main(void)
{
    int logged = 0;
    struct hvd_server_opts o = { .ip = "127.0.0.1", .max_bytes = 400,
                                 .max_body = 1 << 20, .max_conns = 4,
                                 .idle_ms = 5000, .log = on_log,
                                 .log_ctx = &logged };
    struct err err = { "" };
    struct hvd_server *s = hvd_server_start(&o, &err);

    if (!ok(s != NULL, "start on loopback"))
        return printf("# %s\n", err.msg), tap_done();
    port = hvd_server_port(s);
    ok(port > 0, "a port");
    test_kv();
    test_bad_and_big();
    is_int(logged, 1, "the store's refusal was logged once");
    hvd_server_stop(s);
    signal(SIGPIPE, SIG_IGN);   /* writing to a refused connection */
    test_other_user(o);
    test_slots(o);
    test_deadline(o);
    o.max_bytes = 1 << 20;
    s = hvd_server_start(&o, &err);
    port = s ? hvd_server_port(s) : 0;
    if (s)
        test_attempt(s);
    hvd_server_stop(s);
    o.ip = "not-an-address";
    ok(hvd_server_start(&o, &err) == NULL && strstr(err.msg, "not-an-address"),
       "a bad address fails naming it");
    {
        char name[64] = "";
        ok(hvd_iface_of("127.0.0.1", name, sizeof name, &err) == 0 && name[0],
           "127.0.0.1 has an interface (lo)");
        ok(hvd_iface_of("192.0.2.99", name, sizeof name, &err) == -1 &&
           strstr(err.msg, "--iface"), "an address of no interface: the hint");
    }
    return tap_done();
}
