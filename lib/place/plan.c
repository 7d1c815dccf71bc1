/* plan.c - laying ranks out on nodes.
 *
 * Ranks fill nodes in order (block, like mpirun's --map-by slot); node
 * ranks count only nodes that got ranks.  In per-task mode the scheduler
 * already decided, and the plan only records its decision.
 */
#include "place/plan.h"

#include <stdlib.h>
#include <string.h>

int plan_is_per_task(const struct alloc *a, const struct plan_request *req)
{
    if (!a->has_task)
        return 0;
    if (req->ranks && req->ranks != a->task.size)
        return 0;
    if (req->nodes && a->task_node && (size_t)req->nodes != a->nnodes)
        return 0;
    if (req->per_node) {
        for (size_t i = 0; i < a->nnodes; i++)
            if (a->nodes[i].slots != req->per_node)
                return 0;
    }
    return 1;
}

int plan_alloc(struct plan *p, int nranks, int nnodes, struct err *err)
{
    p->nranks = nranks;
    p->nnodes = nnodes;
    p->nodes = calloc((size_t)nnodes, sizeof *p->nodes);
    p->rank_node = calloc((size_t)nranks, sizeof *p->rank_node);
    p->rank_local = calloc((size_t)nranks, sizeof *p->rank_local);
    if (!p->nodes || !p->rank_node || !p->rank_local)
        return err_set(err, "out of memory");
    return 0;
}

/* Local ranks and node sizes from rank_node (ranks in increasing order). */
void plan_count_local(struct plan *p)
{
    for (int i = 0; i < p->nnodes; i++) {
        p->nodes[i].nranks = 0;
        p->nodes[i].first_rank = -1;
    }
    for (int r = 0; r < p->nranks; r++) {
        struct plan_node *n = &p->nodes[p->rank_node[r]];
        if (n->first_rank < 0)
            n->first_rank = r;
        p->rank_local[r] = n->nranks++;
    }
}

/* Each rank's node: the launcher's PMI_process_mapping, else block
 * order with the same ranks on every node.  The number of nodes, or -1. */
static int partial_nodes(const struct alloc *a, struct plan *p,
                         struct err *err)
{
    const struct alloc_task *t = &a->task;
    int nnodes = 0;

    for (int r = 0; a->pmi_node && r < t->size; r++)
        nnodes = a->pmi_node[r] >= nnodes ? a->pmi_node[r] + 1 : nnodes;
    if (!a->pmi_node)
        nnodes = t->size / t->local_size;
    if ((!a->pmi_node && t->size % t->local_size != 0) ||
        t->node_rank >= nnodes)
        return err_set(err, "%s: cannot tell which node each rank is on "
                       "(task %d of %d, %d on this node); pass -H or use a "
                       "block or cyclic distribution", a->source, t->rank,
                       t->size, t->local_size);
    if (plan_alloc(p, t->size, nnodes, err) < 0)
        return -1;
    for (int r = 0; r < t->size; r++)
        p->rank_node[r] = a->pmi_node ? a->pmi_node[r] : r / t->local_size;
    return nnodes;
}

/* mpirun without PMIx: only our node's name and the sizes are known. */
static int plan_partial(const struct alloc *a, struct plan *p, struct err *err)
{
    const struct alloc_task *t = &a->task;
    int nnodes = partial_nodes(a, p, err);

    if (nnodes < 0)
        return -1;
    plan_count_local(p);
    /* mpirun: only our host is known; Slurm with a distribution we cannot
     * recompute: every node is known but not which ranks it has */
    for (int i = 0; a->nnodes > 1 && i < nnodes && (size_t)i < a->nnodes; i++)
        p->nodes[i].host = a->nodes[i].name;
    p->nodes[t->node_rank].host = a->nnodes > 1 ?
        a->nodes[t->node_rank].name : a->nodes[0].name;
    p->partial = 1;
    p->layout = a->pmi_node ? "as the launcher's PMI_process_mapping says" :
                "as mpirun started them (block, same ranks on every node)";
    return 0;
}

static int plan_per_task(const struct alloc *a, struct plan *p, struct err *err)
{
    p->per_task = 1;
    p->self = a->task.rank;
    if (!a->task_node)
        return plan_partial(a, p, err);
    if (plan_alloc(p, a->task.size, (int)a->nnodes, err) < 0)
        return -1;
    memcpy(p->rank_node, a->task_node, (size_t)p->nranks * sizeof(int));
    plan_count_local(p);
    for (int i = 0; i < p->nnodes; i++)
        p->nodes[i].host = a->nodes[i].name;
    p->layout = "as the scheduler started the tasks";
    return 0;
}

/* -np more than the slots: spread evenly when it divides and the slots
 * were only Slurm's task count (DL jobs ask for nodes and GPUs, not
 * tasks) or every node has the CPUs; or when oversubscribing. */
static int plan_widen(const struct alloc *a, const struct plan_request *req,
                      int n, int nn, int *cap, const char **layout)
{
    int share = (n + nn - 1) / nn;
    int fits = n % nn == 0;

    for (int i = 0; i < nn && fits && !a->spread_ok; i++)
        fits = a->nodes[i].cpus >= share;
    if (!fits && !req->oversubscribe)
        return -1;
    for (int i = 0; i < nn; i++)
        cap[i] = share;
    *layout = fits ? "spread evenly over the nodes (more ranks than the "
                     "scheduler's task slots)" : "block, oversubscribed";
    return 0;
}

