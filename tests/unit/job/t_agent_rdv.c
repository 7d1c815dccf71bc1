/* t_agent_rdv.c - the agents agreeing on the rendezvous through a real
 * broker in this process: no broker is nothing to do; two agents (one a
 * thread) end with the same master port and one TF_CONFIG port per rank;
 * a bad port list or master port that a rank put into the broker is one
 * line and exit 1, never believed. */
#include "job/head.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rendezvous/broker_thread.h"
#include "rendezvous/client.h"
#include "rendezvous/token.h"
#include "tap.h"
#include "util/say.h"

static char said[1024];

static void keep(void *ctx, const char *line)
{
    (void)ctx;
    snprintf(said, sizeof said, "%s", line);
}

/* A job of two nodes with two ranks each, as agent self_node sees it.
 * 0 / -1. */
static int make_job(struct job *j, int self_node)
{
    struct plan_request req = { 0 };
    struct err err = { "" };

    memset(j, 0, sizeof *j);
    if (alloc_add_node(&j->alloc, "node-a", 2, 0, &err) < 0 ||
        alloc_add_node(&j->alloc, "node-b", 2, 0, &err) < 0 ||
        plan_build(&j->alloc, &req, &j->plan, &err) < 0)
        return -1;
    j->plan.self_node = self_node;
    snprintf(j->rdv.addr, sizeof j->rdv.addr, "10.0.0.1");
    j->rdv.port = 29500;
    return 0;
}

static void free_job(struct job *j)
{
    free(j->rdv.worker_ports);
    plan_free(&j->plan);
    alloc_free(&j->alloc);
}

static void *agree(void *arg)
{
    static int rc;

    rc = agent_agree_rdv(arg);
    return &rc;
}

/* Both agents at once; node 1's rc into *rc1.  Returns node 0's. */
static int agree_both(struct job *j0, struct job *j1, int *rc1)
{
    pthread_t t;
    void *got = NULL;
    int rc0;

    if (pthread_create(&t, NULL, agree, j1) != 0)
        return -1;
    rc0 = agent_agree_rdv(j0);
    pthread_join(t, &got);
    *rc1 = *(int *)got;
    return rc0;
}

static int all_ports_valid(const struct job *j)
{
    for (int r = 0; r < j->plan.nranks; r++)
        if (j->rdv.worker_ports[r] < 1 || j->rdv.worker_ports[r] > 65535)
            return 0;
    return 1;
}

static void test_agree(void)
{
    struct job j0, j1;
    int rc1 = -1;

    if (!ok(make_job(&j0, 0) == 0 && make_job(&j1, 1) == 0, "two jobs"))
        return;
    is_int(agree_both(&j0, &j1, &rc1), 0, "rank 0's agent gathers");
    is_int(rc1, 0, "the other agent receives");
    ok(j0.rdv.port != 29500 && j0.rdv.port == j1.rdv.port,
       "MASTER_PORT found free by rank 0's agent, the same on both");
    is_str(j1.rdv.addr, "10.0.0.1", "MASTER_ADDR as rank 0's agent had it");
    ok(j0.rdv.worker_ports && j1.rdv.worker_ports &&
       memcmp(j0.rdv.worker_ports, j1.rdv.worker_ports,
              4 * sizeof(int)) == 0 && all_ports_valid(&j1),
       "one TF_CONFIG port per rank, the same on both");
    is_str(j0.rdv.port_from, "free port on rank 0's host, found by its agent",
           "where the port came from");
    free_job(&j0);
    free_job(&j1);
}

static void test_master_port_given(void)
{
    struct job j0, j1;
    int rc1 = -1;

    if (make_job(&j0, 0) < 0 || make_job(&j1, 1) < 0)
        return;
    j0.opt.rdv.master_port = j1.opt.rdv.master_port = 29500;
    is_int(agree_both(&j0, &j1, &rc1), 0, "--master-port: agreed");
    is_int(j1.rdv.port, 29500, "the given port stays");
    is_str(j0.rdv.port_from, "", "and no other reason is given");
    free_job(&j0);
    free_job(&j1);
}

/* Without TF_CONFIG no worker ports: the master's alone, nothing that
 * grows with the world. */
