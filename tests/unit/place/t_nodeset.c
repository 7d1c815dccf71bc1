/* t_nodeset.c - spares held back from the plan, a node excluded and a
 * spare taking its place, --nnodes MIN:MAX (the nodes past MAX held as
 * spares, the job shrinking to MIN, below it the end), the next
 * submission's words, which signals are a node's fault. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "place/nodeset.h"
#include "place/plan.h"
#include "tap.h"

/* An allocation of nodes node1..nodeN, slots each. */
static void make_alloc(struct alloc *a, int n, int slots)
{
    struct err err = { "" };
    char name[32];

    memset(a, 0, sizeof *a);
    a->source = "hosts";
    a->kind = ALLOC_HOSTS;
    for (int i = 1; i <= n; i++) {
        snprintf(name, sizeof name, "node%d", i);
        alloc_add_node(a, name, slots, 0, &err);
    }
}

/* The allocation's node names in order, "active|spares|excluded". */
static const char *order(const struct nodeset *ns)
{
    static char buf[256];
    size_t len = 0, cut[2] = { ns->nactive, ns->nactive + ns->nspare };

    buf[0] = '\0';
    for (size_t i = 0; i < ns->total; i++) {
        const char *sep = i == cut[0] || i == cut[1] ? "|" : i ? " " : "";
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s%s", sep,
                                i == cut[0] && cut[0] == cut[1] ? "|" : "",
                                ns->a->nodes[i].name);
    }
    return buf;
}

static void test_init(void)
{
    struct alloc a;
    struct nodeset ns;
    struct err err = { "" };

    make_alloc(&a, 4, 1);
    is_int(nodeset_init(&ns, &a, 4, &err), -1, "4 spares of 4 nodes: refused");
    ok(strstr(err.msg, "has 4 nodes") != NULL, "  names the allocation's nodes");
    is_int(a.nnodes, 4, "  the allocation untouched");
    is_int(nodeset_init(&ns, &a, -1, &err), -1, "-1 spares: refused");
    is_int(nodeset_init(&ns, &a, 1, &err), 0, "1 spare of 4 nodes");
    is_int(a.nnodes, 3, "  the plan sees 3 nodes");
    is_int((int)ns.nspare, 1, "  one spare");
    nodeset_free(&ns);
    is_int(a.nnodes, 4, "free: the allocation has its 4 nodes back");
    alloc_free(&a);
}

static void test_exclude(void)
{
    struct alloc a;
    struct nodeset ns;
    struct err err = { "" };
    const char *spare = NULL;
    char buf[256];

    make_alloc(&a, 5, 2);
    nodeset_init(&ns, &a, 2, &err);
    is_str(order(&ns), "node1 node2 node3|node4 node5", "active, then spares");
    is_int(nodeset_exclude(&ns, "node2", "no heartbeat for 10 s", 1, 5.0,
                           &spare, &err), 1, "node2 excluded: a spare came in");
    is_str(spare, "node4", "  the first spare");
    is_str(order(&ns), "node1 node4 node3|node5|node2",
           "  node4 in node2's place, node2 past the spares");
    is_int(a.nnodes, 3, "  still 3 active nodes");
    is_str(nodeset_excluded_list(&ns, buf, sizeof buf), "node2", "  the list");
    is_str(ns.excl[0].reason, "no heartbeat for 10 s", "  the reason kept");
    is_int(ns.excl[0].attempt, 1, "  the attempt kept");
    is_str(ns.excl[0].spare, "node4", "  the spare that took its place");
    is_int(nodeset_exclude(&ns, "node2", "again", 2, 6.0, &spare, &err), -1,
           "an excluded node cannot be excluded again");
    ok(strstr(err.msg, "node2") != NULL, "  names it");
    is_int(nodeset_exclude(&ns, "node1", "rank 0 killed by signal 9", 2, 7.0,
                           &spare, &err), 1, "node1 excluded");
    is_str(spare, "node5", "  the last spare");
    is_str(ns.excl[1].spare, "node5", "  kept with it");
    is_str(order(&ns), "node5 node4 node3||node1 node2", "  no spare left");
    is_str(nodeset_excluded_list(&ns, buf, sizeof buf), "node2,node1",
           "  both, in order");
    is_str(nodeset_next_submission(&ns, "sbatch --exclude=", buf, sizeof buf),
           "sbatch --exclude=node2,node1", "a scheduler's exclude");
    is_str(nodeset_next_submission(&ns, NULL, buf, sizeof buf),
           "-H node5:2,node4:2,node3:2", "host list: without them");
    is_int(nodeset_exclude(&ns, "node3", "x", 3, 8.0, &spare, &err), 0,
           "no spare left: 0");
    ok(spare == NULL, "  no spare named");
    is_str(order(&ns), "node5 node4 node3||node1 node2", "  nothing changed");
    is_int((int)ns.nexcl, 2, "  not recorded");
    nodeset_free(&ns);
    is_int(a.nnodes, 5, "free: 5 nodes again");
    alloc_free(&a);
}

