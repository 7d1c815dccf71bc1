/* alloc_mpi.c - started by mpirun/mpiexec as one task per rank, read from
 * the launcher's own variables: Open MPI (OMPI_COMM_WORLD_*) and
 * MPICH/Hydra (PMI_RANK, PMI_SIZE, MPI_LOCALRANKID, MPI_LOCALNRANKS).
 *
 * Neither names the other ranks' hosts: the node rank assumes the same
 * number of ranks on every node in block order (mpirun's default), and
 * only this host is known.  With PMIx compiled in, Open MPI's ranks are
 * read through PMIx instead (alloc_pmix.c), which knows every host.
 */
#include "alloc.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

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

static int mpi_read(const struct mpi_vars *v, char **envp, struct alloc *a,
                    struct err *err)
{
    struct alloc_task *t = &a->task;
    char host[256] = "localhost";

    if (alloc_getint(envp, v->size, 1, 1 << 24, &t->size, err) < 0 ||
        alloc_getint(envp, v->rank, 0, t->size - 1, &t->rank, err) < 0 ||
        alloc_getint(envp, v->local_size, 1, t->size, &t->local_size, err) < 0 ||
        alloc_getint(envp, v->local_rank, 0, t->local_size - 1, &t->local_rank,
                     err) < 0)
        return -1;
    if (t->size % t->local_size != 0)
        return err_set(err, "%s=%d is not a multiple of %s=%d: ranks per node "
                       "differ, which needs PMIx to plan (or use -H)",
                       v->size, t->size, v->local_size, t->local_size);
    t->rank_from = v->rank;
    t->size_from = v->size;
    t->local_rank_from = v->local_rank;
    t->local_size_from = v->local_size;
    t->node_rank_from = "rank / local size (same ranks on every node)";
    t->node_rank = (t->rank - t->local_rank) / t->local_size;
    a->has_task = 1;
    gethostname(host, sizeof host - 1);
    snprintf(a->why, sizeof a->why, "%s=%d and %s=%d (started by mpirun)",
             v->rank, t->rank, v->size, t->size);
    return alloc_add_node(a, host, t->local_size, 0, err);
}

static int ompi_detect(const struct alloc_request *req, char **envp)
{
    (void)req;
    return alloc_getenv(envp, ompi_vars.rank) != NULL;
}

static int ompi_read(const struct alloc_request *req, char **envp,
                     struct alloc *a, struct err *err)
{
    const char *job = alloc_getenv(envp, "OMPI_MCA_ess_base_jobid");

    (void)req;
    if (job && !(a->jobid = strdup(job)))
        return err_set(err, "out of memory");
    return mpi_read(&ompi_vars, envp, a, err);
}

const struct alloc_source alloc_source_ompi = {
    .name = "ompi", .detect = ompi_detect, .read = ompi_read,
};

static int mpich_detect(const struct alloc_request *req, char **envp)
{
    (void)req;
    return alloc_getenv(envp, mpich_vars.rank) &&
           alloc_getenv(envp, mpich_vars.size);
}

static int mpich_read(const struct alloc_request *req, char **envp,
                      struct alloc *a, struct err *err)
{
    const char *kvs = alloc_getenv(envp, "PMI_KVSNAME");

    (void)req;
    if (kvs && !(a->jobid = strdup(kvs)))
        return err_set(err, "out of memory");
    if (!alloc_getenv(envp, mpich_vars.local_size)) {
        /* Hydra without local ids (old versions): a single node is all we
         * can say nothing about; ask for the missing fact instead. */
        return err_set(err, "PMI_RANK is set but MPI_LOCALNRANKS is not: this "
                       "MPI launcher does not say how ranks share nodes; "
                       "use srun or -H instead");
    }
    return mpi_read(&mpich_vars, envp, a, err);
}

const struct alloc_source alloc_source_mpich = {
    .name = "mpich", .detect = mpich_detect, .read = mpich_read,
};
