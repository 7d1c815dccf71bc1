/* head_reserve.c - --spares: the agents of the spare nodes held in
 * reserve, started with every attempt beside the others and watched
 * while it runs.  A spare whose agent is lost (its heartbeat stopped, or
 * its process ended) or whose probe failed is dropped from the reserve
 * with one line, before it is ever needed.
 *
 * Each spare's agent is a start of its own (its own srun step, its own
 * relay): a spare lost ends nothing else, where one step for all would
 * end with it (srun's --kill-on-bad-exit).  Its process is supervised
 * with the attempt's agents, idle (lib/run/supervise.h): it fails
 * nothing, nobody waits for it, and the attempt's end ends it.  A spare's
 * agent is node nnodes + k of a launch plan that lists the plan's nodes,
 * then the spares (lib/job/agent_spare.c has its keys). */
#include "job/head.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job/preflight_judge.h"
#include "observe/preflight.h"
#include "place/nodeset.h"
#include "rendezvous/client.h"
#include "util/clock.h"
#include "util/say.h"
#include "util/strv.h"

int head_spare_check(struct head_spare_watch *w, long now_ms, int running,
                     int code, long long hb, struct pf_node *rep, int hb_ms,
                     char *why, size_t n)
{
    if (!running) {
        snprintf(why, n, "its agent ended with code %d%s", code,
                 code >= 128 ? " (killed?)" : "");
        return 1;
    }
    if (hb != w->hb) {
        w->hb = hb;
        w->seen_ms = now_ms;
    } else if (hb > 0 && now_ms - w->seen_ms > hb_ms) {
        snprintf(why, n, "no heartbeat for %d s", hb_ms / 1000);
        return 1;
    }
    if (!rep || w->judged)
        return 0;
    w->judged = 1;
    if (!pf_judge_one(rep))
        return 0;
    snprintf(why, n, "probe '%s' failed: %s", rep->probe, rep->why);
    return 1;
}

struct head_spare {
    const char *host;           /* borrowed: the allocation's */
    int node;                   /* its agent's node: nnodes + k */
    struct launched run;        /* its agent (one process) */
    struct strv args;           /* its agent's command line */
    struct head_spare_watch w;
    int gone;                   /* dropped, or never started */
};

struct head_reserve {
    struct job *j;              /* borrowed */
    const struct launcher *l;
    struct supervise *sv;       /* borrowed: the attempt's */
    struct sv_hook prev;
    struct client *c;
    struct plan plan;           /* the launch plan: its nodes owned */
    int *nodes;                 /* nnodes + k for spare k */
    struct head_spare *s;
    int n;
};

/* The launch plan: the plan's nodes, then the spares (borrowed names). */
static int launch_plan(struct head_reserve *r)
{
    const struct plan *p = &r->j->plan;
    const struct nodeset *ns = r->j->nodeset;
    int total = p->nnodes + r->n;

    r->plan.nodes = calloc((size_t)total, sizeof *r->plan.nodes);
    r->nodes = calloc((size_t)r->n, sizeof *r->nodes);
    r->s = calloc((size_t)r->n, sizeof *r->s);
    if (!r->plan.nodes || !r->nodes || !r->s)
        return -1;
    r->plan.nnodes = total;
    memcpy(r->plan.nodes, p->nodes, (size_t)p->nnodes * sizeof *p->nodes);
    for (int k = 0; k < r->n; k++) {
        const struct alloc_node *a = &ns->a->nodes[ns->nactive + (size_t)k];
        struct plan_node *pn = &r->plan.nodes[p->nnodes + k];
        pn->host = a->name;
        pn->login = a->login;
        pn->addr_name = a->addr_name;
        r->nodes[k] = p->nnodes + k;
        r->s[k].host = a->name;
        r->s[k].node = p->nnodes + k;
    }
    return 0;
}

/* Drop spare s from the reserve: one line, its agent ended. */
static void drop(struct head_reserve *r, struct head_spare *s,
                 const char *why)
{
    struct nodeset *ns = r->j->nodeset;
    struct err err = { "" };

    s->gone = 1;
    if (nodeset_drop_spare(ns, s->host, why, r->j->restart + 1, clock_wall(),
                           &err) < 0) {
        say("warning: cannot drop spare %s: %s", s->host, err.msg);
        return;
    }
    say("spare %s dropped: %s; %zu spare%s left", s->host, why, ns->nspare,
        ns->nspare == 1 ? "" : "s");
    if (s->run.n && s->run.procs[0].running)
        killpg(s->run.procs[0].pid, SIGTERM);
}

/* Key's value as a counter (0 when none yet). */
static long long counter(struct client *c, const char *key)
{
    struct err err = { "" };
    void *v = NULL;
    size_t len = 0;
    long long n = 0;

    if (client_get(c, key, 0, &v, &len, &err) == CLIENT_OK)
        n = atoll(v);
    free(v);
    return n;
}

/* Spare s's report, once it is there, into nd.  0: none yet. */
static int report(struct client *c, const struct head_spare *s,
                  struct pf_node *nd)
{
    struct err err = { "" };
    char key[64];
    void *v = NULL;
    size_t len = 0;
    int rc = 0;