static int plan_fill(const struct alloc *a, struct plan *p, int n, int nn,
                     const int *cap, struct err *err)
{
    int used = 0, r = 0;

    for (int i = 0; i < nn && r < n; i++) {
        r += cap[i] < n - r ? cap[i] : n - r;
        used++;
    }
    if (plan_alloc(p, n, used, err) < 0)
        return -1;
    r = 0;
    for (int i = 0; i < used; i++) {
        int k = cap[i] < n - r ? cap[i] : n - r;
        p->nodes[i].host = a->nodes[i].name;
        p->nodes[i].login = a->nodes[i].login;
        p->nodes[i].addr_name = a->nodes[i].addr_name;
        for (int j = 0; j < k; j++)
            p->rank_node[r++] = i;
    }
    plan_count_local(p);
    return 0;
}

/* Hydra's dealing: blocks of each node's cap, round the nodes again until
 * n ranks are placed (n > the caps' total: every node gets ranks). */
static int plan_deal(const struct alloc *a, struct plan *p, int n, int nn,
                     const int *cap, struct err *err)
{
    int r = 0;

    if (plan_alloc(p, n, nn, err) < 0)
        return -1;
    for (int i = 0; i < nn; i++) {
        p->nodes[i].host = a->nodes[i].name;
        p->nodes[i].login = a->nodes[i].login;
        p->nodes[i].addr_name = a->nodes[i].addr_name;
    }
    while (r < n)
        for (int i = 0; i < nn && r < n; i++)
            for (int j = 0; j < cap[i] && r < n; j++)
                p->rank_node[r++] = i;
    plan_count_local(p);
    return 0;
}

static int plan_launch(const struct alloc *a, const struct plan_request *req,
                       struct plan *p, struct err *err)
{
    int nn = req->nodes ? req->nodes : (int)a->nnodes;
    int *cap = NULL;
    long total = 0;
    int n, rc = -1;

    if ((size_t)nn > a->nnodes)
        return err_set(err, "-N %d but the allocation (%s) has %zu node%s: "
                       "lower -N or ask the scheduler for more nodes", nn,
                       a->source, a->nnodes, a->nnodes == 1 ? "" : "s");
    cap = calloc((size_t)nn, sizeof *cap);
    if (!cap)
        return err_set(err, "out of memory");
    for (int i = 0; i < nn; i++)
        total += cap[i] = req->per_node ? req->per_node : a->nodes[i].slots;
    n = req->ranks ? req->ranks : req->per_node || req->nodes ||
        !a->default_ranks ? (int)total : a->default_ranks;
    p->layout = "block (fill each node's slots in order)";
    if (n > total && req->deal) {
        p->layout = "dealt as Hydra does (each node's slots in order, then "
                    "again from the first node)";
        rc = plan_deal(a, p, n, nn, cap, err);
        goto out;
    }
    if (n > total && plan_widen(a, req, n, nn, cap, &p->layout) < 0) {
        err_set(err, "-np %d but the %d node%s of the allocation (%s) ha%s %ld "
                "slot%s: lower -np, add nodes, set --nproc-per-node, or "
                "pass --oversubscribe", n, nn, nn == 1 ? "" : "s", a->source,
                nn == 1 ? "s" : "ve", total, total == 1 ? "" : "s");
        goto out;
    }
    rc = plan_fill(a, p, n, nn, cap, err);
out:
    free(cap);
    return rc;
}

/* The scheduler started tasks but the request asks for another layout:
 * with one task per node each dlrun starts its node's ranks (torchrun's
 * model); anything else would start every rank several times. */
static int plan_per_node(const struct alloc *a, struct plan *p, struct err *err)
{
    if (!a->task_node)
        return err_set(err, "%s started %d tasks and names no node list%s: "
                       "drop -np/-N/--nproc-per-node (one rank per task) or "
                       "pass -H", a->source, a->task.size,
                       a->pmix_map ? " (and there is no "
                       "PMIx server to ask)" : "");
    if (a->task.local_size != 1)
        return err_set(err, "the scheduler started %d tasks on this node but "
                       "the options ask for another layout: start one dlrun "
                       "per node (srun --ntasks-per-node=1, mpirun -npernode "
                       "1) to have it start --nproc-per-node ranks, or drop "
                       "-np/-N/--nproc-per-node for one rank per task",
                       a->task.local_size);
    p->self_node = a->task.node_rank;   /* plan nodes are a prefix of a's */
    p->layout = p->self_node < p->nnodes ? "one dlrun per node, each starts "
                "its node's ranks" : "one dlrun per node; this node gets none";
    return 0;
}

int plan_build(const struct alloc *a, const struct plan_request *req,
               struct plan *p, struct err *err)
{
    int rc;

    memset(p, 0, sizeof *p);
    p->self = p->self_node = -1;
    if (a->nnodes == 0)
        return err_set(err, "the allocation (%s) has no nodes", a->source);
    if (plan_is_per_task(a, req))
        rc = plan_per_task(a, p, err);
    else
        rc = plan_launch(a, req, p, err) < 0 ||
             (a->has_task && plan_per_node(a, p, err) < 0) ? -1 : 0;
    if (rc < 0)
        plan_free(p);
    return rc;
}

const char *plan_addr_name(const struct plan *p, int node)
{
    const struct plan_node *n = &p->nodes[node];

    return n->addr_name ? n->addr_name : n->host;
}

void plan_free(struct plan *p)
{
    if (!p)
        return;
    free(p->nodes);
    free(p->rank_node);
    free(p->rank_local);
    memset(p, 0, sizeof *p);
    p->self = p->self_node = -1;
}
