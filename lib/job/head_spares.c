/* head_spares.c - --spares and --nnodes MIN:MAX on the head's side:
 * whether an attempt ended with a node fault, the node excluded and a
 * spare planned in its place or the job planned again on fewer nodes
 * (lib/place/nodeset.h holds the node set), the end when too few are
 * left, what the ranks are told and the line for the next submission. */
#include "job/head.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "place/nodeset.h"
#include "util/clock.h"
#include "util/say.h"
#include "where/sched.h"

/* The agent process that failed first, when it was killed rather than
 * ending with its rank's code: its plan node, else -1. */
static int killed_agent(const struct supervise *sv, int *code)
{
    const struct sv_rank *r;

    if (sv->failed < 0 || sv->failed >= sv->n)
        return -1;
    r = &sv->ranks[sv->failed];
    if (r->rank == INT_MIN || r->rank >= 0)
        return -1;
    *code = WIFSIGNALED(r->status) ? 128 + WTERMSIG(r->status) :
            WIFEXITED(r->status) ? WEXITSTATUS(r->status) : 0;
    return *code >= 128 ? agent_proc_node(r->rank) : -1;
}

void head_classify(const struct job *j, const struct supervise *sv, int lost,
                   int hb_s, int rank, int status, struct head_fault *f)
{
    const struct plan *p = &j->plan;
    int code = 0, agent = killed_agent(sv, &code);
    int rank_node = rank >= 0 && rank < p->nranks ? p->rank_node[rank] : -1;

    f->node = -1;
    f->reason[0] = '\0';
    if (!j->nodeset || (sv->signal_received && lost < 0))
        return;
    if (lost >= 0) {
        f->node = lost;
        snprintf(f->reason, sizeof f->reason, "no heartbeat for %d s (link "
                 "down?)", hb_s);
    } else if (agent >= 0 && agent < p->nnodes && rank_node != agent) {
        f->node = agent;
        snprintf(f->reason, sizeof f->reason, "its agent ended with code %d "
                 "(killed?)", code);
    } else if (rank_node >= 0 && nodeset_node_signal(status)) {
        f->node = rank_node;
        snprintf(f->reason, sizeof f->reason, "rank %d was killed by signal "
                 "%d (%s)", rank, WTERMSIG(status), strsignal(WTERMSIG(status)));
    }
}

void head_classify_silent(const struct job *j, const struct supervise *sv,
                          const char *bye, int rank, struct head_fault *f)
{
    const struct sv_rank *r;
    int code, silent = -1;

    if (!j->nodeset || f->node >= 0 || rank >= 0 || !bye ||
        sv->signal_received || sv->failed < 0 || sv->failed >= sv->n)
        return;
    r = &sv->ranks[sv->failed];
    code = WIFSIGNALED(r->status) ? 128 + WTERMSIG(r->status) :
           WIFEXITED(r->status) ? WEXITSTATUS(r->status) : 0;
    if (r->rank != INT_MIN || code < 128)
        return;
    for (int i = 0; i < j->plan.nnodes; i++) {
        if (bye[i])
            continue;
        if (silent >= 0)
            return;
        silent = i;
    }
    if (silent < 0)
        return;
    f->node = silent;
    snprintf(f->reason, sizeof f->reason, "its agent ended without a word "
             "(killed?) and the agents' step with code %d", code);
}

/* The plan again on the allocation's nodes of the moment (a spare in),
 * with its binding and rendezvous.  0, or the exit code after saying why. */
static int head_replan(struct job *j)
{
    struct err err = { "" };

    plan_free(&j->plan);
    free(j->bind);
    j->bind = NULL;
    free(j->rdv.worker_ports);
    j->rdv.worker_ports = NULL;
    if (plan_build(&j->alloc, &j->opt.plan, &j->plan, &err) < 0)
        return say_fail(EXIT_USAGE, "cannot plan the job again on the nodes "
                        "left: %s", err.msg);
    return job_prepare_planned(j, 1);
}

/* host's node out of ns after f: a spare in its place (*spare), else
 * with --nnodes MIN:MAX above MIN no node (*spare NULL: one node fewer).
 * 1: out; 0: it stays (no spare, the job cannot shrink); -1 with err. */
