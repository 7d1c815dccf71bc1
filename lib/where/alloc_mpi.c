/* alloc_mpi.c - started by mpirun/mpiexec as one task per rank, read from
 * the launcher's own variables: Open MPI (OMPI_COMM_WORLD_*) and
 * MPICH/Hydra (PMI_RANK, PMI_SIZE, MPI_LOCALRANKID, MPI_LOCALNRANKS).
 *
 * Neither names the other ranks' hosts: the node rank assumes the same
 * number of ranks on every node in block order (mpirun's default), and
 * only this host is known.  That is enough when dlrun becomes the rank
 * (per-task mode).  When the options ask for another layout (one dlrun
 * per node: mpirun -npernode 1 dlrun --nproc-per-node 8), every task's
 * node is needed: all tasks on this node means one node (Open MPI and
 * Hydra alike); else Open MPI's own PMIx server names each rank's host (a dlrun that starts the ranks
 * itself never execs in place, so using the server here costs the
 * program nothing).
 */
#include "where/alloc.h"

#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include "where/pmic.h"
#include "where/pmimap.h"
#include "where/pmixc.h"

struct mpi_vars {
    const char *rank, *size, *local_rank, *local_size;
};

static const struct mpi_vars ompi_vars = {
    "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
    "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE",
};

static const struct mpi_vars mpich_vars = {
    "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS",
};

/* This task's numbers from the launcher's variables. */
static int mpi_task(const struct mpi_vars *v, char **envp, struct alloc *a,
                    struct err *err)
{
    struct alloc_task *t = &a->task;

    if (alloc_getint(envp, v->size, 1, 1 << 24, &t->size, err) < 0 ||
        alloc_getint(envp, v->rank, 0, t->size - 1, &t->rank, err) < 0 ||
        alloc_getint(envp, v->local_size, 1, t->size, &t->local_size, err) < 0 ||
        alloc_getint(envp, v->local_rank, 0, t->local_size - 1, &t->local_rank,
                     err) < 0)
        return -1;
    t->rank_from = v->rank;
    t->size_from = v->size;
    t->local_rank_from = v->local_rank;
    t->local_size_from = v->local_size;
    a->has_task = 1;
    snprintf(a->why, sizeof a->why, "%s=%d and %s=%d (started by mpirun)",
             v->rank, t->rank, v->size, t->size);
    return 0;
}

static int add_this_host(struct alloc *a, struct err *err)
{
    char host[256] = "localhost";

    alloc_this_host(host, sizeof host);
    return alloc_add_node(a, host, a->task.local_size, 0, err) < 0 ? -1 : 0;
}

/* Only this host is known: assume block order, same ranks on every node. */
static int mpi_block(const struct mpi_vars *v, struct alloc *a,
                     struct err *err)
{
    struct alloc_task *t = &a->task;

    if (t->size % t->local_size != 0)
        return err_set(err, "%s=%d is not a multiple of %s=%d: ranks per node "
                       "differ, which needs PMIx to plan (or use -H)",
                       v->size, t->size, v->local_size, t->local_size);
    t->node_rank_from = "rank / local size (same ranks on every node)";
    t->node_rank = (t->rank - t->local_rank) / t->local_size;
    return add_this_host(a, err);
}

/* The options ask for a layout other than one rank per task (what
 * plan_is_per_task compares): dlrun will start ranks itself. */
static int wants_layout(const struct alloc_request *req,
                        const struct alloc_task *t)
{
    return (req->want_ranks && req->want_ranks != t->size) ||
           (req->want_per_node && req->want_per_node != t->local_size) ||
           (req->want_nodes && req->want_nodes * t->local_size != t->size);
}

/* Every task is on this node: the map is known without asking anyone. */
static int one_node(struct alloc *a, struct err *err)
{
    a->task_node = calloc((size_t)a->task.size, sizeof *a->task_node);
    if (!a->task_node)
        return err_set(err, "out of memory");
    a->task.node_rank = 0;
    a->task.node_rank_from = "the local size is the job size (one node)";
    return add_this_host(a, err);
}

/* Every rank's host from mpirun's PMIx server, checked against the
 * variables mpirun set. */
