/* t_head_reserve.c - --spares: the spares' agents held in reserve.
 *
 * - One look at a spare (head_spare_check): alive while its heartbeat
 *   moves, dropped once it stops for the timeout, or when its process
 *   ended, or when its report fails a probe (judged once).
 * - The reserve in this process: a real broker, a fake launcher whose
 *   "agent" is a sleep; its own start per spare with --spare-agent and
 *   its node past the plan's, its name in the broker, its process idle;
 *   a bad report put as the agent would: one line, the spare dropped to
 *   the excluded nodes, its agent ended. */
#include "job/head.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "job/preflight_judge.h"
#include "observe/preflight.h"
#include "place/nodeset.h"
#include "rendezvous/broker_thread.h"
#include "rendezvous/client.h"
#include "run/proc.h"
#include "util/say.h"
#include "where/hostfile.h"
#include "said.h"
#include "tap.h"

static void good_report(struct pf_node *nd)
{
    memset(nd, 0, sizeof *nd);
    nd->have = 1;
    snprintf(nd->r.version, sizeof nd->r.version, "%s", DLRUN_VERSION);
    nd->r.gpus = -1;
    nd->offset_ms = NAN;
}

static void test_check(void)
{
    struct head_spare_watch w = { 0 };
    struct pf_node nd;
    char why[300] = "";

    is_int(head_spare_check(&w, 1000, 1, 0, 0, NULL, 10000, why, sizeof why),
           0, "no beat yet, no report: held");
    is_int(head_spare_check(&w, 2000, 1, 0, 1, NULL, 10000, why, sizeof why),
           0, "its first beat: held");
    is_int(head_spare_check(&w, 11000, 1, 0, 1, NULL, 10000, why, sizeof why),
           0, "  silent for 9 s: held");
    is_int(head_spare_check(&w, 12500, 1, 0, 1, NULL, 10000, why, sizeof why),
           1, "  silent for 10.5 s: dropped");
    is_str(why, "no heartbeat for 10 s", "  why");
    w = (struct head_spare_watch){ 0 };
    is_int(head_spare_check(&w, 1000, 1, 0, 3, NULL, 10000, why, sizeof why),
           0, "beating");
    is_int(head_spare_check(&w, 20000, 1, 0, 4, NULL, 10000, why, sizeof why),
           0, "  it moved again: held");
    is_int(head_spare_check(&w, 20100, 0, 137, 4, NULL, 10000, why,
                            sizeof why), 1, "its process ended: dropped");
    is_str(why, "its agent ended with code 137 (killed?)", "  why");
    head_spare_check(&w, 20100, 0, 0, 4, NULL, 10000, why, sizeof why);
    is_str(why, "its agent ended with code 0", "  with 0: no guess");
    w = (struct head_spare_watch){ 0 };
    good_report(&nd);
    is_int(head_spare_check(&w, 1000, 1, 0, 1, &nd, 10000, why, sizeof why),
           0, "a good report: held");
    ok(w.judged, "  judged");
    good_report(&nd);
    snprintf(nd.r.prog_err, sizeof nd.r.prog_err, "train.py: not found or "
             "not executable");
    is_int(head_spare_check(&w, 1500, 1, 0, 2, &nd, 10000, why, sizeof why),
           0, "  a report is judged once");
    w = (struct head_spare_watch){ 0 };
    is_int(head_spare_check(&w, 1500, 1, 0, 2, &nd, 10000, why, sizeof why),
           1, "a report whose program is missing: dropped");
    is_str(why, "probe 'program' failed: train.py: not found or not "
           "executable", "  the probe named");
}

/* The fake launcher: each start one sleep, its command line kept. */
static char started[512];

static int fake_start(const struct launch_req *req, struct launched *run,
                      struct err *err)
{
    const struct agent_job *aj = req->agents;
    char *argv[] = { "sleep", "60", NULL };
    sigset_t none;
    struct proc_spec spec = { .argv = argv, .out_fd = -1, .err_fd = -1,
                              .in_fd = -1, .mask = &none };
    size_t len = strlen(started);

    sigemptyset(&none);

    len += (size_t)snprintf(started + len, sizeof started - len, "%s:",
                            aj->plan->nodes[aj->nodes[0]].host);
    for (char **a = aj->agent_args; *a && len < sizeof started; a++)
        len += (size_t)snprintf(started + len, sizeof started - len, " %s",
                                *a);
    if (proc_spawn(&spec, &run->procs[0].pid, &run->exec_errno, err) < 0)
        return -1;
    run->procs[0].rank = -1 - aj->nodes[0];
    run->procs[0].running = 1;
    run->n = 1;
    return 0;
}

