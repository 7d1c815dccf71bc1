/* t_head_spares.c - --spares on the head's side: a node fault told from a
 * program fault (a lost agent, a killed agent, a rank the kernel ended, an
 * exit code, dlrun told to stop, no --spares), a node excluded and the job
 * planned again on a spare with its one line, no spare left, what the
 * ranks are told (DLRUN_EXCLUDED_NODES) and the line for the next
 * submission; with --nnodes MIN:MAX the job planned again on fewer nodes,
 * and below MIN its end. */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job/head.h"
#include "place/nodeset.h"
#include "util/clock.h"
#include "util/say.h"
#include "where/hostfile.h"
#include "said.h"
#include "tap.h"

/* A head's job on hosts (-H) with spares held back, planned. */
static int job_on(struct job *j, struct nodeset *ns, const char *hosts,
                  int spares)
{
    struct err err = { "" };

    memset(j, 0, sizeof *j);
    j->opt.rdv.master_addr = "127.0.0.1";
    j->opt.rdv.master_port = 29511;
    if (hosts_parse(hosts, &j->alloc, &err) == 0) {
        j->alloc.source = "hosts";
        j->alloc.kind = ALLOC_HOSTS;
        if (nodeset_init(ns, &j->alloc, spares, &err) == 0 &&
            plan_build(&j->alloc, &j->opt.plan, &j->plan, &err) == 0) {
            j->nodeset = ns;
            return 0;
        }
    }
    printf("# %s\n", err.msg);
    return -1;
}

static void job_done(struct job *j)
{
    j->nodeset = NULL;      /* the test's */
    free(j->bind);
    plan_free(&j->plan);
}

static void test_classify(void)
{
    struct sv_rank procs[3] = {
        { .rank = -1 }, { .rank = -2, .status = 137 << 8 }, { .rank = -3 },
    };
    struct supervise sv = { .ranks = procs, .n = 3, .failed = -1 };
    struct head_fault f;
    struct nodeset ns;
    struct job j;

    if (!ok(job_on(&j, &ns, "n1:2,n2:2,n3:2,n4:2", 1) == 0, "a job on 3 of 4"))
        return;
    head_classify(&j, &sv, 2, 10, -1, 0, &f);
    is_int(f.node, 2, "a lost agent: its node");
    is_str(f.reason, "no heartbeat for 10 s (link down?)", "  the reason");
    sv.failed = 1;
    head_classify(&j, &sv, -1, 10, -1, 0, &f);
    is_int(f.node, 1, "an agent ended with 137, no report: its node");
    is_str(f.reason, "its agent ended with code 137 (killed?)", "  the reason");
    head_classify(&j, &sv, -1, 10, 3, SIGKILL, &f);
    is_int(f.node, 1, "  its own rank reported killed: that node");
    is_str(f.reason, "rank 3 was killed by signal 9 (Killed)", "  the rank named");
    head_classify(&j, &sv, -1, 10, 0, 1 << 8, &f);
    is_int(f.node, 1, "  another node's rank exited 1 after: still its node");
    procs[1].status = SIGKILL;
    head_classify(&j, &sv, -1, 10, -1, 0, &f);
    is_int(f.node, 1, "an agent killed by a signal: its node");
    procs[1].status = 3 << 8;
    head_classify(&j, &sv, -1, 10, 2, 3 << 8, &f);
    is_int(f.node, -1, "rank 2 exited 3: the program's fault");
    head_classify(&j, &sv, -1, 10, 4, SIGBUS, &f);
    is_int(f.node, 2, "rank 4 SIGBUS: its node");
    head_classify(&j, &sv, -1, 10, 4, SIGABRT, &f);
    is_int(f.node, -1, "rank 4 SIGABRT (an exception): the program's");
    sv.signal_received = SIGTERM;
    head_classify(&j, &sv, -1, 10, 4, SIGKILL, &f);
    is_int(f.node, -1, "dlrun told to stop: nobody's fault");
    sv.signal_received = 0;
    j.nodeset = NULL;
    head_classify(&j, &sv, 2, 10, -1, 0, &f);
    is_int(f.node, -1, "no --spares: nothing classified");
    j.nodeset = &ns;
    job_done(&j);
    nodeset_free(&ns);
    alloc_free(&j.alloc);
}

/* srun's one step for every agent, killed with 137 as one agent was */
static void test_silent(void)
{
    struct sv_rank step[1] = { { .rank = INT_MIN, .status = 137 << 8 } };
    struct supervise sv = { .ranks = step, .n = 1, .failed = 0 };
    struct head_fault f;
    struct nodeset ns;
    struct job j;

    if (!ok(job_on(&j, &ns, "n1,n2,n3,n4", 1) == 0, "srun: a job on 3 of 4"))
        return;
    head_classify(&j, &sv, -1, 10, -1, 0, &f);
    is_int(f.node, -1, "the step's 137 alone names no node");
    head_classify_silent(&j, &sv, "\1\0\1", -1, &f);
    is_int(f.node, 1, "  n2's agent alone did not say it ended: n2");
    is_str(f.reason, "its agent ended without a word (killed?) and the "
           "agents' step with code 137", "  the reason");
    f.node = -1;
    head_classify_silent(&j, &sv, "\1\0\0", -1, &f);
    is_int(f.node, -1, "two silent: nobody");
    head_classify_silent(&j, &sv, "\1\1\1", -1, &f);
    is_int(f.node, -1, "all said it: nobody");
    head_classify_silent(&j, &sv, "\1\0\1", 2, &f);
    is_int(f.node, -1, "a rank reported a failure: not this way");
    step[0].status = 1 << 8;
    head_classify_silent(&j, &sv, "\1\0\1", -1, &f);
    is_int(f.node, -1, "the step ended with 1: the program's");
    step[0].status = 137 << 8;
    sv.signal_received = SIGTERM;
    head_classify_silent(&j, &sv, "\1\0\1", -1, &f);
    is_int(f.node, -1, "dlrun told to stop: nobody");
    sv.signal_received = 0;
    j.nodeset = NULL;
    head_classify_silent(&j, &sv, "\1\0\1", -1, &f);
    is_int(f.node, -1, "no --spares: nothing");
    j.nodeset = &ns;
    job_done(&j);
    nodeset_free(&ns);
    alloc_free(&j.alloc);
}

