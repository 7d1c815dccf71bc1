/* t_broker_relay_srv.c - an agent's relay on its sockets, in this
 * process: a parent broker (a thread), the relay between, ranks as
 * clients on its Unix socket.  Values go both ways through it, two ranks
 * pass a barrier together (their arrivals go up as one), a wrong token
 * is turned away at the relay, a relay without the parent's token
 * fails its ranks' requests (it does not hang them), and stop removes the
 * socket and its private folder.  A rank that pipelines 50,000 waiting
 * GETs is refused past its own limit while the agent's beat and the other
 * ranks go on; one that writes faster than the parent reads is held back,
 * not the parent dropped. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "rendezvous/broker_proto.h"
#include "rendezvous/broker_relay_srv.h"
#include "rendezvous/broker_thread.h"
#include "rendezvous/client.h"
#include "tap.h"
#include "rendezvous/token.h"

static char hex[TOKEN_HEX_LEN + 1];

struct arrival {
    const char *addr;
    int rc;
    int64_t gen;
};

/* A rank: connect through the relay and reach barrier "b" of 2. */
static void *rank(void *arg)
{
    struct arrival *a = arg;
    struct err err = { "" };
    struct client *c = client_connect(a->addr, hex, 60000, &err);

    a->rc = c ? client_barrier(c, "b", 2, 60000, &a->gen, &err) : -1;
    if (a->rc)
        printf("# %s\n", err.msg);
    client_close(c);
    return NULL;
}

static uint8_t tok[TOKEN_BYTES], other[TOKEN_BYTES];
static char bad[TOKEN_HEX_LEN + 1];

/* Values both ways between a rank below and a client above. */
static void values(struct relay_srv *r, struct client *up)
{
    struct err err = { "" };
    struct client *down = client_connect(relay_srv_addr(r), hex, 60000, &err);
    void *val = NULL;
    size_t len = 0;

    ok(down && up, "a rank on the relay, a client on the parent");
    ok(down && up && client_put(up, "from-head", "h", 1, &err) == 0 &&
       client_get(down, "from-head", 60000, &val, &len, &err) == 0 &&
       len == 1 && !memcmp(val, "h", 1), "a value from above read below");
    free(val);
    val = NULL;
    ok(down && up && client_put(down, "from-rank", "rr", 2, &err) == 0 &&
       client_get(up, "from-rank", 60000, &val, &len, &err) == 0 &&
       len == 2 && !memcmp(val, "rr", 2), "a value from below read above");
    free(val);
    client_close(down);
}

static void barrier(struct relay_srv *r)
{
    struct arrival ar[2];
    pthread_t th[2];

    for (int i = 0; i < 2; i++) {
        ar[i] = (struct arrival){ relay_srv_addr(r), -1, -1 };
        pthread_create(&th[i], NULL, rank, &ar[i]);
    }
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    ok(ar[0].rc == 0 && ar[1].rc == 0 && ar[0].gen == 0 && ar[1].gen == 0,
       "two ranks pass a barrier of 2 through the relay");
}

/* A relay whose AUTH the parent refused (a parent nobody serves is
 * retried for 30 s: not tested here). */
static void turned_away(const char *parent)
{
    struct err err = { "" };
    struct relay_srv *r = relay_srv_start(parent, other, 1, NULL, &err);
    struct client *down;
    void *val = NULL;
    size_t len = 0;

    /* refused connections are retried until the timeout: 100 ms, as a
     * healthy relay answers at once */
    down = r ? client_connect(relay_srv_addr(r), bad, 100, &err) : NULL;
    ok(!down || client_get(down, "from-head", 60000, &val, &len, &err) < 0,
       "a relay the parent turned away: its rank's requests fail, not hang");
    printf("# %s\n", err.msg);
    free(val);
    client_close(down);
    relay_srv_stop(r);
}

/* A rank's raw connection to the relay (it pipelines, as no client does). */
static int raw_connect(const char *addr)
{
    struct sockaddr_un un = { .sun_family = AF_UNIX };
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

    snprintf(un.sun_path, sizeof un.sun_path, "%s", addr + 5);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&un, sizeof un) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static size_t nstatus[BP_LIMIT + 1];

static int count_status(void *ctx, const struct bp_msg *m)
{
    (void)ctx;
    if (m->status <= BP_LIMIT)
        nstatus[m->status]++;
    return 0;
}

/* Write the AUTH and n GETs of keys nobody writes, waiting forever, to
 * fd; read the answers until want were refused or 10 s passed. */
