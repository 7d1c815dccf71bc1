/* t_nodegroup.c - one dlrun per node by hand, in this process: the
 * records and outcomes as the broker carries them, then the protocol over
 * a real broker (lib/rendezvous/broker_thread.c) with one thread per "node": static
 * and arrival node ranks, a node rank taken twice, a full group, the
 * first outcome wins, every node done is ok, a silent node is lost, and a
 * node started later joins the group's generation. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "rendezvous/broker_thread.h"
#include "run/nodegroup.h"
#include "tap.h"

static char addr[64];
static const char *tok = "00112233445566778899aabbccddeeff";

static void codec(void)
{
    struct ng_member m = { .nproc = 4, .port = 29501, .max_restarts = 2,
                           .addr = "10.0.0.7", .host = "gpu-7" }, got;
    struct ng_end e = { .kind = NG_FAIL, .node = 1, .rank = 5,
                        .status = 3 << 8, .pid = 99 }, ge;
    struct err err;
    char buf[700];

    ok(ng_member_format(&m, buf, sizeof buf) == 0, "a record formats");
    is_str(buf, "4 29501 2 10.0.0.7 gpu-7", "  as NPROC PORT MAX ADDR HOST");
    ok(ng_member_parse(buf, strlen(buf), &got, &err) == 0 &&
       memcmp(&got, &m, sizeof m) == 0, "  and parses back");
    ok(ng_member_parse("4 1 0 a b c", 11, &got, &err) < 0, "a word too many");
    ok(ng_member_parse("0 1 0 a b", 9, &got, &err) < 0, "no ranks");
    ok(ng_member_parse("1 1 0 a%n b", 11, &got, &err) < 0, "a % in the address");
    ok(ng_member_parse("1 1 0 a\nb c", 11, &got, &err) < 0, "a newline");
    ok(ng_member_parse("1 1 0 a b\0", 10, &got, &err) < 0, "a NUL byte");
    ok(ng_end_format(&e, buf, sizeof buf) == 0, "an outcome formats");
    is_str(buf, "fail 1 5 768 99", "  as fail NODE RANK STATUS PID");
    ok(ng_end_parse(buf, strlen(buf), 2, 8, &ge, &err) == 0 &&
       memcmp(&ge, &e, sizeof e) == 0, "  and parses back");
    ok(ng_end_parse(buf, strlen(buf), 2, 5, &ge, &err) < 0,
       "a rank the group does not have");
    ok(ng_end_parse("lost 2", 6, 2, 4, &ge, &err) < 0, "a node it does not have");
    ok(ng_end_parse("signal 0 15", 11, 2, 4, &ge, &err) == 0 &&
       ge.kind == NG_SIGNAL && ge.status == 15, "signal NODE SIG");
    ok(ng_end_parse("ok ", 3, 2, 4, &ge, &err) < 0, "text after ok");
    ok(ng_end_parse("bye", 3, 2, 4, &ge, &err) < 0, "an unknown kind");
}

struct node {
    int rank, nnodes, gen, rc, hb_ms, max_nodes;
    struct nodegroup *ng;
    struct ng_group g;
    struct err err;
};

static struct ng_conf conf_of(const struct node *n, const char *host)
{
    struct ng_conf c = { .broker = addr, .token_hex = tok,
                         .nnodes = n->nnodes, .node_rank = n->rank,
                         .join_timeout_ms = 5000,
                         .hb_timeout_ms = n->hb_ms ? n->hb_ms : 5000,
                         .max_nodes = n->max_nodes, .last_call_ms = 1000,
                         .self = { .nproc = 2, .max_restarts = 100 } };

    snprintf(c.self.addr, sizeof c.self.addr, "127.0.0.1");
    snprintf(c.self.host, sizeof c.self.host, "%s", host);
    return c;
}

static void *join(void *arg)
{
    struct node *n = arg;
    char host[32];
    struct ng_conf c;

    snprintf(host, sizeof host, "n%d", n->rank);
    c = conf_of(n, host);
    n->ng = ng_connect(&c, &n->err);
    n->rc = n->ng ? ng_join(n->ng, n->gen, NULL, NULL, &n->g, &n->err) : -9;
    return NULL;
}

/* Join nodes concurrently (they wait for each other). */
static void join_all(struct node *v, int k)
{
    pthread_t t[8];

    for (int i = 0; i < k; i++)
        pthread_create(&t[i], NULL, join, &v[i]);
    for (int i = 0; i < k; i++)
        pthread_join(t[i], NULL);
}