static void fake_destroy(struct launched *run)
{
    launcher_end(run, SIGKILL, 0);
}

static const struct launcher fake = {
    .name = "fake", .caps = LAUNCHER_AGENTS, .start = fake_start,
    .destroy = fake_destroy,
};

/* A bad report of node, put as its agent would. */
static void put_bad_report(struct client *c, int node)
{
    struct pf_report r = { .node = node, .gpus = -1 };
    struct err err = { "" };
    char key[64], *text = NULL;
    size_t len = 0;

    snprintf(r.version, sizeof r.version, "%s", DLRUN_VERSION);
    snprintf(r.import_mod, sizeof r.import_mod, "torch");
    snprintf(r.import_err, sizeof r.import_err, "ModuleNotFoundError: No "
             "module named 'torch'");
    snprintf(key, sizeof key, "dlrun.spare.rep.%d", node);
    if (pf_encode(&r, &text, &len) == 0)
        client_put(c, key, text, len, &err);
    free(text);
}

static void test_reserve(void)
{
    uint8_t tok[TOKEN_BYTES] = { 1, 2, 3 };
    char hex[TOKEN_HEX_LEN + 1], addr[64], *args[] = { "dlrun", "agent", NULL };
    struct err err = { "" };
    struct broker_thread *bt = broker_thread_start("127.0.0.1", 0, tok, &err);
    struct said s = { 0 };
    struct sv_rank procs[4] = { { 0 } };
    struct supervise sv = { .ranks = procs, .n = 3, .failed = -1,
                            .extra_fd = -1 };
    struct agent_job aj = { .agent_args = args };
    struct head_reserve *r;
    struct client *c = NULL;
    struct nodeset ns;
    struct job j = { 0 };
    void *v = NULL;
    size_t len = 0;

    token_to_hex(tok, hex);
    snprintf(addr, sizeof addr, "127.0.0.1:%d", bt ? broker_thread_port(bt) : 0);
    if (!ok(bt && hosts_parse("n1,n2,n3,n4", &j.alloc, &err) == 0 &&
            nodeset_init(&ns, &j.alloc, 1, &err) == 0 &&
            plan_build(&j.alloc, &j.opt.plan, &j.plan, &err) == 0,
            "a job on 3 of 4 nodes, n4 in reserve")) {
        printf("# %s\n", err.msg);
        return;
    }
    j.nodeset = &ns;
    j.opt.remote.heartbeat_s = 10;
    say_set_sink(said_keep, &s);
    r = head_reserve_start(&j, &fake, &aj, addr, hex, &sv, &procs[3]);
    ok(r != NULL, "the reserve started");
    is_str(started, "n4: dlrun agent --spare-agent --node=3",
           "  n4's agent on its own, node 3, past the plan's");
    is_int(sv.n, 4, "  its process supervised");
    ok(procs[3].idle && procs[3].running, "  idle, running");
    c = client_connect(addr, hex, 2000, &err);
    ok(c && client_get(c, "dlrun.spare.host.3", 0, &v, &len, &err) ==
       CLIENT_OK && !strcmp(v, "n4"), "  its name in the broker");
    free(v);
    ok(sv.extra && sv.extra(sv.extra_ctx, 0) == 500 && s.n == 0,
       "a look: nothing yet, the next in 500 ms");
    put_bad_report(c, 3);
    sv.extra(sv.extra_ctx, 0);
    is_str(s.all, "spare n4 dropped: probe 'python imports' failed: import "
           "torch: ModuleNotFoundError: No module named 'torch'; 0 spares "
           "left\n", "its bad report: one line");
    is_int((int)ns.nspare, 0, "  the reserve is empty");
    is_str(ns.nexcl ? ns.excl[0].host : "", "n4", "  n4 with the excluded");
    waitpid(procs[3].pid, &procs[3].status, 0);
    procs[3].running = 0;
    ok(WIFSIGNALED(procs[3].status) && WTERMSIG(procs[3].status) == SIGTERM,
       "  its agent ended (SIGTERM)");
    s.n = 0;
    sv.extra(sv.extra_ctx, 0);
    is_int(s.n, 0, "  dropped once");
    head_reserve_end(r);
    say_set_sink(NULL, NULL);
    client_close(c);
    broker_thread_stop(bt);
    plan_free(&j.plan);
    nodeset_free(&ns);
    alloc_free(&j.alloc);
}

int main(void)
{
    struct job j = { 0 };

    alarm(120);         /* a hang guard */
    test_check();
    ok(head_reserve_start(&j, &fake, NULL, "", "", NULL, NULL) == NULL,
       "no --spares: no reserve");
    test_reserve();
    return tap_done();
}