static void test_no_tf(void)
{
    struct job j0, j1;
    int rc1 = -1;

    if (make_job(&j0, 0) < 0 || make_job(&j1, 1) < 0)
        return;
    j0.opt.tf_config = j1.opt.tf_config = TF_NO;
    is_int(agree_both(&j0, &j1, &rc1), 0, "--tf-config no: agreed");
    is_int(rc1, 0, "  the other agent receives");
    ok(j0.rdv.port != 29500 && j0.rdv.port == j1.rdv.port,
       "  one MASTER_PORT, found free by rank 0's agent");
    ok(!j0.rdv.worker_ports && !j1.rdv.worker_ports, "  no worker ports");
    free_job(&j0);
    free_job(&j1);
}

/* A rank put nonsense where the agents read (it holds the token). */
static void test_bad(struct client *c)
{
    struct err err = { "" };
    struct job j;

    if (make_job(&j, 1) < 0)
        return;
    client_put(c, "dlrun.rdv", "10.0.0.1 99999 1 2 3 4", 22, &err);
    is_int(agent_agree_rdv(&j), EXIT_FAIL, "a bad master port: exit 1");
    is_str(said, "agent: cannot agree on the rendezvous: bad master port "
           "99999 from the broker", "named");
    free(j.rdv.worker_ports);
    j.rdv.worker_ports = NULL;
    client_put(c, "dlrun.rdv", "10.0.0.1 29500 1 2 junk", 23, &err);
    is_int(agent_agree_rdv(&j), EXIT_FAIL, "a bad worker port: exit 1");
    is_str(said, "agent: cannot agree on the rendezvous: bad port list from "
           "the broker", "named");
    free_job(&j);
    if (make_job(&j, 0) < 0)
        return;
    client_put(c, "dlrun.ports.1", "70000 1", 7, &err);
    is_int(agent_agree_rdv(&j), EXIT_FAIL, "rank 0's agent: a bad port list");
    is_str(said, "agent: cannot agree on the rendezvous: bad port list from "
           "the broker", "named");
    free_job(&j);
}

int main(void)
{
    uint8_t tok[TOKEN_BYTES];
    char hex[TOKEN_HEX_LEN + 1], addr[64];
    struct err err = { "" };
    struct broker_thread *t, *t2;
    struct client *c;
    struct job j;

    say_set_sink(keep, NULL);
    unsetenv("DLRUN_BROKER");
    if (make_job(&j, 1) == 0) {
        is_int(agent_agree_rdv(&j), 0, "no broker: nothing to agree on");
        ok(j.rdv.worker_ports == NULL, "and no worker ports");
        free_job(&j);
    }
    token_new(tok, &err);
    token_to_hex(tok, hex);
    t = broker_thread_start("127.0.0.1", 0, tok, &err);
    if (!ok(t != NULL, "a broker")) {
        printf("# %s\n", err.msg);
        return tap_done();
    }
    snprintf(addr, sizeof addr, "127.0.0.1:%d", broker_thread_port(t));
    setenv("DLRUN_BROKER", addr, 1);
    setenv("DLRUN_TOKEN", hex, 1);
    test_agree();
    broker_thread_stop(t);
    /* a fresh broker: the keys of the first agreement are gone */
    t = broker_thread_start("127.0.0.1", 0, tok, &err);
    snprintf(addr, sizeof addr, "127.0.0.1:%d", t ? broker_thread_port(t) : 0);
    setenv("DLRUN_BROKER", addr, 1);
    test_master_port_given();
    broker_thread_stop(t);
    t = broker_thread_start("127.0.0.1", 0, tok, &err);
    snprintf(addr, sizeof addr, "127.0.0.1:%d", t ? broker_thread_port(t) : 0);
    setenv("DLRUN_BROKER", addr, 1);
    test_no_tf();
    t2 = broker_thread_start("127.0.0.1", 0, tok, &err);
    snprintf(addr, sizeof addr, "127.0.0.1:%d", t2 ? broker_thread_port(t2) : 0);
    setenv("DLRUN_BROKER", addr, 1);
    c = client_connect(addr, hex, 5000, &err);
    if (ok(c != NULL, "a rank's connection"))
        test_bad(c);
    client_close(c);
    broker_thread_stop(t2);
    broker_thread_stop(t);
    return tap_done();
}