static void done(struct node *v, int k)
{
    for (int i = 0; i < k; i++) {
        ng_group_free(&v[i].g);
        ng_close(v[i].ng);
    }
}

static void static_group(void)
{
    struct node v[2] = { { .rank = 1, .nnodes = 2 }, { .rank = 0, .nnodes = 2 } };
    struct node late = { .rank = 1, .nnodes = 2, .gen = 0 };
    struct ng_end e;
    struct err err;

    join_all(v, 2);
    ok(v[0].rc == 0 && v[1].rc == 0, "static: both nodes join");
    is_int(v[0].g.self, 1, "  node rank 1 as given");
    is_int(v[0].g.nranks, 4, "  4 ranks in all");
    ok(v[0].g.nodes[0].port > 0 && v[0].g.nodes[1].port == 0,
       "  node rank 0 found MASTER_PORT");
    is_int(v[0].g.nodes[0].port, v[1].g.nodes[0].port, "  both see it");
    is_str(v[0].g.nodes[0].host, "n0", "  with node 0's name");
    join(&late);
    ok(late.rc < 0 && strstr(late.err.msg, "node rank 1 has joined already"),
       "a second node rank 1 is refused");
    ng_close(late.ng);
    ok(ng_watch_begin(v[0].ng, &v[0].g, &err) == 0 &&
       ng_watch(v[0].ng, &v[0].g, 0, &e, &err) == 0, "nothing ended yet");
    ok(ng_post(v[0].ng, &v[0].g, NULL, &err) == 0 &&
       ng_outcome(v[0].ng, &v[0].g, 0, &e, &err) == 0,
       "one node done: not over");
    ok(ng_post(v[1].ng, &v[1].g, NULL, &err) == 0 &&
       ng_outcome(v[0].ng, &v[0].g, 0, &e, &err) == 1 && e.kind == NG_OK,
       "both done: ok");
    done(v, 2);
}

static void restart_and_first_wins(void)
{
    struct node v[2] = { { .rank = 0, .nnodes = 2, .gen = 1 },
                         { .rank = 1, .nnodes = 2, .gen = 1 } };
    struct node late = { .rank = 1, .nnodes = 2, .gen = -1 };
    struct ng_end f = { .kind = NG_FAIL, .node = 1, .rank = 3, .status = 7 << 8,
                        .pid = 42 }, s = { .kind = NG_SIGNAL, .node = 0,
                        .status = 15 }, e;
    struct err err;

    join_all(v, 2);
    ok(v[0].rc == 0 && v[1].rc == 0 && v[0].g.gen == 1,
       "generation 1 (a restart) forms");
    ok(ng_post(v[1].ng, &v[1].g, &f, &err) == 0 &&
       ng_post(v[0].ng, &v[0].g, &s, &err) == 0, "two outcomes posted");
    ok(ng_outcome(v[0].ng, &v[0].g, 1000, &e, &err) == 1 &&
       e.kind == NG_FAIL && e.rank == 3 && e.status == 7 << 8 && e.pid == 42,
       "  the first one is the group's");
    ok(ng_leave(v[1].ng, &v[1].g, 0, 0, &err) == 0 &&
       ng_leave(v[0].ng, &v[0].g, 2, 2000, &err) == 0, "both leave");
    done(v, 2);
    /* a node started later (gen -1) finds generation 1: it is full */
    join(&late);
    ok(late.rc < 0 && strstr(late.err.msg, "node rank 1 has joined already"),
       "a node started later joins the group's generation (1)");
    ng_close(late.ng);
}

static void lost_node(void)
{
    struct node v[2] = { { .rank = 0, .nnodes = 2, .gen = 5, .hb_ms = 300 },
                         { .rank = 1, .nnodes = 2, .gen = 5, .hb_ms = 300 } };
    struct ng_end e = { 0 };
    struct err err;
    int rc = 0;

    join_all(v, 2);
    ok(v[0].rc == 0 && v[1].rc == 0, "a group whose node 1 goes silent");
    ng_watch_begin(v[0].ng, &v[0].g, &err);
    for (int i = 0; i < 40 && rc == 0; i++)
        rc = ng_watch(v[0].ng, &v[0].g, 50, &e, &err);
    ok(rc == 1 && e.kind == NG_LOST && e.node == 1, "  node 0 posts it lost");
    done(v, 2);
}