static void pipeline_gets(int fd, size_t n, size_t want)
{
    struct bp_msg a = { .op = BP_AUTH, .id = 1, .arg = BP_VERSION,
                        .val = tok, .vlen = TOKEN_BYTES };
    uint8_t *buf = malloc(n * 48 + 64), in[65536];
    size_t len = bp_frame_size(&a), off = 0;
    struct pollfd pf = { .fd = fd, .events = POLLIN };
    struct bp_conn pc;
    struct err err = { "" };
    char key[32];
    ssize_t got;

    bp_encode(buf, &a);
    for (size_t i = 0; i < n; i++) {
        struct bp_msg m = { .op = BP_GET, .id = 2 + (uint32_t)i,
                            .timeout_ms = BP_WAIT_FOREVER,
                            .key = (const uint8_t *)key };
        m.klen = (size_t)snprintf(key, sizeof key, "flood.%zu", i);
        bp_encode(buf + len, &m);
        len += bp_frame_size(&m);
    }
    while (off < len && (got = write(fd, buf + off, len - off)) > 0)
        off += (size_t)got;
    bp_conn_init(&pc, BP_CLIENT, NULL, BP_MAX_VALUE_CEILING, count_status,
                 NULL);
    while (nstatus[BP_LIMIT] < want && poll(&pf, 1, 10000) > 0 &&
           (got = read(fd, in, sizeof in)) > 0)
        bp_feed(&pc, in, (size_t)got, &err);
    bp_conn_free(&pc);
    free(buf);
}

/* A rank pipelines 50,000 waiting GETs on its relay socket: it is
 * refused past its own 256, while the agent's beat (on a connection of
 * its own to the head's broker, as lib/job/agent.c makes it) and another
 * rank's waiting GET through the same relay are not. */
static void flood(struct relay_srv *r, const char *parent)
{
    struct err err = { "" };
    struct client *hb = client_connect(parent, hex, 60000, &err), *rank2;
    int fd = raw_connect(relay_srv_addr(r));
    int64_t beats = 0;
    void *val = NULL;
    size_t len = 0;

    if (!ok(fd >= 0 && hb, "a rank's raw connection, the agent's own"))
        return;
    pipeline_gets(fd, 50000, 50000 - 256);
    is_int((long)nstatus[BP_LIMIT], 50000 - 256,
           "50,000 pipelined waiting GETs: refused past the rank's 256");
    is_int((long)nstatus[BP_OK], 1, "  its AUTH was answered, nothing else");
    ok(client_add(hb, "dlrun.hb.1", 1, &beats, &err) == CLIENT_OK &&
       beats == 1, "the agent beats meanwhile");
    is_int(client_get(hb, "dlrun.ctl.1", 300, &val, &len, &err),
           CLIENT_TIMEOUT, "  and its wait for a signal is not refused");
    rank2 = client_connect(relay_srv_addr(r), hex, 60000, &err);
    is_int(rank2 ? client_get(rank2, "nobody", 300, &val, &len, &err) : -1,
           CLIENT_TIMEOUT, "another rank's waiting GET through the relay: "
           "not refused either");
    client_close(rank2);
    client_close(hb);
    close(fd);
}

/* A parent that answers the relay's AUTH and then reads nothing until
 * told to (a slow network, a busy head): it drains what comes after. */
struct slow_parent {
    int lfd, fd;
    atomic_int drain;
    size_t drained;
};

static void *slow_parent_run(void *arg)
{
    struct slow_parent *sp = arg;
    struct bp_msg ok_auth = { .op = BP_AUTH, .id = UINT32_MAX,
                              .arg = BP_DEFAULT_MAX_VALUE };
    uint8_t f[BP_HDR_LEN], in[65536];
    ssize_t got;

    sp->fd = accept(sp->lfd, NULL, NULL);
    if (sp->fd < 0 || read(sp->fd, in, 40) != 40)
        return NULL;
    bp_encode(f, &ok_auth);
    if (write(sp->fd, f, sizeof f) != (ssize_t)sizeof f)
        return NULL;
    while (!atomic_load(&sp->drain))
        usleep(10000);
    while ((got = read(sp->fd, in, sizeof in)) > 0)
        sp->drained += (size_t)got;
    return NULL;
}

/* A rank's pipelined PUTs, written until done or the relay closes. */
struct writer {
    int fd, n, done;
    atomic_int ended;
};

static void *write_puts(void *arg)
{
    struct writer *w = arg;
    enum { VLEN = 1000000 };
    struct bp_msg a = { .op = BP_AUTH, .id = 1, .arg = BP_VERSION,
                        .val = tok, .vlen = TOKEN_BYTES };
    uint8_t *f = malloc(BP_HDR_LEN + 64 + VLEN);
    static uint8_t val[VLEN];
    size_t off = 0, n;

    bp_encode(f, &a);
    if (send(w->fd, f, bp_frame_size(&a), MSG_NOSIGNAL) < 0)
        goto out;
    for (int i = 0; i < w->n; i++, off = 0) {
        struct bp_msg m = { .op = BP_PUT, .id = 2 + (uint32_t)i,
                            .key = (const uint8_t *)"big", .klen = 3,
                            .val = val, .vlen = VLEN };
        ssize_t got;
        bp_encode(f, &m);
        n = bp_frame_size(&m);
        while (off < n && (got = send(w->fd, f + off, n - off,
                                      MSG_NOSIGNAL)) > 0)
            off += (size_t)got;
        if (off < n)
            goto out;
    }
    w->done = 1;
out:
    free(f);
    atomic_store(&w->ended, 1);
    return NULL;
}