/* --nnodes 2:3 --spares 1 on 5 nodes: 3 active, node4 (past MAX) and
 * node5 spares; two faults take them, two more shrink to 2 and below. */
static void test_shrink(void)
{
    struct alloc a;
    struct nodeset ns;
    struct plan p;
    struct plan_request req = { .per_node = 3 };
    struct err err = { "" };
    const char *spare = NULL;
    char buf[256];

    make_alloc(&a, 5, 1);
    nodeset_init(&ns, &a, 1, &err);
    is_int(nodeset_limit(&ns, 3, 2, &err), -1, "--nnodes 3:2: refused");
    is_int(nodeset_limit(&ns, 5, 6, &err), -1, "MIN 5 with 4 to run on: refused");
    ok(strstr(err.msg, "has 5 nodes and 1 of them is held as spare") != NULL,
       "  says why");
    is_str(order(&ns), "node1 node2 node3 node4|node5", "  nothing changed");
    is_int(nodeset_limit(&ns, 2, 3, &err), 0, "--nnodes 2:3");
    is_str(order(&ns), "node1 node2 node3|node4 node5",
           "  3 active; node4, past MAX, the first spare");
    is_int(a.nnodes, 3, "  the plan sees 3 nodes");
    ok(!nodeset_exhausted(&ns), "  not exhausted");
    nodeset_exclude(&ns, "node2", "x", 1, 1.0, &spare, &err);
    is_str(spare, "node4", "a fault: node4 in");
    nodeset_exclude(&ns, "node1", "x", 2, 2.0, &spare, &err);
    is_str(spare, "node5", "another: node5 in");
    is_str(order(&ns), "node5 node4 node3||node1 node2", "  no spare left");
    ok(!nodeset_exhausted(&ns), "  3 nodes, MIN 2: not exhausted");
    is_int(nodeset_exclude(&ns, "node4", "y", 3, 3.0, &spare, &err), 0,
           "a third: no spare");
    is_int(nodeset_shrink(&ns, "node4", "agent killed", 3, 3.0, &err), 1,
           "  shrunk: 2 nodes remain");
    is_str(order(&ns), "node5 node3||node4 node1 node2",
           "  node4 out, the others in their order");
    is_int(a.nnodes, 2, "  the plan sees 2 nodes");
    is_str(nodeset_excluded_list(&ns, buf, sizeof buf), "node2,node1,node4",
           "  recorded");
    is_str(ns.excl[2].reason, "agent killed", "  its reason");
    is_int(plan_build(&a, &req, &p, &err), 0, "planned again");
    ok(p.nnodes == 2 && p.nranks == 6, "  6 ranks on 2 nodes");
    is_str(p.nodes[1].host, "node3", "  node3 is node 1");
    plan_free(&p);
    ok(nodeset_exhausted(&ns), "  at MIN: exhausted");
    is_int(nodeset_shrink(&ns, "node4", "z", 4, 4.0, &err), -1,
           "an excluded node: not again");
    is_int(nodeset_shrink(&ns, "node3", "lost", 4, 4.0, &err), 0,
           "below MIN: 0");
    is_str(order(&ns), "node5||node3 node4 node1 node2", "  node3 out all the same");
    is_str(nodeset_next_submission(&ns, NULL, buf, sizeof buf), "-H node5",
           "  the next submission: the one left");
    nodeset_shrink(&ns, "node5", "lost", 5, 5.0, &err);
    is_int(a.nnodes, 0, "the last one out: no node");
    is_str(nodeset_next_submission(&ns, NULL, buf, sizeof buf), "",
           "  no host list to give");
    is_str(nodeset_next_submission(&ns, "--exclude=", buf, sizeof buf),
           "--exclude=node2,node1,node4,node3,node5", "  the exclude still");
    nodeset_free(&ns);
    is_int(a.nnodes, 5, "free: 5 nodes again");
    alloc_free(&a);
}

