/* t_head_args.c - what the head hands its agents: the plan wire there and
 * back (the settings an agent takes, -x values as the head has them, the
 * rank filter, the binding texts parsed again), the wire put into a real
 * broker, the agents' little command line and their launch job. */
#include "job/head.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rendezvous/broker_thread.h"
#include "rendezvous/client.h"
#include "rendezvous/token.h"
#include "run/proc.h"
#include "tap.h"

/* The head's job: 2 nodes of 2 ranks, with settings of every kind. */
static int head_job(struct job *j, int *filter)
{
    struct plan_request req = { 0 };
    struct err err = { "" };
    static char *exports[] = { "A=1", "T_HEAD_ARGS_B", "T_HEAD_ARGS_C", NULL };

    memset(j, 0, sizeof *j);
    if (alloc_add_node(&j->alloc, "node-a", 2, 0, &err) < 0 ||
        alloc_add_node(&j->alloc, "node-b", 2, 0, &err) < 0 ||
        plan_build(&j->alloc, &req, &j->plan, &err) < 0)
        return -1;
    j->restart = 1;
    j->opt.max_restarts = 3;
    j->opt.remote.heartbeat_s = 7;
    j->opt.remote.fanout = 4;
    j->opt.remote.connect_timeout_s = 9;
    j->opt.remote.ssh_user = "me";
    j->opt.remote.remote_dlrun = "/opt/dlrun";
    j->opt.kill_timeout_ms = 2500;
    j->opt.stall_timeout_ms = 60000;
    j->opt.summary = "s.json";
    j->opt.wdir = "/work";
    j->opt.mpi = MPI_PMIX;
    j->opt.bind_arg[0] = "core";
    j->opt.bind_arg[2] = "closest";
    j->opt.exports = exports;
    j->opt.nexports = 3;
    j->opt.ranks_filter = filter;
    j->opt.nfilter = 2;
    j->preflight = 1;
    return 0;
}

static void free_job(struct job *j)
{
    plan_free(&j->plan);
    alloc_free(&j->alloc);
}

static void check_agent(const struct job *a)
{
    const struct options *o = &a->opt;
    struct bind_opts b = { 0 };
    struct err err = { "" };

    is_int(a->restart, 1, "the restart count");
    is_int(o->max_restarts, 3, "--max-restarts");
    is_int(o->remote.heartbeat_s, 7, "--heartbeat-timeout");
    is_int(o->remote.fanout, 4, "--fanout");
    is_int(o->remote.connect_timeout_s, 9, "--connect-timeout");
    is_str(o->remote.ssh_user, "me", "--ssh-user");
    is_str(o->remote.remote_dlrun, "/opt/dlrun", "--remote-dlrun");
    is_int(o->kill_timeout_ms, 2500, "--kill-timeout");
    is_int(o->stall_timeout_ms, 60000, "--stall-timeout");
    is_str(o->summary, "s.json", "--summary");
    is_str(o->wdir, "/work", "--wdir");
    is_int(o->mpi, MPI_PMIX, "--mpi=pmix");
    is_int(o->preflight, 1, "the head's preflight");
    bind_parse_map_by("core", &b, &err);
    bind_parse_gpu_bind("closest", &b, &err);
    ok(o->bind_given && o->bind.map == b.map && o->bind.gpu == b.gpu,
       "the binding texts parsed again");
    ok(o->ranks_filter && o->nfilter == 2 && o->ranks_filter[0] == 1 &&
       o->ranks_filter[1] == 3, "--ranks-filter");
    is_int(o->nexports, 3, "three -x entries");
    is_str(o->exports[0], "A=1", "-x NAME=VALUE as given");
    is_str(o->exports[1], "T_HEAD_ARGS_B=here", "-x NAME: the head's value");
    is_str(o->exports[2], "T_HEAD_ARGS_C", "-x NAME unset here: each node's");
}

