/* preflight_agent.c - `dlrun agent --preflight`: what this node offers,
 * into the broker, and the TCP round trips to the nodes it checks (its
 * ring neighbour, or every node with --all-pairs) on the interface the
 * job would use.
 *
 * Keys: dlrun.pf.addr.NODE (its echo listener), dlrun.pf.rep.NODE (the
 * report), dlrun.pf.n.SEQ ("NODE WALL": when it reported, for the head's
 * clock offset), dlrun.pf.links.NODE (the round trips), dlrun.pf.done.NODE
 * (its links are timed: the nodes that time theirs to it may stop; the
 * head puts it too, and an empty address, for an agent that ended). */
#include "job/preflight_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "observe/preflight.h"
#include "rendezvous/client.h"
#include "rendezvous/token.h"
#include "run/watch.h"
#include "util/clock.h"
#include "util/net.h"
#include "util/say.h"

struct echo {
    int lfd;
    struct watch *w;            /* echo_step's, or NULL */
    char key[TOKEN_HEX_LEN + 1];    /* what a prober sends first */
};

/* The echo server's watcher (lib/run/watch.h): serve until echo_stop. */
static int echo_step(void *arg, int wake)
{
    struct echo *e = arg;

    pf_echo_serve(e->lfd, wake, e->key);
    return 1;
}

/* The address this node's links use: --iface's, else the one that
 * reaches the head. */
static int job_ip(const struct job *j, char *ip, size_t len, struct err *err)
{
    const char *b = getenv("DLRUN_BROKER");
    char host[256];
    int port;

    if (j->opt.rdv.iface)
        return net_iface_addr(j->opt.rdv.iface, ip, len, err);
    if (!b || client_parse_addr(b, host, sizeof host, &port, err) < 0)
        return err_set(err, "no broker address to route to");
    return net_route_addr(host, ip, len, err);
}

static void echo_start(const struct job *j, struct echo *e,
                       struct pf_report *r, char *why)
{
    struct err err = { "" };
    uint8_t tok[TOKEN_BYTES];
    char ip[200];

    if (token_new(tok, &err) == 0)
        token_to_hex(tok, e->key);
    if (!e->key[0] || job_ip(j, ip, sizeof ip, &err) < 0 ||
        (e->lfd = pf_listen(ip, r->addr, PF_STR, &err)) < 0 ||
        !(e->w = watch_start(echo_step, NULL, e, &err)))
        snprintf(why, PF_STR, "%s", err.msg);
}

static void echo_stop(struct echo *e)
{
    watch_stop(e->w);
    if (e->lfd >= 0)
        close(e->lfd);
}

/* Put the report, then "NODE WALL" under the next sequence number. */
static int put_report(struct client *c, const struct pf_report *r,
                      struct err *err)
{
    char key[64], val[64], *text = NULL;
    size_t len = 0;
    int64_t seq = 0;
    int rc;

    if (pf_encode(r, &text, &len) < 0)
        return err_set(err, "out of memory");
    snprintf(key, sizeof key, "dlrun.pf.rep.%d", r->node);
    rc = client_put(c, key, text, len, err);
    free(text);
    if (rc != CLIENT_OK || client_add(c, "dlrun.pf.seq", 1, &seq, err) !=
        CLIENT_OK)
        return -1;
    snprintf(key, sizeof key, "dlrun.pf.n.%lld", (long long)seq);
    snprintf(val, sizeof val, "%d %.6f", r->node, clock_wall());
    return client_put(c, key, val, strlen(val), err) == CLIENT_OK ? 0 : -1;
}

/* Time the link to peer: its address and key ("ADDR KEY") from the
 * broker, then round trips. */
static void time_link(struct client *c, int peer, long deadline,
                      struct pf_link *l)
{
    struct err err = { "" };
    char key[64];
    char *addr = NULL, *peer_key = NULL;
    size_t len = 0;
    long left = deadline - clock_ms();

