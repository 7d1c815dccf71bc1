/* head.c - a plan that spans other hosts inside a Slurm allocation: start
 * one `dlrun agent` per node with a single srun (Slurm is the distributed
 * engine), serve the broker the agents report to, and exit with the code
 * of the rank that failed first.
 *
 * srun runs in its own process group (a terminal's Ctrl-C reaches dlrun,
 * which stops the job in order), gets SIGTERM if dlrun dies (so the step
 * ends), and --kill-on-bad-exit ends every node when one agent fails. */
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "broker.h"
#include "client.h"
#include "cmd.h"
#include "envset.h"
#include "job.h"
#include "net.h"
#include "proc.h"
#include "strv.h"
#include "supervise.h"
#include "token.h"

extern char **environ;

struct head {
    struct broker *broker;
    pthread_t thread;
    atomic_int stop;
    char addr[300];             /* DLRUN_BROKER: host:port */
    char token[TOKEN_HEX_LEN + 1];
};

int head_wanted(const struct job *j)
{
    const struct plan *p = &j->plan;

    if (p->per_task || p->self_node >= 0 || j->agent ||
        strcmp(j->alloc.source, "slurm-job") != 0)
        return 0;
    for (int i = 0; i < p->nnodes; i++)
        if (!net_is_this_host(p->nodes[i].host))
            return 1;
    return 0;
}

static void *serve(void *arg)
{
    struct head *h = arg;
    struct err err = { "" };

    while (!atomic_load(&h->stop))
        if (broker_run_once(h->broker, 200, &err) < 0)
            break;
    return NULL;
}

/* A node of the plan that is not this host (there is one: head_wanted). */
static const char *remote_node(const struct plan *p)
{
    for (int i = 0; i < p->nnodes; i++)
        if (!net_is_this_host(p->nodes[i].host))
            return p->nodes[i].host;
    return p->nodes[0].host;
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
    h->broker = broker_create(ip, 0, tok, NULL, err);
    if (!h->broker)
        return -1;
    token_to_hex(tok, h->token);
    snprintf(h->addr, sizeof h->addr, strchr(ip, ':') ? "[%s]:%d" : "%s:%d", ip,
             broker_port(h->broker));
    if (pthread_create(&h->thread, NULL, serve, h) != 0) {
        broker_destroy(h->broker);
        h->broker = NULL;
        return err_set(err, "cannot start the broker thread");
    }
    return 0;
}

static void head_stop_broker(struct head *h)
{
    if (!h->broker)
        return;
    atomic_store(&h->stop, 1);
    pthread_join(h->thread, NULL);
    broker_destroy(h->broker);
    h->broker = NULL;
}

/* The options the agents must share with the head, from what was parsed. */
static void agent_options(const struct job *j, struct strv *a)
{
    const struct options *o = &j->opt;
    static const char *const bind_flags[3] = {
        "--map-by", "--bind-to", "--gpu-bind",
    };

    for (int i = 0; i < o->nexports; i++)
        strv_addf(a, "-x%s", o->exports[i]);
    for (int i = 0; i < 3; i++)
        if (o->bind_arg[i])
            strv_addf(a, "%s=%s", bind_flags[i], o->bind_arg[i]);
    if (o->rdv.iface)
        strv_addf(a, "--iface=%s", o->rdv.iface);
    if (o->keep_env)
        strv_addf(a, "--keep-env");
    if (o->tag_output)
        strv_addf(a, "--tag-output");
    if (o->output_dir)
        strv_addf(a, "--output-dir=%s", o->output_dir);
    for (int i = 0; i < o->nfilter; i++)
        strv_addf(a, "--ranks-filter=%d", o->ranks_filter[i]);
    if (o->report_bindings)
        strv_addf(a, "--report-bindings");
    if (o->plan.oversubscribe)
        strv_addf(a, "--oversubscribe");
    strv_addf(a, "--kill-timeout=%d", o->kill_timeout_ms / 1000);
}

/* "node1,node2" or, with slots, "node1:4,node2:2" (caller frees). */
static char *node_list(const struct plan *p, int with_slots)
{
    char *list = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&list, &len);

    if (!m)
        return NULL;
    for (int i = 0; i < p->nnodes; i++) {
        fprintf(m, "%s%s", i ? "," : "", p->nodes[i].host);
        if (with_slots)
            fprintf(m, ":%d", p->nodes[i].nranks);
    }
    if (fclose(m) != 0) {
        free(list);
        return NULL;
    }
    return list;
}

/* srun ... dlrun agent -H EXACT -np N --master-addr A --master-port P
 * [shared options] -- PROG ARGS */
