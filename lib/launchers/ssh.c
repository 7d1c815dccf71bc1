/* ssh.c - agents on host lists (and PBS, NQSV, LSF allocations): one
 * `dlrun relay` per remote node (libssh, cmd/relay.c), a plain child for
 * this host's node.
 *
 * Fan-out: one process starts at most `fanout` agents.  More nodes are cut
 * into fanout contiguous chunks; the first node of each chunk is started
 * with --spawn=THE-REST and starts them the same way, so N nodes take
 * about log_fanout(N) rounds of connections instead of N/fanout.
 *
 * Signals: OpenSSH does not deliver them to root's commands, so a relay
 * turns SIGTERM/INT/HUP into closing its agent's stdin ("end your ranks");
 * any other signal would only kill the relay: the head passes those
 * through the broker instead (no LAUNCHER_SIGNALS). */
#include "launchers/launcher.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/clock.h"
#include "util/net.h"
#include "run/proc.h"
#include "where/ranges.h"
#include "util/strv.h"

/* "--spawn=3-9,12" for nodes[lo..hi) (not empty). */
static void add_spawn(struct strv *a, const int *nodes, int lo, int hi)
{
    char *s = ranges_format(nodes + lo, hi - lo);

    if (s)
        strv_addf(a, "--spawn=%s", s);
    else
        a->failed = 1;
    free(s);
}

/* The relay's own part: "PATH relay [ssh options] HOST -- REMOTE-PATH". */
static void relay_prefix(const struct agent_job *job, const char *host,
                         const char *login, struct strv *a)
{
    strv_addf(a, "%s", job->agent_args[0]);
    strv_addf(a, "relay");
    for (char **p = job->relay_opts; p && *p; p++)
        strv_addf(a, "%s", *p);
    if (login)          /* user@host in a host file: after --ssh-user, wins */
        strv_addf(a, "--ssh-user=%s", login);
    strv_addf(a, "%s", host);
    strv_addf(a, "--");
    strv_addf(a, "%s", job->remote_dlrun ? job->remote_dlrun
                                         : job->agent_args[0]);
}

/* The command for the agent of nodes[lo] that also covers (lo, hi). */
static void agent_argv(const struct agent_job *job, int lo, int hi,
                       struct strv *a)
{
    int node = job->nodes[lo];
    const char *host = job->plan->nodes[node].host;
    int local = net_is_this_host(host);

    if (local)
        strv_addf(a, "%s", job->agent_args[0]);
    else
        relay_prefix(job, host, job->plan->nodes[node].login, a);
    for (char **p = job->agent_args + 1; *p; p++)
        strv_addf(a, "%s", *p);
    strv_addf(a, "--node=%d", node);
    strv_addf(a, "--lifeline");
    if (hi > lo + 1)
        add_spawn(a, job->nodes, lo + 1, hi);
    strv_addf(a, "--");
    for (char **p = job->prog; *p; p++)
        strv_addf(a, "%s", *p);
}

/* Any host list: the default outside a Slurm job. */
static int ssh_detect(const struct plan *p, const struct alloc *a)
{
    (void)p;
    (void)a;
    return 10;
}

static int ssh_signal(struct launched *run, int sig)
{
    if (sig != SIGTERM && sig != SIGINT && sig != SIGHUP && sig != SIGKILL)
        return -1;
    return launcher_signal_groups(run, sig);
}

/* The relays close their channels on SIGTERM (the agents end their
 * ranks); one still connecting is killed after the grace. */
static void ssh_destroy(struct launched *run)
{
    launcher_end(run, SIGTERM, 5000);
}

static int ssh_start(const struct launch_req *req, struct launched *run,
                     struct err *err)
{
    const struct agent_job *job = req->agents;
    struct sv_rank *procs = run->procs;
    int n = job->nnodes, k = job->fanout > 0 ? job->fanout : 32;
    int chunks = n < k ? n : k;

    run->n = 0;
    for (int c = 0; c < chunks; c++) {
        int lo = (int)((long)c * n / chunks), hi = (int)((long)(c + 1) * n / chunks);
        struct strv argv = { 0 };
        struct proc_spec spec = { .envp = job->envp, .mask = job->child_mask,
                                  .in_fd = job->lifeline, .out_fd = -1,
                                  .err_fd = -1, .death_sig = SIGTERM };
        int rc;

        agent_argv(job, lo, hi, &argv);
        spec.argv = argv.v;
        rc = argv.failed ? err_set(err, "out of memory")
                         : proc_spawn(&spec, &procs[c].pid, &run->exec_errno,
                                      err);
        strv_free(&argv);
        if (rc < 0) {
            ssh_destroy(run);
            return err_prefix(err, "cannot start the agent of %s",
                              job->plan->nodes[job->nodes[lo]].host);
        }
        procs[c].rank = -1 - job->nodes[lo];
        procs[c].running = 1;
        procs[c].start = clock_wall();
        run->n = c + 1;
    }
    return 0;
}

const struct launcher launcher_ssh = {
    .name = "ssh", .caps = LAUNCHER_AGENTS | LAUNCHER_TREE,
    .needs = "starts agents on other hosts, not ranks here",
    .detect = ssh_detect, .start = ssh_start,
    .signal = ssh_signal, .destroy = ssh_destroy,
};
