/* t_stall_head.c - the head's stall verdict across nodes, in-process with
 * a broker thread and a fake clock: every node quiet and no progress for
 * the window puts dlrun.stall; the agents' frozen keys let them dump,
 * their where keys let them end; the last line groups every node's ranks
 * by where they waited and counts the lines that are not "RANK WHERE". */
#include "job/stall_watch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job/job.h"
#include "rendezvous/broker_thread.h"
#include "rendezvous/client.h"
#include "rendezvous/token.h"
#include "util/clock.h"
#include "util/say.h"
#include "said.h"
#include "tap.h"

static long fake_now(void *ctx)
{
    return *(long *)ctx;
}

static int has(struct client *c, const char *key)
{
    struct err err = { "" };
    void *v = NULL;
    size_t len = 0;
    int rc = client_get(c, key, 0, &v, &len, &err) == CLIENT_OK;

    free(v);
    return rc;
}

static void put(struct client *c, const char *key, const char *val)
{
    struct err err = { "" };

    client_put(c, key, val, strlen(val), &err);
}

/* sv's hook every half second of fake time until `until`. */
static void drive(struct supervise *sv, long *now, long until)
{
    for (; *now <= until; *now += 500)
        sv->extra(sv->extra_ctx, 0);
}

int main(void)
{
    uint8_t tok[TOKEN_BYTES];
    char hex[TOKEN_HEX_LEN + 1], addr[64];
    struct err err = { "" };
    struct said s = { 0 };
    long now = 50000;
    struct plan_node nodes[2] = { { .host = "node1" }, { .host = "node2" } };
    int rank_node[3] = { 0, 0, 1 };
    struct sv_rank agents[2] = { { .rank = -1, .running = 1 },
                                 { .rank = -2, .running = 1 } };
    struct supervise sv = { .ranks = agents, .n = 2, .failed = -1,
                            .extra_fd = -1 };
    struct job j = { .plan = { .nranks = 3, .nodes = nodes, .nnodes = 2,
                               .rank_node = rank_node } };
    struct broker_thread *bt;
    struct head_stall *hs;
    struct client *c;

    ok(head_stall_create(&j, "x", "y") == NULL, "off: no watch");
    head_stall_free(NULL);
    is_int(head_stall_finish(NULL), 0, "NULL: no stall");
    token_new(tok, &err);
    token_to_hex(tok, hex);
    bt = broker_thread_start("127.0.0.1", 0, tok, &err);
    if (!ok(bt != NULL, "a broker for the head"))
        return tap_done();
    snprintf(addr, sizeof addr, "127.0.0.1:%d", broker_thread_port(bt));
    c = client_connect(addr, hex, 5000, &err);
    say_set_sink(said_keep, &s);
    clock_fake(fake_now, &now);
    j.opt.stall_timeout_ms = 10000;
    hs = head_stall_create(&j, addr, hex);
    ok(hs != NULL, "on: a watch");
    head_stall_watch(hs, &sv);
    put(c, "dlrun.quiet.0", "1");
    drive(&sv, &now, 70000);
    ok(!has(c, "dlrun.stall"), "one node quiet for 20 s: no stall");
    put(c, "dlrun.quiet.1", "1");
    put(c, "dlrun.progress", "7");
    drive(&sv, &now, 79500);
    ok(!has(c, "dlrun.stall"), "all quiet, but progress 9.5 s ago: no stall");
    drive(&sv, &now, 80500);
    ok(has(c, "dlrun.stall"), "all quiet, no progress for 10 s: dlrun.stall");
    ok(!has(c, "dlrun.dump"), "no dump before the nodes froze");
    put(c, "dlrun.frozen.0", "1");
    put(c, "dlrun.frozen.1", "1");
    drive(&sv, &now, 81000);
    ok(has(c, "dlrun.dump"), "every node frozen: dlrun.dump");
    ok(!has(c, "dlrun.reported"), "not ended before the nodes told where");
    put(c, "dlrun.where.0", "0 f (a.py:3)\n1 g (b.py:9)\n");
    put(c, "dlrun.where.1", "2 g (b.py:9)\nnot a rank\n");
    drive(&sv, &now, 81500);
    ok(has(c, "dlrun.reported"), "every node told: dlrun.reported");
    is_int(s.n, 0, "nothing said while it ran");
    is_int(head_stall_finish(hs), EXIT_STALL, "the outcome is EXIT_STALL");
    is_str(s.all, "ignoring 1 line of the agents' stall reports that are "
           "not \"RANK WHERE\"\nstalled 10 s: rank 0 (node1) in f (a.py:3); "
           "ranks 1 (node1), 2 (node2) in g (b.py:9)\n",
           "the bad line counted, the ranks grouped by where they waited");
    head_stall_free(hs);
    clock_fake(NULL, NULL);
    client_close(c);
    broker_thread_stop(bt);
    return tap_done();
}
