/* envout.c - see envout.h. */
#include "place/envout.h"
#include "util/strv.h"
#include "where/sched.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The facts of one rank and where each came from. */
struct facts {
    int rank, size, local_rank, local_size, node_rank, nnodes;
    int cross_rank, cross_size;
    const char *rank_from, *size_from, *local_rank_from, *local_size_from,
        *node_rank_from;
    const char *host;
};

static void facts_from_plan(const struct alloc *a, const struct plan *p,
                            int rank, struct facts *f)
{
    const char *why = p->per_task ? NULL : "the rank plan";

    f->rank = rank;
    f->size = p->nranks;
    f->node_rank = p->rank_node[rank];
    f->local_rank = p->rank_local[rank];
    f->local_size = p->nodes[f->node_rank].nranks;
    f->nnodes = p->nnodes;
    f->host = p->nodes[f->node_rank].host;
    f->rank_from = why ? why : a->task.rank_from;
    f->size_from = why ? why : a->task.size_from;
    f->local_rank_from = why ? why : a->task.local_rank_from;
    f->local_size_from = why ? why : a->task.local_size_from;
    f->node_rank_from = why ? why : a->task.node_rank_from;
    if (p->per_task && rank == a->task.rank) {
        /* the scheduler's word for this task wins over our reading */
        f->local_rank = a->task.local_rank;
        f->local_size = a->task.local_size;
        f->node_rank = a->task.node_rank;
    }
    /* Horovod's cross communicator: ranks with the same local rank. */
    f->cross_rank = f->cross_size = 0;
    for (int i = 0; i < p->nnodes; i++) {
        if (p->nodes[i].nranks <= f->local_rank)
            continue;
        if (i < f->node_rank)
            f->cross_rank++;
        f->cross_size++;
    }
}

static int set_torch(struct envset *s, const struct facts *f,
                     const struct rdv *r, struct err *err)
{
    return envset_setint(s, "RANK", f->rank, err, "%s", f->rank_from) ||
        envset_setint(s, "WORLD_SIZE", f->size, err, "%s", f->size_from) ||
        envset_setint(s, "LOCAL_RANK", f->local_rank, err, "%s",
                      f->local_rank_from) ||
        envset_setint(s, "LOCAL_WORLD_SIZE", f->local_size, err, "%s",
                      f->local_size_from) ||
        envset_setint(s, "NODE_RANK", f->node_rank, err, "%s",
                      f->node_rank_from) ||
        envset_setint(s, "GROUP_RANK", f->node_rank, err, "= NODE_RANK") ||
        envset_setint(s, "GROUP_WORLD_SIZE", f->nnodes, err, "nodes in the plan") ||
        envset_set(s, "MASTER_ADDR", r->addr, err, "%s", r->addr_from) ||
        envset_setint(s, "MASTER_PORT", r->port, err, "%s", r->port_from) ? -1 : 0;
}

static int set_horovod(struct envset *s, const struct facts *f,
                       struct err *err)
{
    return envset_setint(s, "HOROVOD_RANK", f->rank, err, "= RANK") ||
        envset_setint(s, "HOROVOD_SIZE", f->size, err, "= WORLD_SIZE") ||
        envset_setint(s, "HOROVOD_LOCAL_RANK", f->local_rank, err, "= LOCAL_RANK") ||
        envset_setint(s, "HOROVOD_LOCAL_SIZE", f->local_size, err,
                      "= LOCAL_WORLD_SIZE") ||
        envset_setint(s, "HOROVOD_CROSS_RANK", f->cross_rank, err,
                      "index among nodes that have this local rank") ||
        envset_setint(s, "HOROVOD_CROSS_SIZE", f->cross_size, err,
                      "nodes that have this local rank") ||
        (f->host && envset_set(s, "HOROVOD_HOSTNAME", f->host, err,
                               "this rank's node")) ? -1 : 0;
}

/* TF_CONFIG: one worker per rank, "host:port": the port each agent found
 * free, else MASTER_PORT + 1 + local rank so that workers on one host do
 * not collide. */
