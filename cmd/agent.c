/* agent.c - `dlrun agent`: started by a head (one per node, through srun)
 * with the head's exact plan (-H, -np, --master-addr/--master-port); it
 * starts this node's ranks with the one-node engine and tells the head
 * through the broker which rank failed.  Internal: users run `dlrun`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "client.h"
#include "cmd.h"
#include "job.h"
#include "net.h"
#include "supervise.h"

/* This node in the plan: Slurm names it (SLURMD_NODENAME), else the
 * host name does.  -1 when the plan has no rank here. */
static int find_self_node(const struct plan *p)
{
    const char *me = getenv("SLURMD_NODENAME");

    for (int i = 0; i < p->nnodes; i++) {
        const char *h = p->nodes[i].host;
        if (me ? strcmp(h, me) == 0 : net_is_this_host(h))
            return i;
    }
    return -1;
}

void agent_report_failure(const struct job *j, const struct supervise *sv)
{
    const struct sv_rank *r = &sv->ranks[sv->failed];
    struct err err = { "" };
    struct client *c = client_from_env(5000, &err);
    char key[64], val[400];
    int64_t seq = 0;

    if (!c || client_add(c, "dlrun.failseq", 1, &seq, &err) != CLIENT_OK)
        goto out;
    snprintf(key, sizeof key, "dlrun.fail.%lld", (long long)seq);
    /* the wait status itself: the head tells code from signal as we do */
    snprintf(val, sizeof val, "%d %d %d %s", r->rank, r->status, (int)r->pid,
             j->plan.nodes[j->plan.rank_node[r->rank]].host);
    client_put(c, key, val, strlen(val), &err);
out:
    if (err.msg[0])
        cmd_fail(0, "agent: cannot tell the head: %s", err.msg);
    client_close(c);
}

int cmd_agent(int argc, char **argv)
{
    struct job j = { 0 };
    int rc = options_parse(argc, argv, &j.opt, "usage: dlrun agent (internal: "
                           "started by dlrun on every node)\n");

    if (rc != 0)
        return rc == 1 ? EXIT_OK : rc;
    if (j.opt.prog >= argc) {
        rc = cmd_fail(EXIT_USAGE, "agent: no program");
        goto out;
    }
    j.agent = 1;
    rc = job_prepare(&j, 1);
    if (rc != 0)
        goto out;
    j.plan.self_node = find_self_node(&j.plan);
    if (j.plan.self_node < 0)
        goto out;           /* the plan has no rank on this node */
    rc = run_launch(&j, argv + j.opt.prog);
out:
    job_free(&j);
    return rc;
}
