/* t_agent_spare.c - `dlrun agent --spare-agent` in-process against a
 * broker thread: the spare node 3 (past the plan's three) finds its name
 * where the head put it, beats on dlrun.hb.3, reports its node for the
 * program (sh: found) under dlrun.spare.rep.3 with DLRUN_NODE set for the
 * probes, ignores a signal meant for ranks and ends on SIGTERM with 0.
 * A --node inside the plan is refused; a spare without its name fails. */
#include "job/agent.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "observe/preflight.h"
#include "rendezvous/broker_thread.h"
#include "rendezvous/client.h"
#include "rendezvous/token.h"
#include "run/headlink.h"
#include "run/supervise.h"
#include "util/say.h"
#include "tap.h"

static void drop(void *ctx, const char *line)
{
    (void)ctx;
    (void)line;
}

/* What the head's side saw, from the watcher thread. */
struct seen {
    char addr[64], hex[TOKEN_HEX_LEN + 1];
    struct pf_report r;
    int report, beat;
};

/* The head's side: wait for the report and a beat, then a signal for
 * ranks (ignored) and SIGTERM (the end). */
static void *head_side(void *arg)
{
    struct seen *s = arg;
    struct err err = { "" };
    struct client *c = client_connect(s->addr, s->hex, 5000, &err);
    void *v = NULL;
    size_t len = 0;

    if (c && client_get(c, "dlrun.spare.rep.3", 20000, &v, &len, &err) ==
        CLIENT_OK)
        s->report = pf_decode(v, len, &s->r, &err) == 0;
    free(v);
    v = NULL;
    if (c && client_get(c, "dlrun.hb.3", 10000, &v, &len, &err) == CLIENT_OK)
        s->beat = atoi(v) > 0;
    free(v);
    client_close(c);
    kill(getpid(), SIGUSR1);
    usleep(100000);
    kill(getpid(), SIGTERM);
    return NULL;
}

int main(void)
{
    uint8_t tok[TOKEN_BYTES];
    struct err err = { "" };
    struct plan_node hosts[3] = { { .host = "node1" }, { .host = "node2" },
                                  { .host = "node3" } };
    struct job j = { .plan = { .nnodes = 3, .nodes = hosts },
                     .opt = { .pf_timeout_s = 10, .node = 3 } };
    struct headlink_conf hc = { .lifeline = -1 };
    char *prog[] = { "sh", NULL };
    struct seen s = { .report = 0 };
    struct broker_thread *bt;
    struct client *c;
    pthread_t t;
    sigset_t set;

    alarm(120);         /* a hang guard */
    say_set_sink(drop, NULL);
    /* as the agent's: every thread with the signals blocked */
    supervise_signals(&set);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    j.opt.remote.connect_timeout_s = 5;
    j.opt.remote.heartbeat_s = 10;
    token_new(tok, &err);
    token_to_hex(tok, s.hex);
    bt = broker_thread_start("127.0.0.1", 0, tok, &err);
    if (!ok(bt != NULL, "a broker for the head"))
        return tap_done();
    snprintf(s.addr, sizeof s.addr, "127.0.0.1:%d", broker_thread_port(bt));
    setenv("DLRUN_BROKER", s.addr, 1);
    setenv("DLRUN_TOKEN", s.hex, 1);
    c = client_connect(s.addr, s.hex, 5000, &err);
    client_put(c, "dlrun.spare.host.3", "node4", 5, &err);
    pthread_create(&t, NULL, head_side, &s);
    is_int(agent_spare(&j, prog, &hc), EXIT_OK, "ended by SIGTERM: exit 0");
    pthread_join(t, NULL);
    ok(s.report && s.r.node == 3 && !strcmp(s.r.version, DLRUN_VERSION) &&
       s.r.prog[0] == '/' && !s.r.prog_err[0],
       "its report: node 3, this dlrun, sh found");
    ok(s.beat, "it beat on dlrun.hb.3");
    is_str(getenv("DLRUN_NODE"), "node4", "DLRUN_NODE: its name, for the probes");
    j.opt.node = 1;
    is_int(agent_spare(&j, prog, &hc), EXIT_USAGE, "--node inside the plan: "
           "refused");
    j.opt.node = 5;
    is_int(agent_spare(&j, prog, &hc), EXIT_FAIL, "no name in the broker: "
           "fails");
    client_close(c);
    broker_thread_stop(bt);
    return tap_done();
}