    memset(nd, 0, sizeof *nd);
    nd->offset_ms = NAN;        /* no clock: a look every half second */
    nd->agent_code = -1;
    snprintf(key, sizeof key, "dlrun.spare.rep.%d", s->node);
    if (client_get(c, key, 0, &v, &len, &err) == CLIENT_OK) {
        rc = 1;
        nd->have = pf_decode(v, len, &nd->r, &err) == 0 &&
                   nd->r.node == s->node;
        if (!nd->have)
            snprintf(nd->why, sizeof nd->why, "its report is bad: %s",
                     err.msg[0] ? err.msg : "another node's");
    }
    free(v);
    return rc;
}

static void look(struct head_reserve *r, struct head_spare *s)
{
    const struct sv_rank *p = &s->run.procs[0];
    struct pf_node nd;
    char key[64], why[PF_WHY_MAX + 64];
    int have = s->w.judged ? 0 : report(r->c, s, &nd);

    snprintf(key, sizeof key, "dlrun.hb.%d", s->node);
    if (have && !nd.have) {     /* a report that cannot be read */
        snprintf(why, sizeof why, "probe 'report' failed: %s", nd.why);
        drop(r, s, why);
        return;
    }
    if (head_spare_check(&s->w, clock_ms(), p->running,
                         p->running ? 0 : supervise_exit_code(p->status),
                         counter(r->c, key), have ? &nd : NULL,
                         r->j->opt.remote.heartbeat_s * 1000, why,
                         sizeof why))
        drop(r, s, why);
}

/* The supervisor's hook, every half second: each spare held.  Once the
 * attempt ends (a failure, a signal) its agents end too: no more looks. */
static int reserve_tick(void *ctx, int readable)
{
    struct head_reserve *r = ctx;
    int wait = supervise_hook_call(&r->prev, readable);

    if (r->sv->failed >= 0 || r->sv->signal_received)
        return wait;
    for (int k = 0; k < r->n; k++)
        if (!r->s[k].gone)
            look(r, &r->s[k]);
    return supervise_sooner(wait, 500);
}

/* Start spare s's agent like aj's (borrowed), its process in room. */
static void start_one(struct head_reserve *r, struct head_spare *s, int k,
                      const struct agent_job *aj, const char *addr,
                      const char *token, struct sv_rank *room)
{
    struct agent_job one = *aj;
    struct err err = { "" };
    char key[64], why[sizeof err.msg + 32];

    s->run.procs = room;
    for (char **a = aj->agent_args; *a; a++)
        strv_addf(&s->args, "%s", *a);
    strv_addf(&s->args, "--spare-agent");
    strv_addf(&s->args, "--node=%d", s->node);
    snprintf(key, sizeof key, "dlrun.spare.host.%d", s->node);
    one.plan = &r->plan;
    one.nodes = &r->nodes[k];
    one.nnodes = 1;
    one.agent_args = s->args.v;
    room->idle = 1;
    if (!r->c)
        r->c = client_connect(addr, token, 5000, &err);
    if (!s->args.failed && r->c &&
        client_put(r->c, key, s->host, strlen(s->host), &err) == CLIENT_OK &&
        r->l->start(&(struct launch_req){ .agents = &one }, &s->run,
                    &err) == 0)
        return;
    s->run.n = 0;
    snprintf(why, sizeof why, "its agent did not start: %s",
             err.msg[0] ? err.msg : "out of memory");
    drop(r, s, why);
}

struct head_reserve *head_reserve_start(struct job *j,
                                        const struct launcher *l,
                                        const struct agent_job *aj,
                                        const char *addr, const char *token,
                                        struct supervise *sv,
                                        struct sv_rank *room)
{
    struct head_reserve *r;

    if (!j->nodeset || !j->nodeset->nspare || j->preflight)
        return NULL;
    if (!(r = calloc(1, sizeof *r)))
        goto fail;
    r->j = j;
    r->l = l;
    r->sv = sv;
    r->n = (int)j->nodeset->nspare;
    if (launch_plan(r) < 0)
        goto fail;
    for (int k = 0; k < r->n; k++) {
        start_one(r, &r->s[k], k, aj, addr, token, &room[k]);
        sv->n++;
    }
    supervise_hook(sv, reserve_tick, r, &r->prev);
    return r;
fail:
    say("warning: the spares' agents cannot start: out of memory");
    head_reserve_end(r);
    return NULL;
}

/* The attempt failed before a spare's report was judged: the report, if
 * it is in, is judged now (its agent ends with the attempt: nothing else
 * of it is looked at), so that a bad spare is not the one taken. */
static void last_look(struct head_reserve *r)
{
    struct pf_node nd;
    char why[PF_WHY_MAX + 64];

    for (int k = 0; k < r->n; k++) {
        struct head_spare *s = &r->s[k];
        if (s->gone || s->w.judged || !report(r->c, s, &nd))
            continue;
        s->w.judged = 1;
        if (!nd.have)
            snprintf(why, sizeof why, "probe 'report' failed: %s", nd.why);
        else if (pf_judge_one(&nd))
            snprintf(why, sizeof why, "probe '%s' failed: %s", nd.probe,
                     nd.why);
        else
            continue;
        drop(r, s, why);
    }
}

void head_reserve_end(struct head_reserve *r)
{
    if (!r)
        return;
    if (r->sv->failed >= 0 && r->c)
        last_look(r);
    for (int k = 0; r->s && k < r->n; k++) {
        if (r->s[k].run.n)
            r->l->destroy(&r->s[k].run);
        strv_free(&r->s[k].args);
    }
    client_close(r->c);
    free(r->plan.nodes);
    free(r->nodes);
    free(r->s);
    free(r);
}
