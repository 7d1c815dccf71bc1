/* t_broker_relay_srv.c - an agent's relay on its sockets, in this
 * process: a parent broker (a thread), the relay between, ranks as
 * clients on its Unix socket.  Values go both ways through it, two ranks
 * pass a barrier together (their arrivals go up as one), a wrong token
 * is turned away at the relay, a relay without the parent's token
 * fails its ranks' requests (it does not hang them), and stop removes the
 * socket and its private folder. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <sys/stat.h>

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