/* Three spares come in in their order. */
static void test_spare_order(void)
{
    struct alloc a;
    struct nodeset ns;
    struct err err = { "" };
    const char *spare = NULL;

    make_alloc(&a, 5, 1);
    nodeset_init(&ns, &a, 3, &err);
    nodeset_exclude(&ns, "node1", "x", 1, 1.0, &spare, &err);
    is_str(spare, "node3", "the first spare first");
    is_str(order(&ns), "node3 node2|node4 node5|node1", "  the others in order");
    nodeset_exclude(&ns, "node2", "x", 2, 2.0, &spare, &err);
    is_str(spare, "node4", "  then the second");
    nodeset_free(&ns);
    alloc_free(&a);
}

/* --nnodes 2:4 on 3 nodes, no --spares: every node runs, no spare. */
static void test_limit_fits(void)
{
    struct alloc a;
    struct nodeset ns;
    struct err err = { "" };

    make_alloc(&a, 3, 1);
    nodeset_init(&ns, &a, 0, &err);
    is_int(nodeset_limit(&ns, 2, 4, &err), 0, "--nnodes 2:4 on 3 nodes");
    ok(ns.nactive == 3 && ns.nspare == 0 && a.nnodes == 3, "  all 3 run");
    ok(!nodeset_exhausted(&ns), "  may shrink to 2");
    nodeset_free(&ns);
    nodeset_init(&ns, &a, 0, &err);
    ok(!nodeset_exhausted(&ns), "no --nnodes MIN:MAX: never exhausted");
    nodeset_free(&ns);
    alloc_free(&a);
}

/* A spare dropped before it was needed: the next one is taken instead. */
static void test_drop_spare(void)
{
    struct alloc a;
    struct nodeset ns;
    struct err err = { "" };
    const char *spare = NULL;
    char buf[256];

    make_alloc(&a, 6, 1);
    nodeset_init(&ns, &a, 3, &err);
    is_int(nodeset_drop_spare(&ns, "node4", "no heartbeat for 10 s", 1, 3.0,
                              &err), 0, "spare node4 dropped");
    is_str(order(&ns), "node1 node2 node3|node5 node6|node4",
           "  the other spares keep their order, node4 past them");
    is_int((int)ns.nspare, 2, "  2 spares left");
    is_int(a.nnodes, 3, "  still 3 active nodes");
    is_str(nodeset_excluded_list(&ns, buf, sizeof buf), "node4",
           "  listed with the excluded");
    is_str(ns.excl[0].reason, "no heartbeat for 10 s", "  its reason");
    is_int(nodeset_drop_spare(&ns, "node2", "x", 1, 4.0, &err), -1,
           "an active node is not a spare: refused");
    ok(strstr(err.msg, "node2") != NULL, "  names it");
    is_int(nodeset_drop_spare(&ns, "node4", "x", 1, 4.0, &err), -1,
           "dropped twice: refused");
    is_int(nodeset_exclude(&ns, "node1", "killed", 1, 5.0, &spare, &err), 1,
           "node1 excluded");
    is_str(spare, "node5", "  the first spare left came in");
    is_int(nodeset_drop_spare(&ns, "node6", "probe 'program' failed", 2, 6.0,
                              &err), 0, "the last spare dropped");
    is_int((int)ns.nspare, 0, "  none left");
    is_int(nodeset_exclude(&ns, "node2", "killed", 2, 7.0, &spare, &err), 0,
           "  a node fault then finds no spare");
    is_str(nodeset_next_submission(&ns, "sbatch --exclude=", buf, sizeof buf),
           "sbatch --exclude=node4,node1,node6", "every one left out next time");
    nodeset_free(&ns);
    is_int(a.nnodes, 6, "free: 6 nodes again");
    alloc_free(&a);
}

