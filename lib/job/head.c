/* head.c - a plan that spans other hosts: start one `dlrun agent` per
 * node (srun inside Slurm, ssh relays elsewhere: lib/launchers/), serve the
 * broker the agents and ranks use, watch the agents' heartbeats, and exit
 * with the code of the rank that failed first.
 *
 * Every agent adds to the counter dlrun.hb.NODE about once a second and
 * waits on dlrun.ctl.SEQ, where the head puts the signals it forwards
 * (ssh cannot deliver signals to root's commands).  An agent whose counter
 * stops for --heartbeat-timeout is lost (killed, or its network cut): the
 * job ends.  The agents watch the head the same way. */
#include "job/head.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rendezvous/broker.h"
#include "rendezvous/broker_loop.h"
#include "rendezvous/client.h"
#include "run/engine.h"
#include "util/envset.h"
#include "run/errfile.h"
#include "run/failwire.h"
#include "util/evloop.h"
#include "run/headlink.h"
#include "run/heartbeat.h"
#include "job/horovod.h"
#include "run/proc.h"
#include "util/net.h"
#include "job/preflight_judge.h"
#include "job/preflight_run.h"
#include "job/progress.h"
#include "job/head_recovery.h"
#include "job/head_requeue.h"
#include "place/nodeset.h"
#include "job/status.h"
#include "util/strv.h"
#include "run/supervise.h"
#include "rendezvous/token.h"
#include "run/watch.h"
#include "util/clock.h"
#include "util/say.h"

extern char **environ;

struct head {
    struct broker *broker;
    struct watch *server;       /* the broker's thread: serve() */
    char addr[300];             /* DLRUN_BROKER: host:port */
    char token[TOKEN_HEX_LEN + 1];
    struct heartbeat *hb;       /* the agents', checked by serve() */
    /* signals for the agents (ssh) */
    struct client *ctl;
    int ctl_seq;
    const struct supervise *sv;     /* the agents' processes */
    int failed_rank;                /* the first failure the agents told */
    const char *launcher;           /* the agents' launcher's name (srun,
                                       flux: one process for all) */
    struct head_stall *stall;       /* --stall-timeout, or NULL */
    struct head_progress prog;      /* -v steps, nodes still waited for */
    struct head_fault fault;        /* --spares: the node to blame, or -1 */
    atomic_long lost_ms, lost_seen_ms;  /* a lost agent: found, last seen
                                           (the broker thread's writes) */
    const struct nodeset *ns;
    /* this attempt follows a node fault: its excluded node's recovery
     * (an index in j->nodeset->excl, -1: none); its end, which the
     * broker thread sees and the summary takes */
    long recover;
    struct head_recovery rec;
    struct head_requeue requeue;    /* --spares: the job requeues itself */
};

int head_wanted(const struct job *j)
{
    const struct plan *p = &j->plan;

    if (p->per_task || p->self_node >= 0 || j->agent)
        return 0;
    for (int i = 0; i < p->nnodes; i++)
        if (!net_is_this_host(p->nodes[i].host))
            return 1;
    return 0;
}

/* In the broker thread: has an agent gone silent?  The first one found
 * ends the job (SIGTERM to dlrun itself, which its supervisor forwards). */
static void watch_heartbeats(struct head *h)
{
    long now = clock_ms();
    int lost = heartbeat_check(h->hb, h->broker, now);

    if (lost < 0)
        return;
    atomic_store(&h->lost_seen_ms, heartbeat_seen_ms(h->hb, lost));
    atomic_store(&h->lost_ms, now);
    kill(getpid(), SIGTERM);
}

/* In the broker thread, after a node fault's restart: once every node's
 * ranks run again, the recovery's end, and with -v its line. */
static void watch_recovery(struct head *h)
{
    if (h->recover >= 0 && h->prog.all_ranks)
        head_recovery_up(&h->rec, clock_ms());
}

