/* t_agent.c - dlrun agent's side in this process, against a real broker
 * that stands for the head's: no broker or a bad plan wire (one line,
 * exit 1), no program, a working directory it cannot enter, a plan with
 * no rank on this node, finding its node by the scheduler's name; and
 * what it tells the head: the failed rank with its root cause, and with
 * --summary how every rank ended. */
#include "job/agent.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "job/head.h"
#include "job/preflight_run.h"
#include "place/envout.h"
#include "rendezvous/broker_thread.h"
#include "rendezvous/client.h"
#include "rendezvous/token.h"
#include "run/failwire.h"
#include "run/supervise.h"
#include "tap.h"
#include "util/say.h"

/* The ranks' launch (lib/job/launch.c; the ranks' side is t_launch's): a
 * stand-in that records which node it was asked for.  Its failure line
 * too, so that nothing here links launch.c, whose strong run_launch would
 * win over these weak ones. */
static int launched_node = -2;

__attribute__((weak)) void job_report_failure(int rank, const char *host,
                                              int pid, int status,
                                              const char *what_stopped)
{
    (void)rank, (void)host, (void)pid, (void)status, (void)what_stopped;
}

__attribute__((weak)) int run_launch(struct job *j, char **prog)
{
    (void)prog;
    launched_node = j->plan.self_node;
    return 0;
}

static char said[1024];

static void keep(void *ctx, const char *line)
{
    (void)ctx;
    snprintf(said, sizeof said, "%s", line);
}

/* A head's job: two nodes of two ranks. */
static int head_job(struct job *j)
{
    struct plan_request req = { 0 };
    struct err err = { "" };

    memset(j, 0, sizeof *j);
    j->opt.mpi = MPI_NONE;
    j->opt.remote.heartbeat_s = 10;
    j->opt.rdv.master_addr = "127.0.0.1";   /* node-a resolves nowhere */
    j->opt.rdv.master_port = 29500;
    if (alloc_add_node(&j->alloc, "node-a", 2, 0, &err) < 0 ||
        alloc_add_node(&j->alloc, "node-b", 2, 0, &err) < 0 ||
        plan_build(&j->alloc, &req, &j->plan, &err) < 0)
        return -1;
    return 0;
}

/* dlrun agent with options as cmd_agent parses them; argc words, the
 * program at prog. */
static int agent(int node, int argc, int prog)
{
    static char *argv[] = { "agent", "--", "true", NULL };
    struct job j = { .agent = 1 };

    j.opt.node = node;
    j.opt.prog = prog;
    said[0] = '\0';
    launched_node = -2;
    return agent_run(&j, argc, argv);
}

static void test_no_plan(const char *addr)
{
    is_int(agent(0, 3, 2), EXIT_FAIL, "no broker: exit 1");
    ok(strncmp(said, "agent: cannot get the head's plan (dlrun.plan) from "
               "its broker: ", 61) == 0, "  named");
    setenv("DLRUN_BROKER", addr, 1);
}

static void test_bad_plan(struct client *c)
{
    struct err err = { "" };

    client_put(c, HEAD_PLAN_KEY, "not a plan", 10, &err);
    is_int(agent(0, 3, 2), EXIT_FAIL, "a bad plan wire: exit 1");
    ok(strncmp(said, "agent: the head's plan: ", 24) == 0, "  named");
}

/* The head's --wdir (the head's plan h, sent to its broker at addr). */
static void test_wdir(struct job *h, const char *addr, const char *tok)
{
    struct err err = { "" };
    char cwd[4096];

    h->opt.wdir = "/nonexistent-t-agent";
    head_send_plan(h, addr, tok, &err);
    is_int(agent(0, 3, 2), EXIT_USAGE,
           "a working directory it cannot enter: exit 2");
    is_str(said, "cannot enter the working directory /nonexistent-t-agent "
           "on this node: No such file or directory (pass --wdir)", "  named");
    h->opt.wdir = getcwd(cwd, sizeof cwd);
    ok(head_send_plan(h, addr, tok, &err) == 0, "the head's plan");
    h->opt.wdir = NULL;
}