static void test_attempts(void)
{
    struct alloc a;
    struct nodeset ns;
    struct plan p;
    struct plan_request req = { .per_node = 2 };
    struct err err = { "" };
    const char *spare;
    char buf[64];

    make_alloc(&a, 3, 2);
    nodeset_init(&ns, &a, 1, &err);
    is_str(nodeset_next_submission(&ns, "x=", buf, sizeof buf), "",
           "nothing excluded: no words");
    is_int(plan_build(&a, &req, &p, &err), 0, "plan on the active nodes");
    is_int(p.nnodes, 2, "  2 nodes");
    is_int(nodeset_add_attempt(&ns, &p), 0, "attempt 1 recorded");
    plan_free(&p);
    nodeset_exclude(&ns, "node1", "agent killed", 1, 1.0, &spare, &err);
    plan_build(&a, &req, &p, &err);
    is_str(p.nodes[0].host, "node3", "replanned: the spare is node 0");
    nodeset_add_attempt(&ns, &p);
    plan_free(&p);
    is_int((int)ns.natt, 2, "two attempts");
    is_str(ns.att[0].nodes, "node1,node2", "  the first's nodes");
    is_str(ns.att[1].nodes, "node3,node2", "  the second's");
    is_int(ns.att[1].world_size, 4, "  its world size");
    nodeset_free(&ns);
    alloc_free(&a);
}

static void test_signals(void)
{
    ok(nodeset_node_signal(SIGKILL), "SIGKILL (the OOM killer): a node fault");
    ok(nodeset_node_signal(SIGBUS), "SIGBUS: a node fault");
    ok(nodeset_node_signal(SIGSEGV), "SIGSEGV: a node fault");
    ok(!nodeset_node_signal(SIGTERM), "SIGTERM: not");
    ok(!nodeset_node_signal(SIGABRT), "SIGABRT (an exception): not");
    ok(!nodeset_node_signal(3 << 8), "exit 3: not");
    ok(!nodeset_node_signal(0), "exit 0: not");
}

static void test_recovery(void)
{
    struct ns_recovery r = { .fault_ms = 10000, .detect_ms = 12000,
                             .down_ms = 12200, .planned_ms = 12250 };
    long part[4];
    char buf[200];

    is_int((int)nodeset_recovery_parts(&r, part), -1,
           "ranks not running again: no whole yet");
    is_str(nodeset_recovery_line(&r, buf, sizeof buf), "", "  no line");
    is_int((int)part[0], 2000, "  detection known already");
    r.up_ms = 12650;
    is_int((int)nodeset_recovery_parts(&r, part), 2650, "whole: fault to up");
    ok(part[0] == 2000 && part[1] == 200 && part[2] == 50 && part[3] == 400,
       "  detection, teardown, plan, start");
    is_str(nodeset_recovery_line(&r, buf, sizeof buf), "recovered in 2.6 s: "
           "detection 2.0 s, teardown 0.2 s, plan 0.1 s, start 0.4 s",
           "  the line");
    r.fault_ms = 0;         /* only the detection known (a killed agent) */
    is_int((int)nodeset_recovery_parts(&r, part), 650,
           "fault unknown: from the detection");
    is_int((int)part[0], 0, "  detection 0");
    r = (struct ns_recovery){ .fault_ms = 5000, .detect_ms = 5000,
                              .up_ms = 5300 };
    is_int((int)nodeset_recovery_parts(&r, part), 300,
           "moments not recorded count as the one before");
    ok(part[1] == 0 && part[2] == 0 && part[3] == 300, "  all in start");
}

int main(void)
{
    test_init();
    test_exclude();
    test_spare_order();
    test_shrink();
    test_limit_fits();
    test_drop_spare();
    test_attempts();
    test_signals();
    test_recovery();
    return tap_done();
}