/* Every 250 ms in the broker thread: heartbeats, and -v's steps. */
static int head_tick(void *ctx, struct err *err)
{
    struct head *h = ctx;

    (void)err;
    watch_heartbeats(h);
    progress_head_tick(&h->prog, h->broker, heartbeat_counters(h->hb), 0);
    watch_recovery(h);
    return 0;
}

/* The broker's watcher (lib/run/watch.h), one step: serve until
 * head_stop_broker makes wake readable. */
static int serve(void *arg, int wake)
{
    struct head *h = arg;
    struct err err = { "" };
    struct broker_loop bl;
    struct evloop *l = evloop_create(&err);

    if (!l || broker_loop_add(&bl, h->broker, l, &err) < 0 ||
        evloop_stop_on_fd(l, wake, &err) < 0 ||
        !evloop_add_timer(l, 0, 250, head_tick, h, &err) ||
        evloop_run(l, &err) < 0)
        say("warning: the head's broker stopped: %s", err.msg);
    /* a last look: steps a short job passed between two looks */
    progress_head_tick(&h->prog, h->broker, heartbeat_counters(h->hb), 1);
    evloop_destroy(l);
    return 1;
}

/* The name to resolve of a node of the plan that is not this host (there
 * is one: head_wanted); an ssh alias's HostName. */
static const char *remote_node(const struct plan *p)
{
    for (int i = 0; i < p->nnodes; i++)
        if (!net_is_this_host(p->nodes[i].host))
            return plan_addr_name(p, i);
    return plan_addr_name(p, 0);
}

/* The broker listens only where the agents reach it: this host's address
 * on --iface, else the one this host uses to reach the nodes (a login node
 * may have several). */
static int head_start_broker(struct head *h, const struct job *j,
                             struct err *err)
{
    uint8_t tok[TOKEN_BYTES];
    char ip[200];

    if (token_new(tok, err) < 0 ||
        (j->opt.rdv.iface ? net_iface_addr(j->opt.rdv.iface, ip, sizeof ip, err)
                          : net_route_addr(remote_node(&j->plan), ip, sizeof ip,
                                           err)) < 0)
        return -1;
    /* the ranks of every node connect here: a file each */
    broker_raise_nofile();
    h->broker = broker_create(ip, 0, tok, NULL, err);
    if (!h->broker)
        return -1;
    if (j->opt.gloo)
        broker_on_auth(h->broker, horovod_allow_peer, NULL);
    token_to_hex(tok, h->token);
    snprintf(h->addr, sizeof h->addr, strchr(ip, ':') ? "[%s]:%d" : "%s:%d", ip,
             broker_port(h->broker));
    if (!(h->server = watch_start(serve, NULL, h, err))) {
        broker_destroy(h->broker);
        h->broker = NULL;
        return -1;
    }
    return 0;
}

static void head_stop_broker(struct head *h)
{
    if (!h->broker)
        return;
    watch_stop(h->server);
    h->server = NULL;
    if (getenv("DLRUN_BROKER_STATS")) {     /* tests: who connected */
        struct broker_stats st;
        broker_get_stats(h->broker, &st);
        say("broker: %zu connections, %zu requests", st.accepted,
            st.requests);
    }
    broker_destroy(h->broker);
    h->broker = NULL;
}

/* The supervisor's forward hook (ssh): put the signal where every agent
 * waits for it. */
static void forward_to_agents(void *ctx, int sig)
{
    struct head *h = ctx;
    struct err err = { "" };
    int lost = heartbeat_lost(h->hb);

    /* a lost agent's relay would wait for it until the kill timeout */
    for (int i = 0; lost >= 0 && i < h->sv->n; i++)
        if (h->sv->ranks[i].running && h->sv->ranks[i].rank == -1 - lost)
            kill(h->sv->ranks[i].pid, SIGKILL);

    if (!h->ctl && !(h->ctl = client_connect(h->addr, h->token, 2000, &err)))
        goto fail;
    if (headlink_forward(h->ctl, &h->ctl_seq, sig, &err) == 0)
        return;
fail:
    say("cannot pass signal %d to the agents: %s", sig, err.msg);
}

