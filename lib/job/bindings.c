/* bindings.c - which CPUs and GPU each rank gets (lib/place/bind.c plans it on
 * an hwloc topology), when dlrun binds, and --report-bindings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job/job.h"
#include "place/bindcache.h"
#include "place/topo.h"
#include "util/net.h"
#include "util/say.h"
#include "where/sched.h"

/* The nodes to plan bindings for: those whose ranks start here (their
 * topology is this machine's), or every node with --topology. */
static int node_wanted(const struct job *j, int node)
{
    const struct plan *p = &j->plan;

    if (j->opt.topology)
        return 1;
    if (p->per_task)
        return node == p->rank_node[p->self];
    if (p->self_node >= 0)
        return node == p->self_node;
    return net_is_this_host(p->nodes[node].host);
}

/* The GPUs the ranks may use, as indices in PCI order: what the
 * scheduler granted when it names physical GPUs (Slurm's SLURM_STEP_GPUS,
 * SLURM_JOB_GPUS, even when a device cgroup renumbers
 * CUDA_VISIBLE_DEVICES), else, outside a scheduler whose jobs see their
 * GPUs through such a cgroup, the user's CUDA_VISIBLE_DEVICES; NULL =
 * every GPU of the topology. */
static const char *granted_gpus(const struct job *j)
{
    if (j->alloc.gpus && j->alloc.gpus_pci)
        return j->alloc.gpus;
    if (!j->alloc.sched || !j->alloc.sched->cgroup_gpus)
        return getenv("CUDA_VISIBLE_DEVICES");
    return NULL;
}

/* The plan of node's ranks into out.  On this machine (no --topology)
 * it is first looked up in the binding cache (lib/place/bindcache.h): a hit
 * loads no topology at all, which is most of what binding costs a launch.
 * Otherwise the topology is loaded at the first need (*t, kept for the
 * next node) and the plan made, then kept; errors are never kept, so they
 * are found again, with their message, at each run. */
static int plan_node(struct job *j, struct topo **t, int node,
                     struct bind_rank *out, struct err *err)
{
    const struct plan *p = &j->plan;
    int n = p->nodes[node].nranks;
    const char *granted = granted_gpus(j);
    struct bindcache c;
    int cached = !j->opt.topology &&
                 bindcache_key(&c, n, &j->opt.bind, granted) == 0;

    if (cached && bindcache_load(&c, out) == 0)
        return 0;
    if (!*t && !(*t = topo_load(j->opt.topology, err)))
        return -1;
    if (bind_node(*t, n, &j->opt.bind, granted, out, err) < 0)
        return err_prefix(err, "binding the %d rank%s on %s", n,
                          n == 1 ? "" : "s",
                          p->nodes[node].host ? p->nodes[node].host
                                              : "this node");
    if (cached)
        bindcache_save(&c, out);
    return 0;
}

/* Bind the ranks of one node; GPUs the scheduler granted count there. */
static int bind_one_node(struct job *j, struct topo **t, int node,
                         struct err *err)
{
    const struct plan *p = &j->plan;
    int n = p->nodes[node].nranks;
    struct bind_rank *tmp = calloc((size_t)n, sizeof *tmp);
    int rc = -1;

    if (!tmp)
        return err_set(err, "out of memory");
    if (plan_node(j, t, node, tmp, err) < 0)
        goto out;
    for (int r = 0; r < p->nranks; r++)
        if (p->rank_node[r] == node)
            j->bind[r] = tmp[p->rank_local[r]];
    rc = 0;
out:
    free(tmp);
    return rc;
}

/* Under srun/mpirun the scheduler binds unless asked otherwise; when
 * dlrun starts the ranks (or plans with --topology) it binds by default. */
static int binding_wanted(const struct job *j)
{
    const struct bind_opts *b = &j->opt.bind;

    if (j->plan.per_task && !j->opt.bind_given)
        return 0;
    if (b->bind != BIND_NONE)
        return 1;
    /* no CPU binding: only GPUs are left to place, and without an NVIDIA
     * driver this machine has none (a --topology file may) */
    return b->gpu != GPU_BIND_NONE && (j->opt.topology || topo_want_pci());
}

int job_ppr_ranks(struct job *j)
{
    struct err err = { "" };
    struct topo *t;
    int n;

    if (j->opt.bind.map != MAP_PPR || j->opt.bind.ppr_obj == OBJ_NODE ||
        j->opt.plan.ranks || j->opt.plan.per_node ||
        j->alloc.kind != ALLOC_LOCAL)
        return 0;
    if (!(t = topo_load(j->opt.topology, &err)))
        return say_fail(EXIT_USAGE, "--map-by without -np: %s", err.msg);
    n = bind_ppr_ranks(t, &j->opt.bind);
    topo_free(t);
    if (n > 0)
        j->opt.plan.per_node = n;
    return 0;
}

int job_bind(struct job *j)
{
    struct err err = { "" };
    struct topo *t = NULL;
    int rc = EXIT_USAGE;

    if (!binding_wanted(j))
        return 0;
    j->bind = calloc((size_t)j->plan.nranks, sizeof *j->bind);
    if (!j->bind)
        return say_fail(EXIT_FAIL, "out of memory");
    for (int r = 0; r < j->plan.nranks; r++)
        j->bind[r].gpu = j->bind[r].gpu_pci = -1;
    /* the topology is loaded by the first node that needs it: with every
     * plan in the cache, or no rank started here, never */
    for (int node = 0; node < j->plan.nnodes; node++)
        if (node_wanted(j, node) && bind_one_node(j, &t, node, &err) < 0)
            goto fail;
    topo_free(t);
    return 0;
fail:
    topo_free(t);
    free(j->bind);
    j->bind = NULL;
    if (j->opt.bind_given)
        return say_fail(rc, "%s", err.msg);
    /* binding was only the default: run unbound rather than not at all */
    say("warning: not binding: %s (pass --bind-to to insist)", err.msg);
    return 0;
}

void job_report_bindings(const struct job *j, const int *ranks, int n)
{
    char line[400];

    for (int i = 0; i < n; i++) {
        int r = ranks[i];
        const char *host = j->plan.nodes[j->plan.rank_node[r]].host;
        if (j->bind)
            bind_describe(&j->bind[r], line, sizeof line);
        else
            snprintf(line, sizeof line, "not bound");
        say("rank %d host %s %s", r, host ? host : "?", line);
    }
}