static long fake_2000(void *ctx)
{
    (void)ctx;
    return 2000;
}

static void test_replace(struct said *k)
{
    struct head_fault f = { 1, "rank 1 was killed by signal 9 (Killed)",
                            1000, 1500, 1700 };
    struct strv env = { 0 };
    struct nodeset ns;
    struct job j;

    if (!ok(job_on(&j, &ns, "n1,n2,n3,n4", 1) == 0, "a job on 3 of 4"))
        return;
    head_wire_excluded(&j, &env);
    is_str(env.n ? env.v[0] : "", "DLRUN_EXCLUDED_NODES=", "none excluded yet");
    strv_free(&env);
    k->n = 0;
    clock_fake(fake_2000, NULL);
    is_int(head_replace_node(&j, &f, 1, 3), 1, "node n2's fault: replaced");
    clock_fake(NULL, NULL);
    is_str(k->last, "node n2 excluded: rank 1 was killed by signal 9 (Killed); "
           "spare n4 in; restarting 3 ranks, attempt 2 of 4", "  one line");
    is_int(k->n, 1, "  only it");
    is_str(j.plan.nodes[1].host, "n4", "  planned again: n4 is node 1");
    is_int(ns.excl[0].attempt, 1, "  excluded in attempt 1");
    ok(ns.excl[0].rec.fault_ms == 1000 && ns.excl[0].rec.detect_ms == 1500 &&
       ns.excl[0].rec.down_ms == 1700, "  the fault's moments kept");
    ok(ns.excl[0].rec.planned_ms == 2000 && ns.excl[0].rec.up_ms == 0,
       "  planned now; the ranks not up yet");
    head_wire_excluded(&j, &env);
    is_str(env.n ? env.v[0] : "", "DLRUN_EXCLUDED_NODES=n2", "  the ranks see it");
    strv_free(&env);
    is_int(head_replace_node(&j, &f, 2, 3), 1, "n4's fault, no spare left: said");
    is_str(k->last, "node n4 failed: rank 1 was killed by signal 9 (Killed); no "
           "spare left: restarting the job on the same 3 nodes (restart 2 of 3)",
           "  restarts on the same nodes");
    f.node = -1;
    is_int(head_replace_node(&j, &f, 2, 3), 0, "a program fault: the caller's line");
    head_spares_end(&j);
    is_str(k->last, "excluded node: n2; for the next submission: -H n1,n4,n3",
           "the end: the host list without n2");
    job_done(&j);
    nodeset_free(&ns);
    alloc_free(&j.alloc);
}

/* --nnodes 2:3 on 3 nodes of 2 slots, no spare */
static void test_shrink(struct said *k)
{
    struct head_fault f = { 1, "its agent ended with code 137 (killed?)",
                            1000, 1500, 1700 };
    struct err err = { "" };
    struct nodeset ns;
    struct job j;

    if (!ok(job_on(&j, &ns, "n1:2,n2:2,n3:2", 0) == 0 &&
            nodeset_limit(&ns, 2, 3, &err) == 0, "--nnodes 2:3 on 3 nodes"))
        return;
    is_int(head_nodes_exhausted(&j, &f, 1), 0, "3 nodes, MIN 2: not the end");
    k->n = 0;
    is_int(head_replace_node(&j, &f, 1, 3), 1, "n2's fault: the job shrinks");
    is_str(k->last, "node n2 excluded: its agent ended with code 137 "
           "(killed?); no spare left; shrinking to 2 nodes (4 ranks), attempt "
           "2 of 4", "  one line");
    is_int(k->n, 1, "  only it");
    ok(j.plan.nnodes == 2 && j.plan.nranks == 4, "  planned again: 4 ranks");
    is_str(j.plan.nodes[1].host, "n3", "  n3 is node 1");
    ok(ns.excl[0].rec.down_ms == 1700 && ns.excl[0].rec.planned_ms > 0,
       "  the recovery's moments kept");
    f.node = -1;
    is_int(head_nodes_exhausted(&j, &f, 2), 0, "a program fault at MIN: "
           "not the end");
    is_int(head_replace_node(&j, &f, 2, 3), 0, "  nor a shrink");
    f.node = 0;
    k->n = 0;
    is_int(head_nodes_exhausted(&j, &f, 2), EXIT_NODES,
           "n1's fault at MIN: the end");
    is_str(k->last, "node n1 excluded: its agent ended with code 137 "
           "(killed?); no spare left and 1 node remains, fewer than --nnodes "
           "2:3's minimum: the job ends; run it again on more nodes or with "
           "a lower MIN", "  one line");
    is_int(k->n, 1, "  only it");
    is_int((int)ns.nexcl, 2, "  n1 recorded");
    is_int(ns.excl[1].attempt, 2, "  in attempt 2");
    head_spares_end(&j);
    is_str(k->last, "excluded nodes: n2,n1; for the next submission: -H n3:2",
           "the end: the node left");
    job_done(&j);
    nodeset_free(&ns);
    alloc_free(&j.alloc);
}

int main(void)
{
    struct said k = { 0 };

    say_set_sink(said_keep, &k);
    test_classify();
    test_replace(&k);
    test_shrink(&k);
    test_silent();
    return tap_done();
}