static int ompi_map(struct alloc *a, struct err *err)
{
    struct alloc_task *t = &a->task;
    size_t len = strlen(a->why);

    if (pmixc_read_hosts(a, t->rank, t->size, err) < 0)
        return err_prefix(err, "mpirun started %d tasks and dlrun needs each "
                          "one's node for this layout", t->size);
    t->node_rank = a->task_node[t->rank];
    if (a->nodes[t->node_rank].slots != t->local_size)
        return err_set(err, "mpirun's PMIx server puts %d tasks on %s but "
                       "OMPI_COMM_WORLD_LOCAL_SIZE=%d: they disagree; start "
                       "dlrun from a fresh mpirun", a->nodes[t->node_rank].slots,
                       a->nodes[t->node_rank].name, t->local_size);
    t->node_rank_from = "mpirun's PMIx server (the host of every rank)";
    snprintf(a->why + len, sizeof a->why - len, "; each task's host from "
             "its PMIx server");
    return 0;
}

/* Started by Open MPI's mpirun: OMPI_COMM_WORLD_RANK, and not only the
 * copy dlrun gives its own ranks (DLRUN_RANK the same rank): an mpirun
 * run inside such a rank sets its own rank, or variables dlrun never
 * sets (OMPI_COMMAND, OMPI_APP_CTX_NUM_PROCS, Open MPI 4's orte_hnp_uri,
 * 5's PRTE_LAUNCHED). */
static int ompi_detect(const struct alloc_request *req, char **envp)
{
    const char *rank = alloc_getenv(envp, ompi_vars.rank);
    const char *ours = alloc_getenv(envp, "DLRUN_RANK");

    (void)req;
    if (!rank)
        return 0;
    return !ours || strcmp(ours, rank) != 0 ||
           alloc_getenv(envp, "OMPI_COMMAND") ||
           alloc_getenv(envp, "OMPI_APP_CTX_NUM_PROCS") ||
           alloc_getenv(envp, "OMPI_MCA_orte_hnp_uri") ||
           alloc_getenv(envp, "PRTE_LAUNCHED");
}

static int ompi_read(const struct alloc_request *req, char **envp,
                     struct alloc *a, struct err *err)
{
    const char *job = alloc_getenv(envp, "OMPI_MCA_ess_base_jobid");

    if (job && !(a->jobid = strdup(job)))
        return err_set(err, "out of memory");
    if (mpi_task(&ompi_vars, envp, a, err) < 0)
        return -1;
    if (!wants_layout(req, &a->task))
        return mpi_block(&ompi_vars, a, err);
    if (a->task.size == a->task.local_size)
        return one_node(a, err);
    if (!alloc_getenv(envp, "PMIX_NAMESPACE") || !alloc_getenv(envp, "PMIX_RANK"))
        return mpi_block(&ompi_vars, a, err);   /* the plan says what fails */
    return ompi_map(a, err);
}

const struct alloc_source alloc_source_ompi = {
    .name = "ompi", .kind = ALLOC_MPIRUN, .pmix_map = 1,
    .detect = ompi_detect, .read = ompi_read,
};

static int mpich_detect(const struct alloc_request *req, char **envp)
{
    (void)req;
    return (alloc_getenv(envp, mpich_vars.rank) &&
            alloc_getenv(envp, mpich_vars.size)) ||
           (alloc_getenv(envp, "PMI_PORT") && alloc_getenv(envp, "PMI_ID"));
}

/* The task from Hydra's variables alone: block order assumed. */
static int mpich_env(const struct alloc_request *req, char **envp,
                     struct alloc *a, struct err *err)
{
    if (!alloc_getenv(envp, mpich_vars.rank))
        return err_set(err, "PMI_PORT is set but its server named no "
                       "rank: use srun or -H instead");
    if (!alloc_getenv(envp, mpich_vars.local_size)) {
        /* Hydra without local ids (old versions): a single node is all we
         * can say nothing about; ask for the missing fact instead. */
        return err_set(err, "PMI_RANK is set but MPI_LOCALNRANKS is not: this "
                       "MPI launcher does not say how ranks share nodes; "
                       "use srun or -H instead");
    }
    if (mpi_task(&mpich_vars, envp, a, err) < 0)
        return -1;
    /* one dlrun per node needs every task's node: known when all are here */
    if (wants_layout(req, &a->task) && a->task.size == a->task.local_size)
        return one_node(a, err);
    return mpi_block(&mpich_vars, a, err);
}

