/* preflight_collect.c - the head's side of a preflight: while the agents
 * run, note when each report arrives (the clock offsets, in a thread of
 * its own) and end the agents still running at the deadline; after they
 * ended, read every report and link result from the broker, judge the
 * nodes, have the caller show the table, and say the verdict. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job/job.h"
#include "job/preflight_judge.h"
#include "job/preflight_run.h"
#include "rendezvous/client.h"
#include "run/supervise.h"
#include "run/watch.h"
#include "util/clock.h"
#include "util/say.h"

struct pf_collect {
    struct client *c;           /* owned */
    struct watch *w;            /* owned: collect_step's, or NULL */
    int n, seq;
    long deadline_ms;           /* the agents must be done by then */
    struct supervise *sv;       /* borrowed: the agents' processes */
    struct client *hook;        /* owned: sv's hook's own connection */
    char *gone;                 /* owned, per node: its agent ended, told */
    double *offset_ms;          /* owned, per node, NAN until its report */
};

/* The collector's step (lib/run/watch.h): the next of dlrun.pf.n.1, .2, ...
 * as they are put.  Non-zero when all came, at the deadline, or when the
 * broker is gone. */
static int collect_step(void *arg, int wake)
{
    struct pf_collect *c = arg;
    struct err err = { "" };
    char key[64];
    void *v = NULL;
    size_t len = 0;
    int rc, node = -1;
    double wall = 0;

    (void)wake;
    if (c->seq > c->n || clock_ms() >= c->deadline_ms)
        return 1;
    snprintf(key, sizeof key, "dlrun.pf.n.%d", c->seq);
    rc = client_get(c->c, key, 500, &v, &len, &err);
    if (rc == CLIENT_OK) {
        double now = clock_wall();
        if (sscanf(v, "%d %lf", &node, &wall) == 2 && node >= 0 &&
            node < c->n && isfinite(wall))
            c->offset_ms[node] = (wall - now) * 1000.0;
        c->seq++;
    }
    free(v);
    return rc != CLIENT_OK && rc != CLIENT_TIMEOUT;
}

/* An agent process that ended (ssh: one per node) will not answer: say
 * so where the other agents wait for it (its echo address, its "done"),
 * so that they stop waiting now, not at their deadline. */
static void note_gone(struct pf_collect *c)
{
    struct err err = { "" };
    char key[64];

    for (int i = 0; c->hook && i < c->sv->n; i++) {
        int node = -1 - c->sv->ranks[i].rank;
        if (c->sv->ranks[i].running || node < 0 || node >= c->n ||
            c->gone[node])
            continue;
        c->gone[node] = 1;
        snprintf(key, sizeof key, "dlrun.pf.done.%d", node);
        client_put(c->hook, key, "1", 1, &err);
        snprintf(key, sizeof key, "dlrun.pf.addr.%d", node);
        client_put(c->hook, key, "", 0, &err);
    }
}

/* sv's periodic hook: agents that ended; past the deadline, SIGTERM the
 * agents still running (a node that hangs), SIGKILL 5 s later. */
static int collect_deadline(void *ctx, int readable)
{
    struct pf_collect *c = ctx;
    long now = clock_ms();
    int sig = now >= c->deadline_ms + 5000 ? SIGKILL : SIGTERM;

    (void)readable;
    note_gone(c);
    if (now < c->deadline_ms)
        return c->deadline_ms - now < 500 ? (int)(c->deadline_ms - now) : 500;
    for (int i = 0; i < c->sv->n; i++)
        if (c->sv->ranks[i].running)
            killpg(c->sv->ranks[i].pid, sig);
    return 1000;
}

static void collect_free(struct pf_collect *c)
{
    if (!c)
        return;
    watch_stop(c->w);
    client_close(c->c);
    client_close(c->hook);
    free(c->offset_ms);
    free(c->gone);
    free(c);
}

struct pf_collect *preflight_collect_start(const struct job *j,
                                           const char *addr,
                                           const char *token,
                                           struct supervise *sv)
{
    struct err err = { "" };
    struct pf_collect *c = calloc(1, sizeof *c);