static void bad_report(void *ctx, const char *key, const char *why)
{
    (void)ctx;
    say("ignoring the failure report %s: %s (not written by an agent)", key,
        why);
}

/* Which rank failed first, as the agents told the broker
 * (lib/run/failwire.h); a bad report is named and skipped.  0 when one
 * held up, -1 when none. */
static int first_failure(const struct head *h, const struct plan *p,
                         int *rank, int *status, int *pid)
{
    struct err err = { "" };
    struct client *c = client_connect(h->addr, h->token, 2000, &err);
    struct fw_failure f;
    int rc = c ? fw_failure_first(c, p->nranks, &f, bad_report, NULL) : -1;

    client_close(c);
    if (rc == 0) {
        *rank = f.rank;
        *status = f.status;
        *pid = f.pid;
    }
    return rc;
}

/* The failing rank's root cause, when its agent sent one (the rank's
 * TORCHELASTIC_ERROR_FILE lies on its node). */
static void head_root_cause(const struct head *h, int rank)
{
    struct err err = { "" };
    struct client *c = client_connect(h->addr, h->token, 2000, &err);
    struct errfile ef;
    void *val = NULL;
    size_t len = 0;
    char key[64];

    snprintf(key, sizeof key, "dlrun.cause.%d", rank);
    if (c && client_get(c, key, 0, &val, &len, &err) == CLIENT_OK &&
        errfile_from_wire(val, len, &ef) == 0)
        say("rank %d's root cause (its TORCHELASTIC_ERROR_FILE): %s", rank,
            ef.message);
    free(val);
    client_close(c);
}

/* --spares: which agents said they ended (dlrun.bye.NODE), into a new
 * array of nnodes flags (the caller frees it), or NULL. */
static char *agents_bye(const struct head *h, const struct plan *p)
{
    struct err err = { "" };
    struct client *c = client_connect(h->addr, h->token, 2000, &err);
    char *bye = c ? calloc((size_t)p->nnodes + 1, 1) : NULL;
    char key[64];

    for (int i = 0; bye && i < p->nnodes; i++) {
        void *val = NULL;
        size_t len = 0;
        snprintf(key, sizeof key, "dlrun.bye.%d", i);
        bye[i] = client_get(c, key, 0, &val, &len, &err) == CLIENT_OK;
        free(val);
    }
    client_close(c);
    return bye;
}

/* The moments of the attempt's end, into f (now: every agent ended): a
 * lost agent's from its heartbeats, else the first failed agent
 * process's end (its node's fault, as far as the head can tell). */
static void fault_times(const struct head *h, const struct supervise *sv,
                        struct head_fault *f)
{
    long now = clock_ms(), lost = atomic_load(&h->lost_ms);
    long seen = atomic_load(&h->lost_seen_ms);

    f->down_ms = now;
    f->fault_ms = f->detect_ms = now;
    if (lost) {
        f->detect_ms = lost;
        f->fault_ms = seen ? seen : lost;
    } else if (sv->failed >= 0 && sv->failed < sv->n) {
        double ago = clock_wall() - sv->ranks[sv->failed].end;
        if (ago > 0 && ago * 1000 < now)
            f->fault_ms = f->detect_ms = now - (long)(ago * 1000);
    }
}

/* One line for how the job ended, and the exit code: the failing rank's,
 * else a lost agent's, else the agent process's that failed. */