static void arrival(void)
{
    struct node v[3] = { { .rank = -1, .nnodes = 2, .gen = 9 },
                         { .rank = -1, .nnodes = 2, .gen = 9 } };
    struct node third = { .rank = -1, .nnodes = 2, .gen = 9 };

    join_all(v, 2);
    ok(v[0].rc == 0 && v[1].rc == 0, "rendezvous: two nodes join");
    ok(v[0].g.self + v[1].g.self == 1, "  node ranks 0 and 1 on arrival");
    join(&third);
    ok(third.rc < 0 && strstr(third.err.msg, "the group is full"),
       "a third is told the group is full");
    ng_close(third.ng);
    done(v, 2);
}

/* Elastic 1:2 at generation 20: one node starts alone after the last
 * call; a second that arrives waits, the first's watcher posts "grow",
 * and generation 21 has both. */
static void elastic(void)
{
    struct node a = { .rank = -1, .nnodes = 1, .max_nodes = 2, .gen = 20 };
    struct node v[2] = { { .rank = -1, .nnodes = 1, .max_nodes = 2, .gen = -1 },
                         { .rank = -1, .nnodes = 1, .max_nodes = 2, .gen = 21 } };
    struct ng_end e = { 0 };
    struct err err;
    pthread_t late;
    char where[64];
    int rc = 0;

    join(&a);
    ok(a.rc == 0 && a.g.nnodes == 1 && a.g.self == 0,
       "elastic 1:2: alone after the last call");
    ok(ng_ranks_broker(a.ng, &a.g, "127.0.0.1:5", NULL, 0, NULL, NULL, &err)
       == 0, "  node rank 0 shares the ranks' broker");
    pthread_create(&late, NULL, join, &v[0]);
    ng_watch_begin(a.ng, &a.g, &err);
    for (int i = 0; i < 100 && rc == 0; i++)
        rc = ng_watch(a.ng, &a.g, 50, &e, &err);
    ok(rc == 1 && e.kind == NG_GROW, "  a second arrives: the group grows");
    join(&v[1]);    /* the first node's restart */
    pthread_join(late, NULL);
    ok(v[0].rc == 0 && v[1].rc == 0 && v[0].g.gen == 21 &&
       v[0].g.nnodes == 2 && v[0].g.self + v[1].g.self == 1,
       "  generation 21 has both");
    ok(ng_ranks_broker(v[1].ng, &v[1].g, v[1].g.self == 0 ? "127.0.0.1:7" :
                       NULL, where, sizeof where, NULL, NULL, &err) == 0 &&
       (v[1].g.self == 0 ||
        (ng_ranks_broker(v[0].ng, &v[0].g, "127.0.0.1:7", NULL, 0, NULL, NULL,
                         &err) == 0)),
       "  node rank 0 shares the ranks' broker again");
    if (v[1].g.self == 1)
        is_str(where, "127.0.0.1:7", "  the other reads it");
    else
        ok(ng_ranks_broker(v[0].ng, &v[0].g, NULL, where, sizeof where, NULL,
                           NULL, &err) == 0 && strcmp(where, "127.0.0.1:7") == 0,
           "  the other reads it");
    ng_group_free(&a.g);
    ng_close(a.ng);
    done(v, 2);
}

int main(void)
{
    struct err err;
    uint8_t raw[TOKEN_BYTES];
    struct broker_thread *b;
    char hex[33];

    codec();
    token_from_hex(tok, raw, &err);
    b = broker_thread_start("127.0.0.1", 0, raw, &err);
    ok(b != NULL, "the broker serves from its thread");
    if (!b)
        return tap_done();
    snprintf(addr, sizeof addr, "127.0.0.1:%d", broker_thread_port(b));
    static_group();
    restart_and_first_wins();
    lost_node();
    arrival();
    elastic();
    broker_thread_stop(b);
    ng_derive_token("job7", "10.0.0.1:29400", hex);
    ok(strlen(hex) == 32, "a derived token has 32 hex digits");
    {
        char other[33];
        ng_derive_token("job8", "10.0.0.1:29400", other);
        ok(strcmp(hex, other) != 0, "  another run id, another token");
    }
    return tap_done();
}
