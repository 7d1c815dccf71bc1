/* agent.c - `dlrun agent`'s side (agent.h): started by a head on every node (through srun,
 * or a relay over ssh); it gets the head's plan and settings from the
 * head's broker (dlrun.plan, lib/place/planwire.h), plans nothing itself,
 * starts this node's ranks with the one-node engine, and with --spawn the
 * agents of its part of the tree.  Internal: users run `dlrun`.
 *
 * It watches the head two ways: the lifeline (stdin under ssh: EOF when
 * the head, the relay or the connection is gone) and the broker, where it
 * beats (dlrun.hb.NODE) and reads the signals the head forwards
 * (dlrun.ctl.SEQ).  Either one failing ends its ranks.  The beats and its
 * reports to the head go on connections of its own, never through this
 * node's relay: a rank that spends the relay's connection's limits must
 * not end the job. */
#include "job/agent.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rendezvous/broker_relay_srv.h"
#include "rendezvous/client.h"
#include "place/envout.h"
#include "run/envwire.h"
#include "run/errfile.h"
#include "run/failwire.h"
#include "job/head.h"
#include "run/headlink.h"
#include "util/net.h"
#include "job/preflight_run.h"
#include "where/ranges.h"
#include "run/supervise.h"
#include "util/say.h"
#include "util/tmpdir.h"
#include "where/sched.h"

extern char **environ;

/* This node in the plan: --node, else the name the scheduler that
 * started this agent gives it (its row's node_var: Slurm's
 * SLURMD_NODENAME), else the host name.  -1 when the plan has no rank
 * here. */
static int find_self_node(const struct job *j)
{
    const struct plan *p = &j->plan;
    const char *me = sched_node_name(environ);

    if (j->opt.node >= 0)
        return j->opt.node < p->nnodes ? j->opt.node : -1;
    for (int i = 0; i < p->nnodes; i++) {
        const char *h = p->nodes[i].host;
        if (me ? strcmp(h, me) == 0 : net_is_this_host(h))
            return i;
    }
    return -1;
}

/* A new connection to the head's broker itself, not to this node's relay
 * (which DLRUN_BROKER names once it runs).  NULL with err. */
static struct client *head_client(const struct job *j, int timeout_ms,
                                  struct err *err)
{
    const char *tok = getenv("DLRUN_TOKEN");

    if (!j->head_broker[0] || !tok)
        return client_from_env(timeout_ms, err);
    return client_connect(j->head_broker, tok, timeout_ms, err);
}

/* The failing rank's TORCHELASTIC_ERROR_FILE message, for the head's
 * failure line (the file is on this node only): dlrun.cause.RANK. */
static void agent_send_cause(const struct job *j, struct client *c, int rank)
{
    struct errfile ef;
    struct err err = { "" };
    char path[4096], key[64];

    if (!j->errdir)
        return;
    envout_error_file(j->errdir, j->restart, rank, path, sizeof path);
    if (errfile_read(path, &ef) < 0)
        return;
    snprintf(key, sizeof key, "dlrun.cause.%d", rank);
    client_put(c, key, ef.message, strlen(ef.message), &err);
}

void agent_report_failure(const struct job *j, const struct supervise *sv)
{
    const struct sv_rank *r = &sv->ranks[sv->failed];
    const struct fw_failure f = { .rank = r->rank, .status = r->status,
                                  .pid = (int)r->pid };
    struct err err = { "" };
    struct client *c = NULL;

    if (r->rank < 0)    /* an agent below us: it told the head itself */
        return;
    c = head_client(j, 5000, &err);
    if (!c || fw_failure_put(c, &f, j->plan.nodes[j->plan.rank_node[r->rank]]
                             .host, &err) < 0)
        goto out;
    agent_send_cause(j, c, r->rank);
out:
    if (err.msg[0])
        say("agent: cannot tell the head: %s", err.msg);
    client_close(c);
}

void agent_report_ranks(const struct job *j, const struct supervise *sv)
{
    struct err err = { "" };
    struct client *c = NULL;

    if (!j->opt.summary)
        return;
    if (!(c = head_client(j, 5000, &err)) ||
        fw_ranks_put(c, j->plan.self_node, sv->ranks, sv->n, &err) < 0)
        say("agent: cannot report its ranks: %s", err.msg);
    client_close(c);
}

void agent_report_end(const struct job *j)
{
    struct err err = { "" };
    struct client *c = NULL;
    char key[64];

    if (!getenv("DLRUN_AGENT_BYE"))
        return;
    snprintf(key, sizeof key, "dlrun.bye.%d", j->plan.self_node);
    /* a short wait: a head that is gone has nobody to tell */
    if ((c = head_client(j, 1000, &err)))
        client_put(c, key, "1", 1, &err);
    client_close(c);
}