static int head_outcome(const struct job *j, struct head *h,
                        const struct supervise *sv, int rc)
{
    const struct plan *p = &j->plan;
    char stopped[64];
    int rank = -1, status = 0, pid = 0, lost = heartbeat_lost(h->hb);

    if (head_stall_finish(h->stall)) {  /* its lines said why */
        if (j->nodeset && !sv->signal_received)
            h->fault.node = head_stall_node(h->stall, h->fault.reason,
                                            sizeof h->fault.reason);
        fault_times(h, sv, &h->fault);
        return EXIT_STALL;
    }
    snprintf(stopped, sizeof stopped, "stopped the job on %d node%s",
             p->nnodes, p->nnodes == 1 ? "" : "s");
    if (first_failure(h, p, &rank, &status, &pid) < 0)
        rank = -1;
    head_classify(j, sv, lost, heartbeat_timeout_ms(h->hb) / 1000, rank,
                  status, &h->fault);
    if (j->nodeset && h->fault.node < 0 && rank < 0) {
        char *bye = agents_bye(h, p);
        head_classify_silent(j, sv, bye, rank, &h->fault);
        free(bye);
    }
    fault_times(h, sv, &h->fault);
    if (rank >= 0) {
        h->failed_rank = rank;
        job_report_failure(rank, p->nodes[p->rank_node[rank]].host, pid,
                           status, stopped);
        head_root_cause(h, rank);
        return sv->signal_received && lost < 0 ? rc :
               supervise_exit_code(status);
    }
    if (lost >= 0)
        return say_fail(EXIT_FAIL, "lost the agent on %s: no heartbeat for "
                        "%d s (killed, or its network is down); %s",
                        j->plan.nodes[lost].host,
                        heartbeat_timeout_ms(h->hb) / 1000, stopped);
    if (sv->failed >= 0 && !sv->signal_received) {
        const struct sv_rank *r = &sv->ranks[sv->failed];
        if (r->rank == INT_MIN)
            say("%s (the agents) ended with code %d", h->launcher, rc);
        else
            say("the agent on %s ended with code %d; %s",
                j->plan.nodes[agent_proc_node(r->rank)].host, rc, stopped);
    }
    job_report_interrupt(j, sv, rc, 1);
    return rc;
}

/* How the agents' attempt ended, for the engine (lib/engine.h): every
 * failure the head saw may be retried; a lost agent's SIGTERM is the
 * head's own, not a stop. */
static void head_end(const struct head *h, const struct supervise *sv,
                     int rc, struct engine_end *end)
{
    int sig = sv->signal_received;

    end->rc = rc;
    end->failed = 1;
    end->signal = sig && heartbeat_lost(h->hb) < 0 ? sig : 0;
}

/* How the job ended (a line), whether it starts again, and the summary
 * of the last attempt (the broker still holds the agents' reports).
 * Returns the exit code. */
static int head_finish(struct job *j, struct head *h,
                       const struct supervise *sv, int rc,
                       const struct engine *e, struct engine_end *end)
{
    int out;

    rc = head_outcome(j, h, sv, rc);
    head_end(h, sv, rc, end);
    /* no node left for the faulty one's place: a job that may be
     * requeued is, without it; below --nnodes MIN the job ends, with its
     * summary */
    if (engine_again(e, end) &&
        head_requeue_check(j, &h->fault, &h->requeue)) {
        head_requeue_exclude(j, &h->requeue, *e->restart + 1);
        end->failed = 0;
    } else if (engine_again(e, end) &&
               (out = head_nodes_exhausted(j, &h->fault,
                                           *e->restart + 1)) != 0) {
        rc = end->rc = out;
        end->failed = 0;
    }
    if (j->opt.summary && !engine_again(e, end)) {
        end->failed = 0;    /* the last attempt, even if the summary fails */
        if (head_summary(j, h->addr, h->token, h->failed_rank,
                         sv->signal_received, rc) < 0)
            rc = rc ? rc : EXIT_FAIL;
    }
    return head_requeue(j, &h->requeue, rc);     /* after the summary */
}

/* Where the signals dlrun receives go: through the broker when the
 * backend cannot deliver them (ssh), else to what it started (srun's
 * step).  h and fwd outlive sv's run. */
static void head_forward(struct head *h, const struct launcher *l,
                         struct supervise *sv, struct launcher_fwd *fwd)
{
    if (!(l->caps & LAUNCHER_SIGNALS)) {
        sv->forward = forward_to_agents;
        sv->forward_ctx = h;
        h->sv = sv;
    } else {
        sv->forward = launcher_forward;
        sv->forward_ctx = fwd;
    }
}