static int set_tf(struct envset *s, const struct plan *p, const struct facts *f,
                  const struct rdv *r, struct err *err)
{
    struct membuf b;
    char *buf;
    FILE *m;
    int rc;

    if (p->partial)
        return 0;   /* other ranks' hosts are unknown */
    m = membuf_open(&b);
    if (!m)
        return err_set(err, "out of memory");
    fputs("{\"cluster\":{\"worker\":[", m);
    for (int i = 0; i < p->nranks; i++)
        fprintf(m, "%s\"%s:%d\"", i ? "," : "",
                plan_addr_name(p, p->rank_node[i]),
                r->worker_ports ? r->worker_ports[i]
                                : r->port + 1 + p->rank_local[i]);
    fprintf(m, "]},\"task\":{\"type\":\"worker\",\"index\":%d}}", f->rank);
    if (!(buf = membuf_close(&b)))
        return err_set(err, "out of memory");
    if (strlen(buf) + sizeof "TF_CONFIG=" > ENVOUT_VAR_MAX) {
        rc = err_set(err, "TF_CONFIG for %d workers would be %zu bytes, more "
                     "than exec passes in one variable (%d): run one worker "
                     "per node (--nproc-per-node 1; it drives the node's "
                     "GPUs) or --tf-config no and a cluster resolver of "
                     "TensorFlow's own", p->nranks, strlen(buf),
                     ENVOUT_VAR_MAX);
        free(buf);
        return rc;
    }
    rc = envset_set(s, "TF_CONFIG", buf, err, r->worker_ports ?
                    "every rank as a worker, ports found free by the agents" :
                    "every rank as a worker, port MASTER_PORT+1+LOCAL_RANK");
    free(buf);
    return rc;
}

static int set_jax_nccl(struct envset *s, const struct facts *f,
                        const struct rdv *r, const struct envout_opts *o,
                        struct err *err)
{
    char coord[300];

    snprintf(coord, sizeof coord, strchr(r->addr, ':') ? "[%s]:%d" : "%s:%d",
             r->addr, r->port);
    if (envset_set(s, "JAX_COORDINATOR_ADDRESS", coord, err,
                   "MASTER_ADDR:MASTER_PORT") ||
        envset_setint(s, "JAX_NUM_PROCESSES", f->size, err, "= WORLD_SIZE") ||
        envset_setint(s, "JAX_PROCESS_ID", f->rank, err, "= RANK"))
        return -1;
    /* the user's choice stands; CUDA's own default is fastest-first, which
     * breaks placing rank k next to GPU k */
    if (!alloc_getenv(o->envp, "CUDA_DEVICE_ORDER") &&
        envset_set(s, "CUDA_DEVICE_ORDER", "PCI_BUS_ID", err,
                   "GPU indices in the order hwloc and nvidia-smi show") < 0)
        return -1;
    if (!o->iface)
        return 0;
    return envset_set(s, "NCCL_SOCKET_IFNAME", o->iface, err, "--iface") ||
           envset_set(s, "GLOO_SOCKET_IFNAME", o->iface, err, "--iface") ? -1 : 0;
}

static int set_dlrun(struct envset *s, const struct alloc *a,
                     const struct facts *f, const struct rdv *r,
                     struct err *err)
{
    return envset_setint(s, "DLRUN_RANK", f->rank, err, "= RANK") ||
        envset_setint(s, "DLRUN_WORLD_SIZE", f->size, err, "= WORLD_SIZE") ||
        envset_setint(s, "DLRUN_LOCAL_RANK", f->local_rank, err, "= LOCAL_RANK") ||
        envset_setint(s, "DLRUN_LOCAL_WORLD_SIZE", f->local_size, err,
                      "= LOCAL_WORLD_SIZE") ||
        envset_setint(s, "DLRUN_NODE_RANK", f->node_rank, err, "= NODE_RANK") ||
        envset_setint(s, "DLRUN_NNODES", f->nnodes, err, "= GROUP_WORLD_SIZE") ||
        envset_set(s, "DLRUN_MASTER_ADDR", r->addr, err, "= MASTER_ADDR") ||
        envset_setint(s, "DLRUN_MASTER_PORT", r->port, err, "= MASTER_PORT") ||
        envset_set(s, "DLRUN_ALLOC", a->source, err, "%s", a->why) ? -1 : 0;
}

/* Open MPI's names, which scripts written for mpirun read, set only where
 * dlrun hosts the PMIx server (MPI_Init then takes the server's values;
 * without one, inside a Slurm job, Open MPI took them for a launcher's and
 * its MPI_Init failed instead of the MPI guard naming --mpi=pmix).  DLRUN_RANK beside them tells a dlrun
 * inside the rank that no mpirun started it (alloc_mpi.c). */