static void test_runs(void)
{
    is_int(agent(0, 2, 2), EXIT_USAGE, "no program: exit 2");
    is_str(said, "agent: no program", "  named");
    is_int(agent(5, 3, 2), 0, "a plan with no rank on this node: 0");
    is_int(launched_node, -2, "  and nothing started");
    is_int(agent(1, 3, 2), 0, "--node 1: runs");
    is_int(launched_node, 1, "  node 1's ranks");
    setenv("SLURMD_NODENAME", "node-b", 1);
    is_int(agent(-1, 3, 2), 0, "no --node under Slurm: runs");
    is_int(launched_node, 1, "  the node Slurm names");
    setenv("SLURMD_NODENAME", "node-x", 1);
    is_int(agent(-1, 3, 2), 0, "a node Slurm names outside the plan");
    is_int(launched_node, -2, "  starts nothing");
    unsetenv("SLURMD_NODENAME");
}

/* Rank 3 of node 1 failed with code 5; its error file says why. */
static void test_report(struct client *c, const char *dir)
{
    struct job j;
    struct sv_rank ranks[2] = { { .rank = 2, .pid = 100, .status = 0 },
                                { .rank = 3, .pid = 101, .status = 5 << 8 } };
    struct supervise sv = { .ranks = ranks, .n = 2, .failed = 1 };
    struct fw_failure f = { 0 };
    struct err err = { "" };
    char path[4096], *val = NULL;
    size_t len = 0;
    FILE *fp;

    if (head_job(&j) < 0)
        return;
    j.plan.self_node = 1;
    j.errdir = (char *)dir;
    envout_error_file(dir, 0, 3, path, sizeof path);
    if ((fp = fopen(path, "w"))) {
        fputs("{\"message\": \"ValueError: bad batch\"}", fp);
        fclose(fp);
    }
    agent_report_failure(&j, &sv);
    ok(fw_failure_first(c, 4, &f, NULL, NULL) == 0 && f.rank == 3 &&
       f.status == 5 << 8 && f.pid == 101, "the failed rank, for the head");
    ok(client_get(c, "dlrun.cause.3", 0, (void **)&val, &len, &err) == 0 &&
       strcmp(val, "ValueError: bad batch") == 0, "  with its root cause");
    free(val);
    unlink(path);
    ranks[1].rank = -1 - 1;         /* an agent below this one failed */
    client_put(c, "dlrun.failseq", "0", 1, &err);
    agent_report_failure(&j, &sv);
    ok(fw_failure_first(c, 4, &f, NULL, NULL) < 0, "an agent below: nothing");
    agent_report_ranks(&j, &sv);
    ok(client_get(c, "dlrun.ranks.1", 0, (void **)&val, &len, &err) != 0,
       "no --summary: no rank lines");
    free(val);
    j.opt.summary = "s.json";
    ranks[1].rank = 3;
    agent_report_ranks(&j, &sv);
    val = NULL;
    ok(client_get(c, "dlrun.ranks.1", 0, (void **)&val, &len, &err) == 0 &&
       strstr(val, "2 100 0 ") && strstr(val, "3 101 1280 "),
       "--summary: how each rank ended");
    free(val);
    plan_free(&j.plan);
    alloc_free(&j.alloc);
}

int main(void)
{
    uint8_t tok[TOKEN_BYTES];
    char hex[TOKEN_HEX_LEN + 1], addr[64], dir[] = "/tmp/t_agent.XXXXXX";
    struct err err = { "" };
    struct broker_thread *t;
    struct client *c = NULL;
    struct job h;

    say_set_sink(keep, NULL);
    token_new(tok, &err);
    token_to_hex(tok, hex);
    t = broker_thread_start("127.0.0.1", 0, tok, &err);
    snprintf(addr, sizeof addr, "127.0.0.1:%d", t ? broker_thread_port(t) : 0);
    unsetenv("DLRUN_BROKER");
    unsetenv("SLURMD_NODENAME");
    setenv("DLRUN_TOKEN", hex, 1);
    setenv("DLRUN_NO_RELAY", "1", 1);   /* the ranks talk to the head */
    test_no_plan(addr);
    c = client_connect(addr, hex, 5000, &err);
    if (!ok(t && c && head_job(&h) == 0, "a broker for the head"))
        return tap_done();
    test_bad_plan(c);
    test_wdir(&h, addr, hex);
    test_runs();
    if (mkdtemp(dir))
        test_report(c, dir);
    rmdir(dir);
    plan_free(&h.plan);
    alloc_free(&h.alloc);
    client_close(c);
    broker_thread_stop(t);
    return tap_done();
}