/* The head is lost: one line before the watcher's SIGTERM. */
static void agent_lost(void *ctx, const char *why)
{
    say("agent on %s: %s; ending its ranks", (const char *)ctx, why);
}

/* Under ssh the secrets and -x values come first on stdin (lib/run/envwire.h:
 * DLRUN_BROKER, DLRUN_TOKEN, DLRUN_X_*; never on a command line).  Then
 * stdin stays open as the lifeline: it moves off fd 0, which becomes
 * /dev/null for the ranks.  Returns the lifeline fd, or -1 after printing
 * the error. */
static int take_lifeline(void)
{
    struct strv got = { 0 };
    struct err err = { "" };
    int fd, nul;

    if (!getenv("DLRUN_TOKEN") && envwire_read(0, &got, &err) < 0)
        return say_fail(EXIT_FAIL, "agent: cannot read the broker secrets "
                        "on stdin: %s", err.msg), -1;
    for (size_t i = 0; i < got.n; i++) {
        char *eq = strchr(got.v[i], '=');
        if (!envwire_travels(got.v[i], (size_t)(eq - got.v[i]))) {
            strv_free(&got);
            return say_fail(EXIT_FAIL, "agent: unexpected variable on "
                            "stdin"), -1;
        }
        *eq = '\0';
        setenv(got.v[i], eq + 1, 1);
    }
    strv_free(&got);
    fd = fcntl(0, F_DUPFD_CLOEXEC, 3);
    nul = open("/dev/null", O_RDONLY);
    if (fd < 0 || nul < 0 || dup2(nul, 0) < 0)
        return say_fail(EXIT_FAIL, "agent: cannot set up stdin"), -1;
    if (nul != 0)
        close(nul);
    return fd;
}

/* The agents below this one: the same launcher as the head's (ssh). */
static int prepare_subtree(struct job *j, struct agent_job *aj,
                           struct strv *args, struct strv *relay,
                           struct envset *xenv, int **nodes, int lifeline)
{
    struct err err = { "" };
    int n = ranges_parse(j->opt.spawn, j->plan.nnodes, nodes, &err);

    if (n < 0)
        return say_fail(EXIT_USAGE, "agent: --spawn %s", err.msg);
    /* environ now, with the broker secrets take_lifeline set: later
     * DLRUN_BROKER becomes this node's relay (agent_relay) */
    if (agent_args(j, args) < 0 || !(aj->envp = envset_envp(xenv, environ)))
        return say_fail(EXIT_FAIL, "out of memory");
    head_fill_job(j, aj, args, relay, *nodes, n, lifeline, NULL);
    j->subtree = aj;
    return relay->failed ? say_fail(EXIT_FAIL, "out of memory") : 0;
}

/* This node's relay (lib/rendezvous/broker_relay_srv.h): the ranks, the watchers
 * and the rendezvous talk to it on a local socket, it to the head on one
 * connection.  The agents below were already handed the head's address.
 * DLRUN_NO_RELAY=1: everything connects to the head as before. */
static struct relay_srv *agent_relay(struct job *j)
{
    const char *up = getenv("DLRUN_BROKER"), *tok = getenv("DLRUN_TOKEN");
    uint8_t t[TOKEN_BYTES];
    struct err err = { "" };
    struct relay_srv *s;

    if (up)
        snprintf(j->head_broker, sizeof j->head_broker, "%s", up);
    if (!up || !tok || getenv("DLRUN_NO_RELAY") ||
        token_from_hex(tok, t, &err) < 0)
        return NULL;
    s = relay_srv_start(up, t,
                        (uint32_t)j->plan.nodes[j->plan.self_node].nranks,
                        j->errdir, &err);
    if (!s)     /* the head is still reachable directly */
        say("agent: %s; ranks connect to the head", err.msg);
    else
        setenv("DLRUN_BROKER", relay_srv_addr(s), 1);
    return s;
}