static int set_ompi(struct envset *s, const struct facts *f, struct err *err)
{
    return envset_setint(s, "OMPI_COMM_WORLD_RANK", f->rank, err, "= RANK") ||
        envset_setint(s, "OMPI_COMM_WORLD_SIZE", f->size, err, "= WORLD_SIZE") ||
        envset_setint(s, "OMPI_COMM_WORLD_LOCAL_RANK", f->local_rank, err,
                      "= LOCAL_RANK") ||
        envset_setint(s, "OMPI_COMM_WORLD_LOCAL_SIZE", f->local_size, err,
                      "= LOCAL_WORLD_SIZE") ||
        envset_setint(s, "OMPI_COMM_WORLD_NODE_RANK", f->node_rank, err,
                      "= NODE_RANK") ? -1 : 0;
}

/* torchrun's names for the restart count, which elastic scripts read. */
static int set_restarts(struct envset *s, const struct envout_opts *o,
                        struct err *err)
{
    return envset_setint(s, "DLRUN_RESTART_COUNT", o->restart, err,
                         "restarts of the job so far") ||
        envset_setint(s, "TORCHELASTIC_RESTART_COUNT", o->restart, err,
                      "= DLRUN_RESTART_COUNT") ||
        envset_setint(s, "TORCHELASTIC_MAX_RESTARTS", o->max_restarts, err,
                      "--max-restarts") ? -1 : 0;
}

void envout_error_file(const char *dir, int restart, int rank, char *buf,
                       size_t n)
{
    snprintf(buf, n, "%s/attempt.%d.rank.%d.json", dir, restart, rank);
}

/* NCCL fails a broken collective instead of hanging (restarts work):
 * torch 2's name and 1.x's, the user's value for both when one is set. */
static int set_nccl_async(struct envset *s, const struct envout_opts *o,
                          struct err *err)
{
    static const char *const names[2] = { "TORCH_NCCL_ASYNC_ERROR_HANDLING",
                                           "NCCL_ASYNC_ERROR_HANDLING" };
    const char *v = alloc_getenv(o->envp, names[0]);

    if (!v)
        v = alloc_getenv(o->envp, names[1]);
    for (int i = 0; i < 2; i++)
        if (!alloc_getenv(o->envp, names[i]) &&
            envset_set(s, names[i], v ? v : "1", err, v ? "the user's %s" :
                       "torchrun's default: a failed collective fails",
                       names[!i]) < 0)
            return -1;
    return 0;
}

/* What torchrun's agent gives every worker, one role for all ranks. */
static int set_elastic(struct envset *s, const struct facts *f,
                       const struct envout_opts *o, struct err *err)
{
    char file[4096];

    if (envset_set(s, "TORCHELASTIC_RUN_ID", o->run_id ? o->run_id : "none",
                   err, o->run_id ? "--rdzv-id" : "torchrun's default") ||
        envset_set(s, "TORCHELASTIC_USE_AGENT_STORE", "False", err,
                   "rank 0 serves the store at MASTER_ADDR:MASTER_PORT") ||
        envset_set(s, "ROLE_NAME", o->role ? o->role : "default", err,
                   o->role ? "--role" : "torchrun's default") ||
        envset_setint(s, "ROLE_RANK", f->rank, err, "= RANK (one role)") ||
        envset_setint(s, "ROLE_WORLD_SIZE", f->size, err,
                      "= WORLD_SIZE (one role)") ||
        set_nccl_async(s, o, err) < 0)
        return -1;
    if (o->omp_threads > 0 && !alloc_getenv(o->envp, "OMP_NUM_THREADS") &&
        envset_setint(s, "OMP_NUM_THREADS", o->omp_threads, err,
                      "the CPUs of this rank (set OMP_NUM_THREADS to choose)"))
        return -1;
    if (!o->error_dir)
        return 0;
    envout_error_file(o->error_dir, o->restart, f->rank, file, sizeof file);
    return envset_set(s, "TORCHELASTIC_ERROR_FILE", file, err,
                      "where torch's @record writes a failure; dlrun reads it");
}

char *envout_tasks_per_node(const struct plan *p)
{
    struct membuf b;
    FILE *m = membuf_open(&b);

    if (!m)
        return NULL;
    for (int i = 0; i < p->nnodes;) {
        int j = i;
        while (j < p->nnodes && p->nodes[j].nranks == p->nodes[i].nranks)
            j++;
        fprintf(m, "%s%d", i ? "," : "", p->nodes[i].nranks);
        if (j - i > 1)
            fprintf(m, "(x%d)", j - i);
        i = j;
    }
    return membuf_close(&b);
}

/* Each name of list set to n (to text when text is not NULL). */
static int set_list(struct envset *s, const char *const *list, long n,
                    const char *text, struct err *err)
{
    const char *why = "rewritten: dlrun placed this rank (--keep-env keeps it)";

    for (; list && *list; list++)
        if (text ? envset_set(s, *list, text, err, "%s", why) < 0 :
                   envset_setint(s, *list, n, err, "%s", why) < 0)
            return -1;
    return 0;
}

