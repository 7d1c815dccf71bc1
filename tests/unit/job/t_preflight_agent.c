/* t_preflight_agent.c - `dlrun agent --preflight` in-process against a
 * broker thread: node 0 of two puts its echo address, its report (this
 * machine's), "NODE WALL" under the next sequence number, and its link to
 * node 1, whose agent ended (the head put an empty address and its done
 * for it): the link failed with why, and the agent is done. */
#include "job/preflight_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rendezvous/broker_thread.h"
#include "rendezvous/client.h"
#include "rendezvous/token.h"
#include "util/say.h"
#include "tap.h"

static void drop(void *ctx, const char *line)
{
    (void)ctx;
    (void)line;
}

/* key's value (caller frees), or NULL. */
static char *get(struct client *c, const char *key, size_t *len)
{
    struct err err = { "" };
    void *v = NULL;
    char *s;

    if (client_get(c, key, 0, &v, len, &err) != CLIENT_OK)
        return NULL;
    s = realloc(v, *len + 1);
    if (s)
        s[*len] = '\0';
    return s;
}

int main(void)
{
    uint8_t tok[TOKEN_BYTES];
    char hex[TOKEN_HEX_LEN + 1], addr[64], *v;
    struct err err = { "" };
    struct plan_node hosts[2] = { { .host = "node1" }, { .host = "node2" } };
    struct job j = { .plan = { .nnodes = 2, .nodes = hosts, .self_node = 0 },
                     .opt = { .pf_timeout_s = 5 } };
    struct pf_report r;
    struct pf_link l[2];
    struct broker_thread *bt;
    struct client *c;
    size_t len = 0;
    int n = 0, node = -1;
    double wall = 0;

    say_set_sink(drop, NULL);
    j.opt.remote.connect_timeout_s = 5;
    token_new(tok, &err);
    token_to_hex(tok, hex);
    bt = broker_thread_start("127.0.0.1", 0, tok, &err);
    if (!ok(bt != NULL, "a broker for the head"))
        return tap_done();
    snprintf(addr, sizeof addr, "127.0.0.1:%d", broker_thread_port(bt));
    setenv("DLRUN_BROKER", addr, 1);
    setenv("DLRUN_TOKEN", hex, 1);
    c = client_connect(addr, hex, 5000, &err);
    client_put(c, "dlrun.pf.addr.1", "", 0, &err);
    client_put(c, "dlrun.pf.done.1", "1", 1, &err);
    is_int(agent_preflight(&j, NULL), EXIT_OK, "the agent is done: exit 0");
    v = get(c, "dlrun.pf.addr.0", &len);
    ok(v && strncmp(v, "127.0.0.1:", 10) == 0,
       "its echo address, on the route to the broker");
    free(v);
    v = get(c, "dlrun.pf.rep.0", &len);
    ok(v && pf_decode(v, len, &r, &err) == 0 && r.node == 0 &&
       strcmp(r.version, DLRUN_VERSION) == 0 && !r.prog[0],
       "its report: node 0, this dlrun, no program asked");
    free(v);
    v = get(c, "dlrun.pf.n.1", &len);
    ok(v && sscanf(v, "%d %lf", &node, &wall) == 2 && node == 0 && wall > 0,
       "\"NODE WALL\" under the first sequence number");
    free(v);
    v = get(c, "dlrun.pf.links.0", &len);
    ok(v && pf_links_decode(v, len, l, 2, 2, &n, &err) == 0 && n == 1 &&
       l[0].peer == 1 && l[0].rtt_us < 0 &&
       strcmp(l[0].err, "it has no address to listen on") == 0,
       "its ring neighbour's link: failed, with why");
    free(v);
    v = get(c, "dlrun.pf.done.0", &len);
    ok(v && strcmp(v, "1") == 0, "and its done");
    free(v);
    unsetenv("DLRUN_BROKER");
    is_int(agent_preflight(&j, NULL), EXIT_FAIL, "no broker: EXIT_FAIL");
    client_close(c);
    broker_thread_stop(bt);
    return tap_done();
}