static int take_out(struct nodeset *ns, const char *host,
                    const struct head_fault *f, int restart,
                    const char **spare, struct err *err)
{
    int rc = nodeset_exclude(ns, host, f->reason, restart, clock_wall(),
                             spare, err);

    if (rc != 0 || !ns->min_nodes || nodeset_exhausted(ns))
        return rc;
    return nodeset_shrink(ns, host, f->reason, restart, clock_wall(),
                          err) < 0 ? -1 : 1;
}

int head_replace_node(struct job *j, const struct head_fault *f, int restart,
                      int max)
{
    struct err err = { "" };
    const char *spare = NULL, *host;
    struct ns_recovery *rec;
    int rc;

    if (!j->nodeset || f->node < 0 || f->node >= j->plan.nnodes)
        return 0;
    host = j->plan.nodes[f->node].host;
    rc = take_out(j->nodeset, host, f, restart, &spare, &err);
    if (rc < 0)
        return say_fail(-1, "cannot exclude node %s: %s", host, err.msg);
    if (rc == 0) {
        say("node %s failed: %s; no spare left: restarting the job on the "
            "same %d nodes (restart %d of %d)", host, f->reason,
            j->plan.nnodes, restart, max);
        return 1;
    }
    rec = &j->nodeset->excl[j->nodeset->nexcl - 1].rec;
    rec->fault_ms = f->fault_ms;
    rec->detect_ms = f->detect_ms;
    rec->down_ms = f->down_ms;
    if (head_replan(j) != 0)
        return -1;
    rec->planned_ms = clock_ms();
    if (spare)
        say("node %s excluded: %s; spare %s in; restarting %d ranks, attempt "
            "%d of %d", host, f->reason, spare, j->plan.nranks, restart + 1,
            max + 1);
    else
        say("node %s excluded: %s; no spare left; shrinking to %d node%s (%d "
            "rank%s), attempt %d of %d", host, f->reason, j->plan.nnodes,
            j->plan.nnodes == 1 ? "" : "s", j->plan.nranks,
            j->plan.nranks == 1 ? "" : "s", restart + 1, max + 1);
    return 1;
}

int head_nodes_exhausted(struct job *j, const struct head_fault *f,
                         int attempt)
{
    struct nodeset *ns = j->nodeset;
    struct err err = { "" };
    const char *host;

    if (!ns || f->node < 0 || f->node >= j->plan.nnodes ||
        !nodeset_exhausted(ns))
        return 0;
    host = j->plan.nodes[f->node].host;
    if (nodeset_shrink(ns, host, f->reason, attempt, clock_wall(), &err) < 0)
        return say_fail(EXIT_FAIL, "cannot exclude node %s: %s", host,
                        err.msg);
    return say_fail(EXIT_NODES, "node %s excluded: %s; no spare left and "
                    "%zu node%s remain%s, fewer than --nnodes %zu:%zu's "
                    "minimum: the job ends; run it again on more nodes or "
                    "with a lower MIN", host, f->reason, ns->nactive,
                    ns->nactive == 1 ? "" : "s", ns->nactive == 1 ? "s" : "",
                    ns->min_nodes, ns->max_nodes);
}

int head_wire_excluded(const struct job *j, struct strv *env)
{
    char list[4096];

    if (!j->nodeset)
        return 0;
    strv_addf(env, "DLRUN_EXCLUDED_NODES=%s",
              nodeset_excluded_list(j->nodeset, list, sizeof list));
    return env->failed ? -1 : 0;
}

void head_spares_end(const struct job *j)
{
    const struct nodeset *ns = j->nodeset;
    const char *exclude = j->alloc.sched ? j->alloc.sched->exclude : NULL;
    char list[4096], next[8192];

    if (!ns || !ns->nexcl)
        return;
    nodeset_excluded_list(ns, list, sizeof list);
    nodeset_next_submission(ns, exclude, next, sizeof next);
    if ((!exclude && j->alloc.kind == ALLOC_JOB) || !next[0])
        say("excluded node%s: %s; leave %s out of the next submission",
            ns->nexcl == 1 ? "" : "s", list, ns->nexcl == 1 ? "it" : "them");
    else
        say("excluded node%s: %s; for the next submission: %s",
            ns->nexcl == 1 ? "" : "s", list, next);
}