/* Frameworks that read the scheduler's per-task variables themselves
 * (Lightning, submitit, JAX read Slurm's) must see the world dlrun made,
 * not the one srun made. */
static int set_task_vars(struct envset *s, const struct sched_task_vars *tv,
                         const struct plan *p, const struct facts *f,
                         struct err *err)
{
    char *tpn = envout_tasks_per_node(p);
    int rc;

    if (!tpn)
        return err_set(err, "out of memory");
    rc = set_list(s, tv->rank, f->rank, NULL, err) ||
        set_list(s, tv->local_rank, f->local_rank, NULL, err) ||
        set_list(s, tv->node_rank, f->node_rank, NULL, err) ||
        set_list(s, tv->size, f->size, NULL, err) ||
        set_list(s, tv->tasks_per_node, 0, tpn, err) ? -1 : 0;
    free(tpn);
    return rc;
}

/* The scheduler's task variables to rewrite: the allocation's, or those
 * of the job an agent runs in (its allocation is the head's plan). */
static const struct sched_task_vars *task_vars(const struct alloc *a,
                                               const struct envout_opts *o)
{
    const struct sched *s = a->sched;

    if ((!s || !s->task_vars) && o->in_job)
        s = sched_of_env(o->envp);
    return s ? s->task_vars : NULL;
}

static int set_exports(struct envset *s, const struct envout_opts *o,
                       struct err *err)
{
    for (char **x = o->exports; x && *x; x++) {
        const char *eq = strchr(*x, '=');
        char name[256];
        const char *v;

        if (!eq) {
            v = alloc_getenv(o->envp, *x);
            if (v && envset_set(s, *x, v, err, "-x %s (copied)", *x) < 0)
                return -1;
            continue;
        }
        snprintf(name, sizeof name, "%.*s", (int)(eq - *x), *x);
        if (envset_set(s, name, eq + 1, err, "-x") < 0)
            return -1;
    }
    return 0;
}

int envout_rank(const struct alloc *a, const struct plan *p, int rank,
                const struct rdv *rdv, const struct envout_opts *o,
                struct envset *out, struct err *err)
{
    struct facts f;
    const struct sched_task_vars *tv = task_vars(a, o);

    if (rank < 0 || rank >= p->nranks)
        return err_set(err, "rank %d is not in the plan (0-%d)", rank,
                       p->nranks - 1);
    facts_from_plan(a, p, rank, &f);
    if (set_torch(out, &f, rdv, err) < 0 || set_horovod(out, &f, err) < 0 ||
        (o->tf_config && set_tf(out, p, &f, rdv, err) < 0) ||
        set_jax_nccl(out, &f, rdv, o, err) < 0 ||
        set_dlrun(out, a, &f, rdv, err) < 0 || set_restarts(out, o, err) < 0 ||
        set_elastic(out, &f, o, err) < 0)
        return -1;
    /* a rank mpirun started (dlrun in its place) keeps mpirun's own */
    if (!p->per_task && o->ompi_names && set_ompi(out, &f, err) < 0)
        return -1;
    if (tv && !p->per_task && !o->keep_env &&
        set_task_vars(out, tv, p, &f, err) < 0)
        return -1;
    return set_exports(out, o, err);
}

int envout_gloo(const char *addr, int port, const char *iface,
                struct envset *out, struct err *err)
{
    const char *why = "--gloo: dlrun serves Horovod's rendezvous";

    return envset_set(out, "HOROVOD_GLOO_RENDEZVOUS_ADDR", addr, err, "%s", why) ||
        envset_setint(out, "HOROVOD_GLOO_RENDEZVOUS_PORT", port, err, "%s", why) ||
        envset_set(out, "HOROVOD_CONTROLLER", "gloo", err, "--gloo") ||
        envset_set(out, "HOROVOD_CPU_OPERATIONS", "gloo", err, "--gloo") ||
        envset_set(out, "HOROVOD_GLOO_IFACE", iface, err,
                   "--gloo: the interface of the rendezvous address") ||
        envset_set(out, "NCCL_SOCKET_IFNAME", iface, err,
                   "= HOROVOD_GLOO_IFACE (as horovodrun sets it)") ||
        envset_set(out, "PYTHONUNBUFFERED", "1", err,
                   "--gloo: horovodrun's, output not held back") ? -1 : 0;
}