/* hc->cl is handed to the headlink (or closed). */
static int agent_start(struct job *j, char **prog, struct headlink_conf *hc)
{
    struct agent_job aj = { .prog = prog };
    struct strv args = { 0 }, relay = { 0 };
    struct envset xenv = { .no_from = 1 };
    int *nodes = NULL, life[2] = { -1, -1 }, rc = 0;
    struct relay_srv *rsrv = NULL;
    struct headlink *link = NULL;
    struct err err = { "" };

    if (j->opt.spawn && (pipe2(life, O_CLOEXEC) < 0 ||
                         (rc = prepare_subtree(j, &aj, &args, &relay, &xenv,
                                               &nodes, life[0])) != 0))
        goto out;
    rsrv = agent_relay(j);
    link = headlink_start(hc, &err);
    hc->cl = NULL;
    if (!link) {
        rc = say_fail(EXIT_FAIL, "agent: cannot watch the head: %s", err.msg);
        goto out;
    }
    rc = run_launch(j, prog);   /* agrees on the rendezvous first */
out:
    client_close(hc->cl);
    hc->cl = NULL;
    headlink_end(link);
    relay_srv_stop(rsrv);
    strv_free(&args);
    strv_free(&relay);
    envset_free_envp(aj.envp);
    envset_free(&xenv);
    free(nodes);
    if (life[0] >= 0)
        close(life[0]);
    if (life[1] >= 0)
        close(life[1]);
    return rc;
}

/* The head's plan and settings from its broker (every agent holds its
 * address and token: srun's environment, or stdin under ssh), decoded into
 * w (the caller frees it after j), and j made from them.  The connection
 * goes to *keep (the caller's to close): the heartbeat's own.  0, or the
 * exit code after printing. */
static int agent_take_plan(struct job *j, struct planwire *w,
                           struct client **keep)
{
    struct err err = { "" };
    struct client *c = client_from_env(10000, &err);
    void *val = NULL;
    size_t len = 0;
    int rc = EXIT_FAIL;

    /* no wait: the head put it before it started any agent */
    if (!c || client_get(c, HEAD_PLAN_KEY, 0, &val, &len, &err) != CLIENT_OK) {
        say("agent: cannot get the head's plan (%s) from its broker: %s",
            HEAD_PLAN_KEY, err.msg);
        goto out;
    }
    if (planwire_decode(val, len, w, &err) < 0 ||
        agent_take_settings(j, w, &err) < 0 ||
        planwire_plan(w, &j->alloc, &j->plan, &err) < 0) {
        say("agent: the head's plan: %s", err.msg);
        goto out;
    }
    /* DLRUN_X_ carriers in this environment: ranks never see them */
    if (envwire_take_exports(&j->opt.exports, &j->opt.nexports, &j->xvalues,
                             &err) < 0) {
        say("agent: %s", err.msg);
        goto out;
    }
    rc = 0;
    *keep = c;
    c = NULL;
out:
    free(val);
    client_close(c);
    return rc;
}

/* The program is there, its working directory entered, the rest of the
 * job prepared from the plan.  0, or the exit code after saying why. */
static int agent_ready(struct job *j, int argc)
{
    if (j->opt.prog >= argc && !j->opt.preflight)
        return say_fail(EXIT_USAGE, "agent: no program");
    if (j->opt.wdir && chdir(j->opt.wdir) < 0)
        return say_fail(EXIT_USAGE, "cannot enter the working directory %s "
                        "on this node: %s (pass --wdir)", j->opt.wdir,
                        strerror(errno));
    return job_prepare_planned(j, 1);
}

int agent_run(struct job *j, int argc, char **argv)
{
    struct planwire pw = { 0 };
    static char host[256];
    struct headlink_conf hc = { .lifeline = -1, .lost = agent_lost };
    int rc = EXIT_FAIL, self;

    if (j->opt.lifeline && (hc.lifeline = take_lifeline()) < 0)
        goto out;
    if ((rc = agent_take_plan(j, &pw, &hc.cl)) != 0)
        goto out;
    if (j->opt.spare_agent) {   /* a spare's: it runs no rank */
        rc = agent_spare(j, argv + j->opt.prog, &hc);
        goto out;
    }
    self = find_self_node(j);
    tmpdir_quiet(self > 0);     /* a TMPDIR not used: the first node says it */
    if ((rc = agent_ready(j, argc)) != 0)
        goto out;
    j->plan.self_node = self;
    if (j->plan.self_node < 0)
        goto out;           /* the plan has no rank on this node */
    if (j->opt.preflight) {
        rc = agent_preflight(j, argv + j->opt.prog);
        goto out;
    }
    hc.node = j->plan.self_node;
    /* the watchers may outlive j: their copy of the host name */
    snprintf(host, sizeof host, "%s", j->plan.nodes[hc.node].host);
    hc.ctx = host;
    hc.hb_ms = j->opt.remote.heartbeat_s * 1000;
    hc.beat = getenv("DLRUN_BROKER") != NULL;
    rc = agent_start(j, argv + j->opt.prog, &hc);
out:
    client_close(hc.cl);
    job_free(j);    /* before the wire its options borrow from */
    planwire_free(&pw);
    return rc;
}
