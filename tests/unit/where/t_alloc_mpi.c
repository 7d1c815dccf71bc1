/* t_alloc_mpi.c - the Open MPI and MPICH (Hydra) sources on their own:
 * when mpirun started this process (and not only dlrun's copy of the
 * rank for its own ranks), this task's numbers, this host's share in
 * block order, every task on one node, and the gaps and contradictions
 * refused with the variables named.  mpirun's PMIx server (the host of
 * every rank) is exercised in where/t_pmixc.c. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "where/alloc.h"
#include "fixture.h"
#include "tap.h"

#define OMPI (&alloc_source_ompi)
#define MPICH (&alloc_source_mpich)

struct det {
    const struct alloc_source *src;
    const char *env[6];
    int want;
    const char *what;
};

static const struct det dets[] = {
    { OMPI, { "OMPI_COMM_WORLD_RANK=1", NULL }, 1, "mpirun's rank" },
    { OMPI, { "OMPI_COMM_WORLD_RANK=1", "DLRUN_RANK=1", NULL }, 0,
      "only the copy dlrun gives its ranks: not mpirun" },
    { OMPI, { "OMPI_COMM_WORLD_RANK=1", "DLRUN_RANK=3", NULL }, 1,
      "mpirun inside a dlrun rank: another rank" },
    { OMPI, { "OMPI_COMM_WORLD_RANK=1", "DLRUN_RANK=1", "PRTE_LAUNCHED=1",
      NULL }, 1, "  or a variable dlrun never sets" },
    { OMPI, { "PMI_RANK=0", NULL }, 0, "no Open MPI rank" },
    { MPICH, { "PMI_RANK=0", "PMI_SIZE=2", NULL }, 1, "Hydra's rank and size" },
    { MPICH, { "PMI_RANK=0", NULL }, 0, "a rank without a size: not Hydra" },
};

static const char *const ompi8[] = { "OMPI_COMM_WORLD_RANK=5",
    "OMPI_COMM_WORLD_SIZE=8", "OMPI_COMM_WORLD_LOCAL_RANK=1",
    "OMPI_COMM_WORLD_LOCAL_SIZE=4", "OMPI_MCA_ess_base_jobid=77", NULL };

/* read with env; 0 / -1, err and a filled. */
static int rd(const struct alloc_source *s, const char *const *env,
              const struct alloc_request *req, struct alloc *a,
              struct err *err)
{
    char **envp = envp_of(env);
    int rc = s->read(req, envp, a, err);

    envp_free(envp);
    return rc;
}

static void reads(const char *host)
{
    static const char *const uneven[] = { "OMPI_COMM_WORLD_RANK=0",
        "OMPI_COMM_WORLD_SIZE=6", "OMPI_COMM_WORLD_LOCAL_RANK=0",
        "OMPI_COMM_WORLD_LOCAL_SIZE=4", NULL };
    static const char *const one[] = { "PMI_RANK=2", "PMI_SIZE=4",
        "MPI_LOCALRANKID=2", "MPI_LOCALNRANKS=4", "PMI_KVSNAME=kvs_9", NULL };
    static const char *const old_hydra[] = { "PMI_RANK=0", "PMI_SIZE=4", NULL };
    static const char *const past[] = { "PMI_RANK=4", "PMI_SIZE=4",
        "MPI_LOCALRANKID=0", "MPI_LOCALNRANKS=4", NULL };
    struct alloc_request req = { 0 }, layout = { .want_per_node = 1 };
    struct alloc a = { 0 };
    struct err err = { "" };
    char want[300];

    snprintf(want, sizeof want, "%s:4", host);
    ok(rd(OMPI, ompi8, &req, &a, &err) == 0 && a.has_task &&
       a.task.rank == 5 && a.task.size == 8 && a.task.local_rank == 1 &&
       a.task.local_size == 4, "ompi: rank 5 of 8, local 1 of 4");
    is_int(a.task.node_rank, 1, "  block order: node 1");
    is_str(alloc_nodes_str(&a), want, "  this host with its 4 tasks");
    is_str(a.jobid, "77", "  the job id");
    alloc_free(&a);
    ok(rd(OMPI, uneven, &req, &a, &err) < 0 &&
       strstr(err.msg, "OMPI_COMM_WORLD_SIZE=6 is not a multiple of "
                       "OMPI_COMM_WORLD_LOCAL_SIZE=4"), "uneven nodes refused");
    alloc_free(&a);
    ok(rd(MPICH, one, &layout, &a, &err) == 0 && a.task.node_rank == 0 &&
       a.task_node != NULL && !strcmp(a.jobid, "kvs_9"),
       "mpich, every task here, a layout asked: one node, every task's node");
    alloc_free(&a);
    ok(rd(MPICH, old_hydra, &req, &a, &err) < 0 &&
       strstr(err.msg, "MPI_LOCALNRANKS is not"), "Hydra without local ids");
    alloc_free(&a);
    ok(rd(MPICH, past, &req, &a, &err) < 0 && strstr(err.msg, "PMI_RANK"),
       "a rank past the size refused, named");
    alloc_free(&a);
}

int main(void)
{
    char host[256] = "localhost";

    for (size_t i = 0; i < sizeof dets / sizeof dets[0]; i++) {
        char **envp = envp_of(dets[i].env);
        struct alloc_request req = { 0 };
        ok(!!dets[i].src->detect(&req, envp) == dets[i].want, dets[i].what);
        envp_free(envp);
    }
    alloc_this_host(host, sizeof host);
    reads(host);
    return tap_done();
}