    if (!c || !(c->offset_ms = calloc((size_t)j->plan.nnodes,
                                      sizeof *c->offset_ms)) ||
        !(c->gone = calloc((size_t)j->plan.nnodes, 1)))
        goto fail;
    c->n = j->plan.nnodes;
    c->seq = 1;
    for (int i = 0; i < c->n; i++)
        c->offset_ms[i] = NAN;
    /* agents: their own timeout (the import, then the links), after ssh's */
    c->deadline_ms = clock_ms() + (2L * j->opt.pf_timeout_s +
                                   j->opt.remote.connect_timeout_s + 5) * 1000L;
    c->c = client_connect(addr, token, 5000, &err);
    if (!c->c || !(c->hook = client_connect(addr, token, 5000, &err)))
        goto fail;
    /* without it the table lacks the clock offsets, nothing more */
    c->w = watch_start(collect_step, NULL, c, &err);
    c->sv = sv;
    /* replaces any hook before (a stall watch's: a preflight runs no
     * ranks that could stall) */
    sv->extra = collect_deadline;
    sv->extra_ctx = c;
    sv->extra_fd = -1;
    return c;
fail:
    say("preflight: cannot watch the reports: %s",
        err.msg[0] ? err.msg : "out of memory");
    collect_free(c);
    return NULL;
}

/* Node i's report and link results from the broker. */
static void read_node(struct client *c, const struct job *j, int i,
                      struct pf_node *nd)
{
    struct err err = { "" };
    char key[64];
    void *v = NULL;
    size_t len = 0;

    snprintf(key, sizeof key, "dlrun.pf.rep.%d", i);
    if (client_get(c, key, 0, &v, &len, &err) == CLIENT_OK) {
        nd->have = pf_decode(v, len, &nd->r, &err) == 0 && nd->r.node == i;
        if (!nd->have)
            snprintf(nd->why, sizeof nd->why, "its report is bad: %s",
                     err.msg);
    }
    free(v);
    v = NULL;
    snprintf(key, sizeof key, "dlrun.pf.links.%d", i);
    nd->links = calloc((size_t)j->plan.nnodes, sizeof *nd->links);
    if (nd->links && client_get(c, key, 0, &v, &len, &err) == CLIENT_OK)
        nd->have_links = pf_links_decode(v, len, nd->links, j->plan.nnodes,
                                         j->plan.nnodes, &nd->nlinks,
                                         &err) == 0;
    free(v);
}

/* The exit code of node i's agent process (ssh: one per node), -1 when
 * not known (srun: one for all). */
static int agent_code(const struct supervise *sv, int node)
{
    for (int k = 0; sv && k < sv->n; k++)
        if (sv->ranks[k].rank == -1 - node && !sv->ranks[k].running)
            return supervise_exit_code(sv->ranks[k].status);
    return -1;
}

int preflight_collect_end(struct pf_collect *c, const struct job *j,
                          const struct supervise *sv)
{
    int n = j->plan.nnodes, rc = EXIT_FAIL;
    struct pf_node *nd = calloc((size_t)n, sizeof *nd);
    struct pf_table t = { .plan = &j->plan, .nodes = nd };

    if (!c || !nd) {
        rc = say_fail(EXIT_FAIL, "preflight: no results");
        goto out;
    }
    watch_stop(c->w);
    c->w = NULL;
    for (int i = 0; i < n; i++) {
        read_node(c->c, j, i, &nd[i]);
        nd[i].offset_ms = c->offset_ms[i];
        nd[i].agent_code = agent_code(sv, i);
    }
    t.nbad = pf_judge(nd, n, &j->plan);
    if (j->pf_show)
        j->pf_show->fn(j->pf_show->ctx, &t);
    rc = !j->pf_quiet ? pf_verdict(nd, j) : t.nbad ? EXIT_FAIL : EXIT_OK;
out:
    for (int i = 0; nd && i < n; i++)
        free(nd[i].links);
    free(nd);
    collect_free(c);
    return rc;
}