static void srun_argv(const struct job *j, char **prog, struct strv *a)
{
    const struct plan *p = &j->plan;
    char self[PATH_MAX], *nodes = node_list(p, 0), *slots = node_list(p, 1);
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);

    self[n > 0 ? n : 0] = '\0';
    if (!nodes || !slots)
        a->failed = 1;
    strv_addf(a, "srun");
    strv_addf(a, "--nodes=%d", p->nnodes);
    strv_addf(a, "--ntasks=%d", p->nnodes);
    strv_addf(a, "--ntasks-per-node=1");
    strv_addf(a, "--kill-on-bad-exit=1");
    strv_addf(a, "--cpu-bind=none");
    strv_addf(a, "--mpi=none");
    strv_addf(a, "--nodelist=%s", nodes);
    strv_addf(a, "%s", n > 0 ? self : "dlrun");
    strv_addf(a, "agent");
    strv_addf(a, "--hosts=%s", slots);
    strv_addf(a, "--np=%d", p->nranks);
    strv_addf(a, "--master-addr=%s", j->rdv.addr);
    strv_addf(a, "--master-port=%d", j->rdv.port);
    agent_options(j, a);
    strv_addf(a, "--");
    for (char **q = prog; *q; q++)
        strv_addf(a, "%s", *q);
    free(nodes);
    free(slots);
}

/* Which rank failed first, as the agents told the broker: "rank status pid
 * host" (status: the wait status) into buf; 0 when one did, -1 when none (or the broker is gone). */
static int first_failure(const struct head *h, char *buf, size_t len)
{
    struct err err = { "" };
    struct client *c = client_connect(h->addr, h->token, 2000, &err);
    void *val = NULL;
    size_t n = 0;
    int rc = -1;

    if (c && client_get(c, "dlrun.fail.1", 0, &val, &n, &err) == CLIENT_OK) {
        snprintf(buf, len, "%.*s", (int)n, (const char *)val);
        rc = 0;
    }
    free(val);
    client_close(c);
    return rc;
}

/* Start srun, supervise it like a rank, and say how the job ended. */
static int head_run_srun(const struct job *j, struct head *h, char **argv,
                         const sigset_t *orig)
{
    struct envset add = { 0 };
    struct err err = { "" };
    struct sv_rank srun = { .rank = -1 };
    struct supervise sv = { .ranks = &srun, .n = 1,
                            .kill_timeout_ms = j->opt.kill_timeout_ms,
                            .int_as_term = 1 };
    struct proc_spec spec = { .argv = argv, .out_fd = -1, .err_fd = -1,
                              .death_sig = SIGTERM };
    char **envp = NULL, fail[400];
    int rc = EXIT_FAIL, status, rank, pid, exec_errno = 0;
    char host[256], stopped[64];

    if (envset_set(&add, "DLRUN_BROKER", h->addr, &err, "head") < 0 ||
        envset_set(&add, "DLRUN_TOKEN", h->token, &err, "head") < 0 ||
        !(envp = envset_envp(&add, environ)))
        goto out;
    spec.envp = envp;
    spec.mask = orig;
    fflush(NULL);
    if (proc_spawn(&spec, &srun.pid, &exec_errno, &err) < 0) {
        rc = cmd_fail(exec_errno ? proc_exec_code(exec_errno) : EXIT_FAIL,
                      "cannot start the agents: %s", err.msg);
        goto out;
    }
    srun.running = 1;
    rc = supervise_run(&sv);
    if (first_failure(h, fail, sizeof fail) == 0 &&
        sscanf(fail, "%d %d %d %255s", &rank, &status, &pid, host) == 4) {
        snprintf(stopped, sizeof stopped, "stopped the job on %d node%s",
                 j->plan.nnodes, j->plan.nnodes == 1 ? "" : "s");
        job_report_failure(rank, host, pid, status, stopped);
        rc = sv.signal_received ? rc : supervise_exit_code(status);
    } else if (rc != 0 && !sv.signal_received) {
        cmd_fail(0, "srun (the agents) ended with code %d", rc);
    }
out:
    envset_free_envp(envp);
    envset_free(&add);
    return rc;
}

int run_head(struct job *j, char **prog)
{
    struct head h = { 0 };
    struct strv argv = { 0 };
    struct err err = { "" };
    sigset_t block, orig;
    int rc;

    if (j->opt.max_restarts || j->opt.summary)
        return cmd_fail(EXIT_USAGE, "--max-restarts and --summary work on "
                        "one node for now; this plan spans %d nodes",
                        j->plan.nnodes);
    srun_argv(j, prog, &argv);
    if (argv.failed)
        return cmd_fail(EXIT_FAIL, "out of memory");
    /* blocked before the broker thread starts, so that it inherits the
     * mask and the signals reach the supervisor's signalfd, not the thread */
    supervise_signals(&block);
    sigprocmask(SIG_BLOCK, &block, &orig);
    if (head_start_broker(&h, j, &err) < 0) {
        strv_free(&argv);
        return cmd_fail(EXIT_FAIL, "cannot start the broker: %s", err.msg);
    }
    if (j->opt.report_bindings)
        fprintf(stderr, "dlrun: the agents report bindings per node\n");
    rc = head_run_srun(j, &h, argv.v, &orig);
    head_stop_broker(&h);
    strv_free(&argv);
    return rc;
}