/* Through the broker, as the agents take it. */
static void test_wire(void)
{
    struct job h, a;
    struct planwire w = { 0 };
    struct err err = { "" };
    int filter[2] = { 1, 3 };
    void *val = NULL;
    size_t len = 0;
    uint8_t tok[TOKEN_BYTES];
    char hex[TOKEN_HEX_LEN + 1], addr[64];
    struct broker_thread *t;
    struct client *c = NULL;

    setenv("T_HEAD_ARGS_B", "here", 1);
    unsetenv("T_HEAD_ARGS_C");
    token_new(tok, &err);
    token_to_hex(tok, hex);
    t = broker_thread_start("127.0.0.1", 0, tok, &err);
    snprintf(addr, sizeof addr, "127.0.0.1:%d", t ? broker_thread_port(t) : 0);
    if (!ok(t && head_job(&h, filter) == 0, "a broker and the head's job"))
        return;
    is_int(head_send_plan(&h, addr, hex, &err), 0, "head_send_plan");
    c = client_connect(addr, hex, 5000, &err);
    ok(c && client_get(c, HEAD_PLAN_KEY, 0, &val, &len, &err) == CLIENT_OK,
       "the plan wire is in the broker under " HEAD_PLAN_KEY);
    memset(&a, 0, sizeof a);
    ok(val && planwire_decode(val, len, &w, &err) == 0 &&
       agent_take_settings(&a, &w, &err) == 0 &&
       planwire_plan(&w, &a.alloc, &a.plan, &err) == 0, "an agent takes it");
    is_int(a.plan.nnodes, 2, "the head's plan");
    check_agent(&a);
    free(a.opt.exports);
    free(a.opt.ranks_filter);
    free_job(&a);
    planwire_free(&w);
    free(val);
    client_close(c);
    is_int(head_send_plan(&h, "127.0.0.1:1", hex, &err), -1,
           "no broker: head_send_plan fails");
    ok(err.msg[0] != '\0', "with the reason");
    free_job(&h);
    broker_thread_stop(t);
}

static void test_bad_binding(void)
{
    struct job a;
    struct planwire w = { 0 };
    struct err err = { "" };

    memset(&a, 0, sizeof a);
    w.bind_arg[1] = "elbow";
    is_int(agent_take_settings(&a, &w, &err), -1, "a --bind-to no head sent");
    ok(err.msg[0] != '\0', "refused with the reason");
    free(a.opt.exports);
}

static void test_args_job(void)
{
    struct job h;
    struct strv args = { 0 }, relay = { 0 };
    struct agent_job aj = { 0 };
    char self[PATH_MAX];
    int filter[2] = { 1, 3 }, *nodes;
    sigset_t mask;

    if (head_job(&h, filter) < 0)
        return;
    nodes = head_nodes(&h.plan);
    ok(nodes && nodes[0] == 0 && nodes[1] == 1, "head_nodes: 0..nnodes-1");
    h.opt.no_cgroup = 1;
    is_int(agent_args(&h, &args), 0, "agent_args");
    ok(args.n == 3 && strcmp(args.v[2], "--no-cgroup") == 0,
       "--no-cgroup goes to the agents (their guard starts before the plan)");
    strv_free(&args);
    memset(&args, 0, sizeof args);
    h.opt.no_cgroup = 0;
    is_int(agent_args(&h, &args), 0, "agent_args");
    proc_self_exe(self, sizeof self);
    ok(args.n == 2 && strcmp(args.v[0], self) == 0 &&
       strcmp(args.v[1], "agent") == 0, "\"PATH agent\", this program's path");
    h.opt.remote.ssh_port = 2222;
    sigemptyset(&mask);
    head_fill_job(&h, &aj, &args, &relay, nodes, 2, 5, &mask);
    ok(aj.plan == &h.plan && aj.nodes == nodes && aj.nnodes == 2 &&
       aj.agent_args == args.v && aj.lifeline == 5 && aj.child_mask == &mask,
       "the launch job");
    is_int(aj.fanout, 4, "--fanout");
    is_str(aj.remote_dlrun, "/opt/dlrun", "--remote-dlrun");
    ok(relay.n == 3 && strcmp(relay.v[0], "--connect-timeout=9") == 0 &&
       strcmp(relay.v[1], "--ssh-port=2222") == 0 &&
       strcmp(relay.v[2], "--ssh-user=me") == 0 && aj.relay_opts == relay.v,
       "the relays' ssh options");
    strv_free(&relay);
    h.opt.verbose = 1;
    head_fill_job(&h, &aj, &args, &relay, nodes, 2, 5, &mask);
    ok(relay.n == 4 && strcmp(relay.v[1], "--verbose") == 0,
       "-v: the relays say libssh's warnings (--verbose)");
    strv_free(&args);
    strv_free(&relay);
    free(nodes);
    free_job(&h);
}

int main(void)
{
    test_wire();
    test_bad_binding();
    test_args_job();
    return tap_done();
}