/* A rank pipelines 160 MB of PUTs while the parent reads nothing: the
 * relay stops reading the rank instead of queueing past its limit for
 * the parent (which dropped the parent, and with it every rank of the
 * node); when the parent reads again, the rank's writes go on. */
static void put_flood(void)
{
    struct slow_parent sp = { .fd = -1 };
    struct sockaddr_in in = { .sin_family = AF_INET,
                              .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t alen = sizeof in;
    struct writer w = { .fd = -1, .n = 160 };
    struct pollfd pf = { .events = POLLIN };
    struct err err = { "" };
    uint8_t ans[BP_HDR_LEN];
    pthread_t pt, wt;
    char parent[64];
    struct relay_srv *r;

    sp.lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (sp.lfd < 0 || bind(sp.lfd, (struct sockaddr *)&in, sizeof in) < 0 ||
        listen(sp.lfd, 4) < 0 ||
        getsockname(sp.lfd, (struct sockaddr *)&in, &alen) < 0)
        return;
    snprintf(parent, sizeof parent, "127.0.0.1:%d", ntohs(in.sin_port));
    pthread_create(&pt, NULL, slow_parent_run, &sp);
    r = relay_srv_start(parent, tok, 1, NULL, &err);
    w.fd = r ? raw_connect(relay_srv_addr(r)) : -1;
    if (!ok(w.fd >= 0, "a relay whose parent does not read, a rank on it")) {
        atomic_store(&sp.drain, 1);
        relay_srv_stop(r);
        pthread_join(pt, NULL);
        return;
    }
    pthread_create(&wt, NULL, write_puts, &w);
    pf.fd = w.fd;
    ok(poll(&pf, 1, 10000) == 1 && read(w.fd, ans, sizeof ans) == BP_HDR_LEN,
       "  its AUTH answered");
    is_int(poll(&pf, 1, 3000), 0, "160 MB of PUTs the parent does not read: "
           "the rank's connection stays open (its writes wait)");
    ok(!atomic_load(&w.ended), "  and it is not read meanwhile");
    atomic_store(&sp.drain, 1);
    for (int i = 0; i < 600 && !atomic_load(&w.ended); i++)
        usleep(100000);
    ok(w.done, "the parent reads again: all of them go through");
    relay_srv_stop(r);
    pthread_join(wt, NULL);
    pthread_join(pt, NULL);
    ok(sp.drained >= 160u * 1000000u, "  to the parent");
    close(w.fd);
    close(sp.fd);
    close(sp.lfd);
}

/* In the job's folder: the socket there, the folder left to its owner. */
static void in_job_folder(const char *parent)
{
    char dir[64] = "/tmp/t_relay_srv.XXXXXX", path[96];
    struct err err = { "" };
    struct relay_srv *r;
    struct stat st;

    if (!ok(mkdtemp(dir) != NULL, "a job folder"))
        return;
    r = relay_srv_start(parent, tok, 1, dir, &err);
    snprintf(path, sizeof path, "unix:%s/relay.sock", dir);
    ok(r && !strcmp(relay_srv_addr(r), path), "its socket in the job folder");
    relay_srv_stop(r);
    ok(stat(path + 5, &st) < 0 && stat(dir, &st) == 0,
       "stop removes the socket, not the job folder");
    rmdir(dir);
}

int main(void)
{
    char parent[64], path[256], dir[256];
    struct err err = { "" };
    struct broker_thread *b;
    struct relay_srv *r;
    struct client *up;
    struct stat st;

    token_new(tok, &err);
    token_new(other, &err);
    token_to_hex(tok, hex);
    token_to_hex(other, bad);
    b = broker_thread_start("127.0.0.1", 0, tok, &err);
    if (!ok(b != NULL, "a parent broker"))
        return tap_done();
    snprintf(parent, sizeof parent, "127.0.0.1:%d", broker_thread_port(b));
    r = relay_srv_start(parent, tok, 2, NULL, &err);
    if (!ok(r != NULL, "relay_srv_start")) {
        printf("# %s\n", err.msg);
        broker_thread_stop(b);
        return tap_done();
    }
    ok(!strncmp(relay_srv_addr(r), "unix:", 5), "its address: unix:PATH");
    snprintf(path, sizeof path, "%s", relay_srv_addr(r) + 5);
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = '\0';
    ok(stat(dir, &st) == 0 && (st.st_mode & 0777) == 0700,
       "in a folder only this user can enter");
    up = client_connect(parent, hex, 60000, &err);
    values(r, up);
    barrier(r);
    flood(r, parent);
    put_flood();
    ok(!client_connect(relay_srv_addr(r), bad, 60000, &err),
       "a wrong token is turned away at the relay");
    relay_srv_stop(r);
    ok(stat(path, &st) < 0 && stat(dir, &st) < 0,
       "stop removes the socket and its folder");
    relay_srv_stop(NULL);
    in_job_folder(parent);
    turned_away(parent);
    client_close(up);
    broker_thread_stop(b);
    return tap_done();
}
