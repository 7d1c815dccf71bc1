/* nodes_run.c - the attempts of a group of dlruns started by hand, one per
 * node: join (a node rank, MASTER_ADDR/PORT), plan this node's ranks as
 * per-node mode does (plan.self_node) and run them with run_launch while
 * a thread beats and watches the group, post this node's outcome, read
 * the group's (the first posted), and restart together or exit with it.
 * Every node prints the same failure line and exits with the same code. */
#include "job/nodes.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run/engine.h"
#include "util/evloop.h"
#include "run/supervise.h"
#include "run/watch.h"
#include "util/say.h"

/* A TERM, INT, HUP or QUIT that came while no rank runs (the signals are
 * blocked for the supervisor's signalfd): its number, else 0. */
static int stop_signal(void *ctx)
{
    static const int stop[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, 0 };
    struct nodes *n = ctx;
    int sig = sig_take_pending(stop);

    if (sig > 0)
        n->stopsig = sig;
    return sig;
}

/* The joined group as this node's plan, bindings and rendezvous.  0 or
 * the exit code after printing. */
static int plan_group(struct nodes *n)
{
    struct job *j = n->j;
    const struct ng_group *g = &n->g;
    struct plan_request req = { 0 };
    struct err err = { "" };

    alloc_free(&j->alloc);
    plan_free(&j->plan);
    memset(&j->alloc, 0, sizeof j->alloc);
    j->alloc.source = "by-hand";
    snprintf(j->alloc.why, sizeof j->alloc.why, "one dlrun per node started "
             "by hand, meeting at %.200s", n->endpoint);
    for (int i = 0; i < g->nnodes; i++)
        if (alloc_add_node(&j->alloc, g->nodes[i].host, g->nodes[i].nproc, 0,
                           &err) < 0)
            return say_fail(EXIT_USAGE, "node rank %d: %s", i, err.msg);
    if (plan_build(&j->alloc, &req, &j->plan, &err) < 0)
        return say_fail(EXIT_USAGE, "%s", err.msg);
    j->plan.self_node = g->self;
    j->plan.layout = "one dlrun per node, started by hand";
    j->restart = g->gen;
    free(j->bind);
    j->bind = NULL;
    free(j->rdv.worker_ports);
    memset(&j->rdv, 0, sizeof j->rdv);
    snprintf(j->rdv.addr, sizeof j->rdv.addr, "%s", g->nodes[0].addr);
    j->rdv.port = g->nodes[0].port;
    snprintf(j->rdv.addr_from, sizeof j->rdv.addr_from,
             "address of node rank 0 (%.100s)", g->nodes[0].host);
    snprintf(j->rdv.port_from, sizeof j->rdv.port_from,
             "free port on node rank 0, found by its dlrun");
    return job_bind(j);
}

/* The watcher's step (lib/run/watch.h): beat, and see whether the group's
 * attempt has ended elsewhere (1) or the broker is gone (-1). */
static int watch_group(void *arg, int wake)
{
    struct nodes *n = arg;
    struct err err = { "" };
    struct ng_end e;

    (void)wake;
    return ng_watch(n->watch, &n->g, 1000, &e, &err);
}

/* After the watcher's last step: stop this node's ranks when the group's
 * attempt ended elsewhere or the broker is gone (unless they already
 * ended: run_watched took the state first). */
static void group_ended(void *arg, int last)
{
    struct nodes *n = arg;
    int running = NODES_RUNNING;

    if (last != 0 && atomic_compare_exchange_strong(&n->state, &running,
                                                    NODES_TOLD))
        kill(getpid(), SIGTERM);    /* the supervisor ends the ranks */
}

static void stop_watcher(struct nodes *n)
{
    watch_stop(n->watcher);
    n->watcher = NULL;
}

/* This node's part in how the attempt ended, from run_launch's rc. */
static struct ng_end my_end(const struct nodes *n, int rc)
{
    const struct job *j = n->j;
    int sig = j->last.signal;
    struct ng_end e = { .kind = NG_ERROR, .node = n->g.self, .status = rc };

    if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGQUIT) {
        e.kind = NG_SIGNAL;
        e.status = sig;
    } else if (j->last.rank >= 0) {
        e.kind = NG_FAIL;
        e.rank = j->last.rank;
        e.status = j->last.status;
        e.pid = j->last.pid;
    } else if (rc < 1 || rc > 255) {
        e.status = EXIT_FAIL;
    }
    return e;
}