int alloc_pmi_layout(char **envp, struct alloc *a, int *nnodes,
                     struct err *err)
{
    struct alloc_task *t = &a->task;
    struct pmic *c = pmic_the(envp, err);
    struct err miss = { "" };
    char map[1025];

    if (!c)
        return -1;
    t->rank = c->rank;
    t->size = c->size;
    t->rank_from = c->own ? "PMI_PORT's server" : "PMI_RANK";
    t->size_from = c->own ? "PMI_PORT's server" : "PMI_SIZE";
    if (pmic_get(c, "PMI_process_mapping", map, sizeof map, &miss) < 0)
        return c->missing ? 0 : err_set(err, "%s", miss.msg);
    if (!(a->pmi_node = calloc((size_t)t->size, sizeof *a->pmi_node)))
        return err_set(err, "out of memory");
    if (pmimap_nodes(map, t->size, a->pmi_node, nnodes, err) < 0)
        return err_prefix(err, "%s", c->launcher);
    pmimap_local(a->pmi_node, t->size, t->rank, &t->local_rank,
                 &t->local_size);
    t->node_rank = a->pmi_node[t->rank];
    t->local_rank_from = t->local_size_from = t->node_rank_from =
        "PMI_process_mapping";
    return 1;
}

/* MPI_LOCALRANKID and MPI_LOCALNRANKS, where Hydra set them, must say
 * what the mapping says. */
static int mpich_cross(char **envp, const struct alloc_task *t,
                       struct err *err)
{
    int lr = t->local_rank, ls = t->local_size;

    if ((alloc_getenv(envp, mpich_vars.local_rank) &&
         alloc_getint(envp, mpich_vars.local_rank, 0, 1 << 24, &lr, err) < 0) ||
        (alloc_getenv(envp, mpich_vars.local_size) &&
         alloc_getint(envp, mpich_vars.local_size, 1, 1 << 24, &ls, err) < 0))
        return -1;
    if (lr != t->local_rank || ls != t->local_size)
        return err_set(err, "MPI_LOCALRANKID=%d and MPI_LOCALNRANKS=%d but "
                       "the launcher's PMI_process_mapping makes rank %d the "
                       "%d. of %d on node %d: they disagree; start dlrun "
                       "from a fresh mpiexec", lr, ls, t->rank,
                       t->local_rank + 1, t->local_size, t->node_rank);
    return 0;
}

/* Rank, size and layout from the launcher's PMI server (PMI_PORT names
 * no rank any other way). */
static int mpich_pmi(const struct alloc_request *req, char **envp,
                     struct alloc *a, struct err *err)
{
    struct alloc_task *t = &a->task;
    int nnodes = 0, got = alloc_pmi_layout(envp, a, &nnodes, err);

    if (got < 0)
        return -1;
    if (got == 0)   /* no mapping: the variables say the rest */
        return mpich_env(req, envp, a, err);
    if (mpich_cross(envp, t, err) < 0)
        return -1;
    a->has_task = 1;
    snprintf(a->why, sizeof a->why, "rank %d of %d from %s (started by "
             "mpiexec), %d node%s from its PMI_process_mapping", t->rank,
             t->size, pmic_launcher(envp), nnodes, nnodes == 1 ? "" : "s");
    if (nnodes == 1 && wants_layout(req, t))
        return one_node(a, err);
    return add_this_host(a, err);
}

static int mpich_read(const struct alloc_request *req, char **envp,
                      struct alloc *a, struct err *err)
{
    const char *kvs = alloc_getenv(envp, "PMI_KVSNAME");

    if (kvs && !(a->jobid = strdup(kvs)))
        return err_set(err, "out of memory");
    /* a PMI_PORT connection is dlrun's own: the program opens another */
    if (pmic_server(envp) && pmic_fd_open(envp) &&
        (alloc_getenv(envp, "PMI_PORT") || !req->pmi_off))
        return mpich_pmi(req, envp, a, err);
    return mpich_env(req, envp, a, err);
}

const struct alloc_source alloc_source_mpich = {
    .name = "mpich", .kind = ALLOC_MPIRUN,
    .detect = mpich_detect, .read = mpich_read,
};