    l->peer = peer;
    l->rtt_us = -1;
    snprintf(key, sizeof key, "dlrun.pf.addr.%d", peer);
    if (client_get(c, key, left > 0 ? (int)left : 0, (void **)&addr, &len,
                   &err) != CLIENT_OK)
        snprintf(l->err, PF_STR, "no address from it (its agent did not "
                 "report)");
    else if (!*addr || !(peer_key = strchr(addr, ' ')))
        snprintf(l->err, PF_STR, "it has no address to listen on");
    else if ((*peer_key++ = '\0'),
             pf_ping(addr, peer_key, 5000, &l->rtt_us, &err) < 0)
        snprintf(l->err, PF_STR, "%s", err.msg);
    free(addr);
}

/* The nodes this one times: the next in the ring, or all others. */
static int targets(const struct job *j, int self, int i)
{
    int n = j->plan.nnodes;

    if (!j->opt.pf_all_pairs)
        return i == 0 && n > 1 ? (self + 1) % n : -1;
    return i < n - 1 ? (self + 1 + i) % n : -1;
}

/* Keep answering until every node that times a link to this one is done
 * (its links are in), or the deadline. */
static void wait_for_callers(struct client *c, const struct job *j, int self,
                             long deadline)
{
    int n = j->plan.nnodes;

    for (int i = 1; i < n; i++) {
        int from = (self - i + n) % n;
        char key[64];
        void *v = NULL;
        size_t len = 0;
        struct err err = { "" };
        long left = deadline - clock_ms();
        if (!j->opt.pf_all_pairs && i > 1)
            break;
        snprintf(key, sizeof key, "dlrun.pf.done.%d", from);
        client_get(c, key, left > 0 ? (int)left : 0, &v, &len, &err);
        free(v);
    }
}

static int put_links(struct client *c, const struct job *j, int self,
                     long deadline, struct err *err)
{
    struct pf_link *l = calloc((size_t)j->plan.nnodes, sizeof *l);
    char key[64], *text = NULL;
    size_t len = 0;
    int n = 0, rc = -1;

    if (!l)
        return err_set(err, "out of memory");
    for (int p; (p = targets(j, self, n)) >= 0 && n < PF_MAX_LINKS; n++)
        time_link(c, p, deadline, &l[n]);
    snprintf(key, sizeof key, "dlrun.pf.links.%d", self);
    if (pf_links_encode(l, n, &text, &len) == 0 &&
        client_put(c, key, text, len, err) == CLIENT_OK) {
        snprintf(key, sizeof key, "dlrun.pf.done.%d", self);
        rc = client_put(c, key, "1", 1, err) == CLIENT_OK ? 0 : -1;
    }
    free(text);
    free(l);
    return rc;
}

int agent_preflight(struct job *j, char **prog)
{
    struct pf_report r = { .node = j->plan.self_node };
    struct echo e = { .lfd = -1 };
    struct err err = { "" };
    long deadline;
    char key[64], why[PF_STR] = "", val[PF_STR + TOKEN_HEX_LEN + 2];
    struct client *c = client_from_env(j->opt.remote.connect_timeout_s * 1000,
                                       &err);
    int rc = EXIT_FAIL;

    if (!c)
        goto out;
    /* the probes' commands may look up their node by its name here */
    setenv("DLRUN_NODE", j->plan.nodes[r.node].host, 1);
    pf_probe(&r, prog && prog[0] ? prog : NULL, j->opt.pf_import,
             j->opt.pf_timeout_s * 1000);
    r.node = j->plan.self_node;
    deadline = clock_ms() + j->opt.pf_timeout_s * 1000L;   /* for the links */
    echo_start(j, &e, &r, why);
    snprintf(key, sizeof key, "dlrun.pf.addr.%d", r.node);
    snprintf(val, sizeof val, "%s %s", r.addr, e.key);
    if (client_put(c, key, r.addr[0] ? val : "", r.addr[0] ? strlen(val) : 0,
                   &err) != CLIENT_OK ||
        put_report(c, &r, &err) < 0 || put_links(c, j, r.node, deadline,
                                                 &err) < 0)
        goto out;
    wait_for_callers(c, j, r.node, deadline);
    rc = EXIT_OK;
out:
    if (rc != EXIT_OK)
        say("agent --preflight on node %d: %s", j->plan.self_node, err.msg);
    else if (why[0])
        say("agent --preflight on node %d: %s", r.node, why);
    echo_stop(&e);
    client_close(c);
    return rc;
}