/* Start the agents, supervise them like ranks, say how the job ended. */
static int head_supervise(struct job *j, struct head *h,
                          const struct launcher *l,
                          struct agent_job *aj, const struct engine *e,
                          struct engine_end *end)
{
    struct err err = { "" };
    size_t spares = j->nodeset ? j->nodeset->nspare : 0;
    struct sv_rank *procs = calloc((size_t)aj->nnodes + spares, sizeof *procs);
    struct supervise sv = { .ranks = procs,
                            .kill_timeout_ms = j->opt.kill_timeout_ms,
                            .keep_going = j->preflight };
    struct launched run = { .procs = procs };
    struct launcher_fwd fwd = { { l }, { &run } };
    struct pf_collect *pf = NULL;
    struct head_reserve *reserve = NULL;
    int rc;

    if (!procs)
        return say_fail(EXIT_FAIL, "out of memory");
    head_forward(h, l, &sv, &fwd);
    h->stall = head_stall_create(j, h->addr, h->token);
    head_stall_watch(h->stall, &sv);
    fflush(NULL);
    if (l->start(&(struct launch_req){ .agents = aj }, &run, &err) < 0) {
        rc = say_fail(run.exec_errno ? proc_exec_code(run.exec_errno)
                                     : EXIT_FAIL, "%s", err.msg);
        goto out;
    }
    sv.n = run.n;
    progress_step("agents started (%s, %d nodes)", l->name, aj->nnodes);
    reserve = head_reserve_start(j, l, aj, h->addr, h->token, &sv,
                                 procs + run.n);
    if (j->preflight)
        pf = preflight_collect_start(j, h->addr, h->token, &sv);
    rc = supervise_run(&sv);
    head_reserve_end(reserve);  /* the spares' agents end with the attempt */
    /* before the summary; the broker thread says nothing more of it */
    if (h->recover >= 0)
        j->nodeset->excl[h->recover].rec.up_ms = head_recovery_close(&h->rec);
    if (j->preflight) {     /* a table, not a job's outcome */
        rc = preflight_collect_end(pf, j, &sv);
        end->signal = sv.signal_received;
        goto out;
    }
    rc = head_finish(j, h, &sv, rc, e, end);
out:
    l->destroy(&run);   /* supervised to the end: only the state is left */
    end->rc = rc;
    h->sv = NULL;
    head_stall_free(h->stall);
    h->stall = NULL;
    free(procs);
    return rc;
}

/* Heartbeat bookkeeping for the broker thread. */
static int head_watch_init(struct head *h, const struct job *j,
                           struct err *err)
{
    progress_head_init(&h->prog, &j->plan);
    h->hb = heartbeat_create(j->plan.nnodes,
                             j->opt.remote.heartbeat_s * 1000, err);
    return h->hb ? 0 : -1;
}

static void head_free(struct head *h)
{
    client_close(h->ctl);
    heartbeat_free(h->hb);
}

/* The environment of the agents' starters: ours plus the broker. */
static char **agent_envp(const struct head *h, struct envset *add)
{
    struct err err = { "" };

    if (envset_set(add, "DLRUN_BROKER", h->addr, &err, "head") < 0 ||
        envset_set(add, "DLRUN_TOKEN", h->token, &err, "head") < 0 ||
        (h->ns && envset_set(add, "DLRUN_AGENT_BYE", "1", &err, "head") < 0))
        return NULL;
    return envset_envp(add, environ);
}

/* What every attempt of the head needs (lib/engine.h's ctx). */
struct head_run {
    struct job *j;
    const struct launcher *l;
    char **prog;
    const sigset_t *orig;       /* the agents' signal mask */
    struct head_fault fault;    /* how the last attempt ended (--spares) */
    long recover;               /* the node fault this attempt recovers
                                   from: an index in excl, -1 none */
    int stop_rc;                /* no attempt can start again: its code */
};

/* One start of every agent, with a broker of its own (a new token, no
 * keys left from an earlier attempt). */