/* Post this node's outcome (unless the group's came first), then wait for
 * the group's, posting a signal that comes meanwhile.  0 / -1 with err
 * (the broker is gone). */
static int settle(struct nodes *n, int rc, int told, struct ng_end *out,
                  struct err *err)
{
    struct ng_end mine = my_end(n, rc);
    int got;

    if (!told && ng_post(n->main, &n->g, rc == 0 ? NULL : &mine, err) < 0)
        return -1;
    while ((got = ng_outcome(n->main, &n->g, 1000, out, err)) == 0) {
        struct ng_end sig = { .kind = NG_SIGNAL, .node = n->g.self };
        if ((sig.status = stop_signal(n)) && ng_post(n->main, &n->g, &sig,
                                                      err) < 0)
            return -1;
    }
    return got < 0 ? -1 : 0;
}

/* One line for the group's outcome, the exit code, and whether a restart
 * may help (*failed; the engine decides, lib/engine.h). */
static int outcome(struct nodes *n, const struct ng_end *e, int *failed)
{
    const struct job *j = n->j;
    const struct ng_group *g = &n->g;
    const char *host = g->nodes[e->node].host;
    char stopped[64];

    snprintf(stopped, sizeof stopped, "stopped the job on %d nodes",
             g->nnodes);
    *failed = e->kind == NG_FAIL || e->kind == NG_LOST || e->kind == NG_GROW;
    switch (e->kind) {
    case NG_OK:
        return EXIT_OK;
    case NG_FAIL:
        job_report_failure(e->rank, host, e->pid, e->status, stopped);
        if (e->node == g->self)
            job_report_root_cause(j);
        return supervise_exit_code(e->status);
    case NG_SIGNAL:
        say("dlrun on %s (node rank %d) was stopped by signal %d (%s); %s",
            host, e->node, e->status, strsignal(e->status), stopped);
        return 128 + e->status;
    case NG_LOST:
        say("lost dlrun on %s (node rank %d): no heartbeat for %d s "
            "(killed, or its network is down); %s", host, e->node,
            j->opt.remote.heartbeat_s, stopped);
        return EXIT_FAIL;
    case NG_GROW:
        say("a node is waiting to join the group of %d (--nnodes %d:%d)",
            g->nnodes, j->opt.plan.nodes, j->opt.torch.nnodes_max);
        return EXIT_FAIL;
    default:
        say("dlrun on %s (node rank %d) could not start its ranks (exit "
            "code %d); %s", host, e->node, e->status, stopped);
        return e->status;
    }
}

/* Run this node's ranks under the watcher.  Returns run_launch's code;
 * *told when the watcher stopped them. */
static int run_watched(struct nodes *n, char **prog, int *told)
{
    struct err err = { "" };
    int rc = EXIT_FAIL, started;

    atomic_store(&n->state, NODES_RUNNING);
    started = ng_watch_begin(n->watch, &n->g, &err) == 0 &&
              (n->watcher = watch_start(watch_group, group_ended, n, &err));
    if (started)
        rc = plan_group(n);
    if (started && rc == 0)
        rc = run_launch(n->j, prog);
    else if (!started)
        say("cannot watch the group: %s", err.msg);
    *told = atomic_exchange(&n->state, NODES_DONE) == NODES_TOLD;
    if (*told) {    /* the watcher's SIGTERM, if the supervisor left it */
        stop_watcher(n);    /* it ended: its kill is done */
        stop_signal(n);
    }
    return rc;
}

/* The ranks' broker of this attempt (kv, NCCL ids across the nodes), a
 * fresh one each attempt as the head's: node rank 0 serves it on its
 * address.  0 or the exit code after printing. */
static int ranks_broker(struct nodes *n)
{
    struct err err = { "" };
    const char *a = n->g.nodes[0].addr;
    char where[NG_ADDR_MAX + 16] = "";
    uint8_t tok[TOKEN_BYTES];
    int rc;

    broker_thread_stop(n->ranks);
    n->ranks = NULL;
    if (n->g.self == 0) {
        token_from_hex(n->token, tok, &err);
        if (!(n->ranks = broker_thread_start(a, 0, tok, &err)) &&
            !(n->ranks = broker_thread_start("0.0.0.0", 0, tok, &err)))
            return say_fail(EXIT_FAIL, "cannot serve the ranks' broker: %s",
                            err.msg);
        snprintf(where, sizeof where, strchr(a, ':') ? "[%s]:%d" : "%s:%d",
                 a, broker_thread_port(n->ranks));
    }
    rc = ng_ranks_broker(n->main, &n->g, n->g.self == 0 ? where : NULL, where,
                         sizeof where, stop_signal, n, &err);
    if (rc == 1)
        return 128 + n->stopsig;
    if (rc < 0)
        return say_fail(EXIT_FAIL, "%s", err.msg);
    return setenv("DLRUN_BROKER", where, 1) < 0 ?
           say_fail(EXIT_FAIL, "out of memory") : 0;
}

