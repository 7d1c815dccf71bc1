/* agent_spare.c - `dlrun agent --spare-agent`: the agent of a spare node
 * held in reserve (--spares).  It beats like every agent (the head knows
 * it alive), probes its node once as a preflight does (dlrun's version,
 * the program and its Python import, GPUs, NCCL and CUDA), puts the
 * report where the head judges it, and then runs nothing until the head
 * ends it: a stop signal, its lifeline closed, or the head lost.
 *
 * Keys (NODE: its --node, past the plan's nodes): dlrun.spare.host.NODE
 * (its name, the head's), dlrun.hb.NODE (its beats), dlrun.spare.rep.NODE
 * (its report, lib/observe/preflight.h). */
#include "job/agent.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "observe/preflight.h"
#include "rendezvous/client.h"
#include "run/engine.h"
#include "run/headlink.h"
#include "run/supervise.h"
#include "util/say.h"

/* This spare's name, as the head put it, into host (n bytes). */
static int spare_name(struct client *c, int node, char *host, size_t n,
                      struct err *err)
{
    char key[64];
    void *v = NULL;
    size_t len = 0;

    snprintf(key, sizeof key, "dlrun.spare.host.%d", node);
    if (client_get(c, key, 0, &v, &len, err) != CLIENT_OK)
        return -1;
    snprintf(host, n, "%s", (char *)v);
    free(v);
    return 0;
}

/* The node's report for prog (borrowed; may be empty), from its working
 * directory, under dlrun.spare.rep.NODE. */
static int spare_report(const struct job *j, struct client *c, char **prog,
                        struct err *err)
{
    struct pf_report r = { .node = j->opt.node };
    char key[64], *text = NULL;
    size_t len = 0;
    int rc = -1;

    if (j->opt.wdir && chdir(j->opt.wdir) < 0)
        snprintf(r.prog_err, PF_STR, "cannot enter the working directory "
                 "%.100s: %s", j->opt.wdir, strerror(errno));
    else
        pf_probe(&r, prog && prog[0] ? prog : NULL, j->opt.pf_import,
                 j->opt.pf_timeout_s * 1000);
    r.node = j->opt.node;
    snprintf(key, sizeof key, "dlrun.spare.rep.%d", r.node);
    if (pf_encode(&r, &text, &len) < 0)
        err_set(err, "out of memory");
    else if (client_put(c, key, text, len, err) == CLIENT_OK)
        rc = 0;
    free(text);
    return rc;
}

/* Until a stop signal (the head's, forwarded, or the watchers' when the
 * head is lost); the others are for ranks, and it has none. */
static void spare_wait(const sigset_t *set)
{
    int sig = 0;

    while (sigwait(set, &sig) == 0 && !engine_stop_signal(sig))
        ;
}

int agent_spare(struct job *j, char **prog, struct headlink_conf *hc)
{
    static char host[256];      /* the watchers may outlive j */
    struct err err = { "" };
    struct headlink *link = NULL;
    struct client *c = NULL;
    sigset_t set;
    int rc = EXIT_FAIL;

    if (j->opt.node < j->plan.nnodes)
        return say_fail(EXIT_USAGE, "agent: --spare-agent needs a --node "
                        "past the plan's %d nodes", j->plan.nnodes);
    /* before the watchers' threads start: they inherit the mask */
    supervise_signals(&set);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    c = client_from_env(j->opt.remote.connect_timeout_s * 1000, &err);
    if (!c || spare_name(c, j->opt.node, host, sizeof host, &err) < 0)
        goto out;
    /* the probes' commands may look up their node by its name here */
    setenv("DLRUN_NODE", host, 1);
    hc->node = j->opt.node;
    hc->ctx = host;
    hc->hb_ms = j->opt.remote.heartbeat_s * 1000;
    hc->beat = getenv("DLRUN_BROKER") != NULL;
    link = headlink_start(hc, &err);
    hc->cl = NULL;
    if (!link || spare_report(j, c, prog, &err) < 0)
        goto out;
    spare_wait(&set);
    rc = EXIT_OK;
out:
    if (rc != EXIT_OK)
        say("agent of spare node %d: %s", j->opt.node, err.msg);
    headlink_end(link);
    client_close(c);
    return rc;
}