static void head_attempt(void *ctx, const struct engine *e,
                         struct engine_end *end)
{
    struct head_run *hr = ctx;
    struct job *j = hr->j;
    struct head h = { 0 };
    struct strv args = { 0 }, relay = { 0 };
    struct agent_job aj = { .plan = &j->plan, .prog = hr->prog };
    struct envset add = { .no_from = 1 };
    struct err err = { "" };
    int *nodes = NULL, life[2] = { -1, -1 }, rc = EXIT_FAIL;

    h.failed_rank = -1;
    h.launcher = hr->l->name;
    h.fault.node = hr->fault.node = -1;
    h.ns = j->nodeset;
    h.recover = hr->recover;
    hr->recover = -1;
    if (hr->stop_rc) {      /* the node set could not be planned again */
        end->rc = hr->stop_rc;
        return;
    }
    if (j->nodeset && !j->preflight &&
        nodeset_add_attempt(j->nodeset, &j->plan) < 0) {
        end->rc = say_fail(EXIT_FAIL, "out of memory");
        return;
    }
    head_recovery_init(&h.rec, h.recover >= 0 ?
                       &j->nodeset->excl[h.recover].rec : NULL);
    /* the Gloo store first: the broker tells it where agents connect from */
    if (!j->preflight && horovod_begin(j) != 0)
        goto out;
    if (head_watch_init(&h, j, &err) < 0 ||
        head_start_broker(&h, j, &err) < 0) {
        rc = say_fail(EXIT_FAIL, "cannot start the broker: %s",
                      err.msg[0] ? err.msg : "out of memory");
        goto out;
    }
    status_head_begin(j, h.addr, h.token);
    if (pipe2(life, O_CLOEXEC) < 0 || !(nodes = head_nodes(&j->plan)) ||
        agent_args(j, &args) < 0 || !(aj.envp = agent_envp(&h, &add))) {
        rc = say_fail(EXIT_FAIL, "cannot prepare the agents: out of resources");
        goto out;
    }
    if (head_send_plan(j, h.addr, h.token, &err) < 0) {
        rc = say_fail(EXIT_FAIL, "cannot hand the agents the plan: %s", err.msg);
        goto out;
    }
    head_fill_job(j, &aj, &args, &relay, nodes, j->plan.nnodes, life[0],
                  hr->orig);
    rc = relay.failed ? say_fail(EXIT_FAIL, "out of memory")
                      : head_supervise(j, &h, hr->l, &aj, e, end);
    hr->fault = h.fault;
out:
    end->rc = rc;
    status_head_end();
    head_stop_broker(&h);
    head_free(&h);
    head_recovery_destroy(&h.rec);
    envset_free_envp(aj.envp);
    envset_free(&add);
    strv_free(&args);
    strv_free(&relay);
    free(nodes);
    if (life[0] >= 0)
        close(life[0]);
    if (life[1] >= 0)
        close(life[1]);
}

/* The table of a probe between attempts: its first bad node into the
 * fault ctx (lib/job/preflight_judge.h). */
static void probe_seen(void *ctx, const struct pf_table *t)
{
    struct head_fault *f = ctx;

    for (int i = 0; i < t->plan->nnodes; i++)
        if (t->nodes[i].why[0]) {
            f->node = i;
            snprintf(f->reason, sizeof f->reason, "probe '%s' failed: "
                     "%.150s", t->nodes[i].probe, t->nodes[i].why);
            return;
        }
}

/* Probe the next attempt's nodes as a preflight does, without its lines:
 * the first node that failed a probe into f (node -1: none, or the
 * probes could not run; the head's lines said why). */
static void head_probe(struct head_run *hr, const struct engine *e,
                       struct head_fault *f)
{
    struct job *j = hr->j;
    const struct pf_show show = { probe_seen, f };
    struct head_fault keep = hr->fault;
    struct engine_end end = { 0 };
    long recover = hr->recover;
    int fanout = j->opt.remote.fanout;