/* The group's attempts (lib/engine.h's ctx). */
struct nodes_run {
    struct nodes *n;
    char **prog;
    int gen;                    /* the generation to join; -1: the
                                   group's current one */
};

/* One attempt of the group: join, run, settle.  The group's generation is
 * its restart count (j->restart, from plan_group). */
static int attempt(struct nodes_run *nr, const struct engine *eng,
                   struct engine_end *end)
{
    struct nodes *n = nr->n;
    struct err err = { "" };
    struct ng_end e;
    int rc, told = 0, expect, again;

    rc = ng_join(n->main, nr->gen, stop_signal, n, &n->g, &err);
    if (rc == 1)
        return say_fail(128 + n->stopsig, "stopped by signal %d while the "
                        "group at %s was forming", n->stopsig, n->endpoint);
    if (rc < 0)
        return say_fail(EXIT_FAIL, "cannot join the group at %s: %s",
                        n->endpoint, err.msg);
    nr->gen = n->g.gen;
    if ((rc = ranks_broker(n)) != 0) {
        ng_group_free(&n->g);
        return rc;
    }
    rc = run_watched(n, nr->prog, &told);
    if (settle(n, rc, told, &e, &err) < 0) {
        stop_watcher(n);
        return say_fail(EXIT_FAIL, "lost the group's rendezvous at %s (%s): "
                        "the node that served it is gone; stopped this "
                        "node's ranks", n->endpoint, err.msg);
    }
    stop_watcher(n);
    end->rc = rc = outcome(n, &e, &end->failed);
    again = engine_again(eng, end);
    expect = n->g.nnodes - (e.kind == NG_LOST);
    ng_leave(n->main, &n->g, expect, n->server && !again ? 10000 : 0, &err);
    ng_group_free(&n->g);
    nr->gen += again;
    return rc;
}

static void nodes_attempt(void *ctx, const struct engine *e,
                          struct engine_end *end)
{
    end->rc = attempt(ctx, e, end);
}

static void nodes_restarting(void *ctx, const struct engine *e)
{
    const struct nodes_run *nr = ctx;

    say("restarting the group (restart %d of %d)", nr->gen, e->max_restarts);
}

static int connect_both(struct nodes *n)
{
    struct err err = { "" };

    n->main = ng_connect(&n->conf, &err);
    if (n->main)
        n->watch = ng_connect(&n->conf, &err);
    if (!n->watch)
        return say_fail(EXIT_FAIL, "cannot reach the group's rendezvous at "
                        "%s: %s (is dlrun running on %s, and no other "
                        "program on that port? the same DLRUN_TOKEN or "
                        "--rdzv-id on every node?)", n->endpoint, err.msg,
                        n->host);
    return 0;
}

int run_nodes(struct job *j, char **prog)
{
    struct nodes n = { 0 };
    struct nodes_run nr = { .n = &n, .prog = prog, .gen = -1 };
    struct engine e = { .max_restarts = j->opt.max_restarts,
                        .restart = &j->restart, .attempt = nodes_attempt,
                        .restarting = nodes_restarting, .ctx = &nr };
    sigset_t block;
    int rc;

    /* before any thread: theirs inherit it, the ranks get n.orig */
    supervise_signals(&block);
    sigprocmask(SIG_BLOCK, &block, &n.orig);
    j->child_mask = &n.orig;
    j->one_attempt = 1;
    rc = nodes_setup(&n, j);
    if (rc == 0)
        rc = connect_both(&n);
    /* the ranks' DLRUN_TOKEN: the group's (DLRUN_BROKER: ranks_broker) */
    if (rc == 0 && setenv("DLRUN_TOKEN", n.token, 1) < 0)
        rc = say_fail(EXIT_FAIL, "out of memory");
    if (rc == 0)
        job_errdir(j);
    if (rc == 0)
        rc = engine_run(&e, NULL);
    ng_close(n.main);
    ng_close(n.watch);
    broker_thread_stop(n.ranks);
    broker_thread_stop(n.server);
    return rc;
}
