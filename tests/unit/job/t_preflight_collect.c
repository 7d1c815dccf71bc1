/* t_preflight_collect.c - the head's collection in-process, with a
 * broker thread: two agents' reports and link results put as the agents
 * put them, one node with another dlrun; the collector notes the report
 * times (clock offsets), tells the others about an agent that ended,
 * shows one table through the caller's callback with the bad node, and
 * says it (exit 1). */
#include "job/preflight_run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rendezvous/broker_thread.h"
#include "rendezvous/client.h"
#include "rendezvous/token.h"
#include "util/clock.h"
#include "util/say.h"
#include "said.h"
#include "tap.h"

struct shown {
    int calls, nbad, have[2], nlinks[2];
    char why[2][PF_WHY_MAX];
    double offset[2];
};

static void show(void *ctx, const struct pf_table *t)
{
    struct shown *sh = ctx;

    sh->calls++;
    sh->nbad = t->nbad;
    for (int i = 0; i < 2; i++) {
        sh->have[i] = t->nodes[i].have;
        sh->nlinks[i] = t->nodes[i].nlinks;
        sh->offset[i] = t->nodes[i].offset_ms;
        snprintf(sh->why[i], sizeof sh->why[i], "%s", t->nodes[i].why);
    }
}

/* What agent `node` puts: its report, "NODE WALL" under seq, its link. */
static void agent_puts(struct client *c, int node, const char *version,
                       int seq)
{
    struct pf_report r = { .node = node, .gpus = -1, .mem_free_mb = -1 };
    struct pf_link l = { .peer = 1 - node, .rtt_us = 100 + node };
    struct err err = { "" };
    char key[64], val[64], *text = NULL;
    size_t len = 0;

    snprintf(r.version, sizeof r.version, "%s", version);
    pf_encode(&r, &text, &len);
    snprintf(key, sizeof key, "dlrun.pf.rep.%d", node);
    client_put(c, key, text, len, &err);
    free(text);
    pf_links_encode(&l, 1, &text, &len);
    snprintf(key, sizeof key, "dlrun.pf.links.%d", node);
    client_put(c, key, text, len, &err);
    free(text);
    snprintf(key, sizeof key, "dlrun.pf.n.%d", seq);
    snprintf(val, sizeof val, "%d %.6f", node, clock_wall());
    client_put(c, key, val, strlen(val), &err);
}

static int has(struct client *c, const char *key)
{
    struct err err = { "" };
    void *v = NULL;
    size_t len = 0;
    int rc = client_get(c, key, 2000, &v, &len, &err) == CLIENT_OK;

    free(v);
    return rc;
}

int main(void)
{
    uint8_t tok[TOKEN_BYTES];
    char hex[TOKEN_HEX_LEN + 1], addr[64];
    struct err err = { "" };
    struct said s = { 0 };
    struct shown sh = { 0 };
    struct pf_show shower = { show, &sh };
    struct plan_node hosts[2] = { { .host = "node1" }, { .host = "node2" } };
    struct job j = { .plan = { .nnodes = 2, .nodes = hosts },
                     .opt = { .pf_timeout_s = 60 }, .pf_show = &shower };
    struct sv_rank agents[2] = { { .rank = -1, .running = 1 },
                                 { .rank = -2, .running = 1 } };
    struct supervise sv = { .ranks = agents, .n = 2, .failed = -1 };
    struct broker_thread *bt;
    struct pf_collect *pc;
    struct client *c;

    say_set_sink(said_keep, &s);
    is_int(preflight_collect_end(NULL, &j, &sv), EXIT_FAIL,
           "no collector: EXIT_FAIL");
    is_str(s.all, "preflight: no results\n", "said so");
    s.all[0] = '\0';
    token_new(tok, &err);
    token_to_hex(tok, hex);
    bt = broker_thread_start("127.0.0.1", 0, tok, &err);
    if (!ok(bt != NULL, "a broker for the head"))
        return tap_done();
    snprintf(addr, sizeof addr, "127.0.0.1:%d", broker_thread_port(bt));
    c = client_connect(addr, hex, 5000, &err);
    pc = preflight_collect_start(&j, addr, hex, &sv);
    ok(pc != NULL && sv.extra != NULL, "collecting, in sv's periodic hook");
    agent_puts(c, 0, DLRUN_VERSION, 1);
    agent_puts(c, 1, "0.0.9", 2);
    /* node2's agent ended: its peers stop waiting for it */
    agents[1].running = 0;
    sv.extra(sv.extra_ctx, 0);
    ok(has(c, "dlrun.pf.done.1") && has(c, "dlrun.pf.addr.1"),
       "an agent that ended: its done and (empty) address put for it");
    agents[0].running = 0;
    usleep(300000);             /* the collector's thread reads seq 1, 2 */
    is_int(preflight_collect_end(pc, &j, &sv), EXIT_FAIL,
           "one bad node: EXIT_FAIL");
    is_int(sh.calls, 1, "the table shown once");
    is_int(sh.nbad, 1, "with one bad node");
    ok(sh.have[0] && sh.have[1] && sh.nlinks[0] == 1 && sh.nlinks[1] == 1,
       "both reports and their links read");
    ok(isfinite(sh.offset[0]) && fabs(sh.offset[0]) < 1000 &&
       isfinite(sh.offset[1]), "the clock offsets noted as the reports came");
    is_str(sh.why[0], "", "node1 passes");
    is_str(sh.why[1], "dlrun 0.0.9 there, " DLRUN_VERSION " here",
           "node2: another dlrun");
    is_str(s.all, "preflight: node2: dlrun 0.0.9 there, " DLRUN_VERSION
           " here\npreflight failed on 1 of 2 nodes: node2\n",
           "the bad node said after the table, and the verdict");
    client_close(c);
    broker_thread_stop(bt);
    return tap_done();
}