    memset(f, 0, sizeof *f);
    f->node = -1;
    j->preflight = j->pf_quiet = 1;
    j->pf_show = &show;
    /* every agent from the head, as job_preflight's */
    if (fanout < j->plan.nnodes)
        j->opt.remote.fanout = j->plan.nnodes;
    hr->recover = -1;
    head_attempt(hr, e, &end);
    if (engine_stop_signal(end.signal)) {   /* told to stop meanwhile */
        hr->stop_rc = 128 + end.signal;
        say("stopped by signal %d while probing the nodes: not restarting",
            end.signal);
    }
    hr->recover = recover;
    hr->fault = keep;
    j->opt.remote.fanout = fanout;
    j->preflight = j->pf_quiet = 0;
    j->pf_show = NULL;
    f->fault_ms = f->detect_ms = f->down_ms = clock_ms();
}

/* --spares, before a restart: probe the next attempt's nodes; a node
 * that fails is a node fault (excluded, a spare in, and the new node set
 * probed again; below --nnodes MIN the job ends).  1: a line said so, 0:
 * every node passed, -1: the job cannot start again (said why; its code
 * in hr->stop_rc when not a plan's). */
static int head_probe_nodes(struct head_run *hr, const struct engine *e)
{
    struct head_fault f;
    int said = 0;

    for (;;) {
        size_t spares = hr->j->nodeset->nspare;
        head_probe(hr, e, &f);
        if (hr->stop_rc)
            return -1;
        if (f.node < 0)
            return said;
        if ((hr->stop_rc = head_nodes_exhausted(hr->j, &f, *e->restart)) ||
            head_replace_node(hr->j, &f, *e->restart, e->max_restarts) < 0)
            return -1;
        said = 1;
        if (hr->j->nodeset->nspare == spares)   /* no new node to probe */
            return said;
    }
}

static void head_restarting(void *ctx, const struct engine *e)
{
    struct head_run *hr = ctx;
    struct nodeset *ns = hr->j->nodeset;
    size_t before = ns ? ns->nexcl : 0;
    int rc = head_replace_node(hr->j, &hr->fault, *e->restart,
                               e->max_restarts);

    if (rc >= 0 && ns) {
        int probed = head_probe_nodes(hr, e);
        rc = probed < 0 ? -1 : rc || probed;
    }
    if (rc < 0 && !hr->stop_rc)
        hr->stop_rc = EXIT_USAGE;
    if (rc > 0 && ns && ns->nexcl > before) {   /* a spare came in */
        hr->recover = (long)before;
        /* the probes of the new node set are part of its plan */
        ns->excl[before].rec.planned_ms = clock_ms();
    }
    if (rc != 0)
        return;
    say("restarting the job on %d nodes (restart %d of %d)",
        hr->j->plan.nnodes, *e->restart, e->max_restarts);
}

int run_head_with(struct job *j, char **prog, const struct launcher *l)
{
    sigset_t block, orig;
    struct head_run hr = { .j = j, .l = l, .prog = prog, .orig = &orig,
                           .recover = -1 };
    struct engine e = { .max_restarts = j->opt.max_restarts,
                        .restart = &j->restart, .attempt = head_attempt,
                        .restarting = head_restarting, .ctx = &hr };
    int rc;

    /* blocked before the broker thread starts, so that it inherits the
     * mask and the signals reach the supervisor's signalfd, not the thread */
    supervise_signals(&block);
    job_stall_block(j, &block);
    sigprocmask(SIG_BLOCK, &block, &orig);
    if (j->opt.report_bindings)
        say("the agents report bindings per node");
    rc = engine_run(&e, NULL);
    head_spares_end(j);
    return rc;
}

int run_head(struct job *j, char **prog)
{
    struct err err = { "" };
    const struct launcher *l;

    l = launcher_select(&j->plan, &j->alloc, LAUNCHER_AGENTS,
                        j->opt.remote.launcher, &err);
    if (!l)
        return say_fail(EXIT_USAGE, "%s", err.msg);
    return run_head_with(j, prog, l);
}
