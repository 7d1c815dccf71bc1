/* t_alloc_mpi.c - the Open MPI and MPICH (Hydra) sources on their own:
 * when mpirun started this process (and not only dlrun's copy of the
 * rank for its own ranks), this task's numbers, this host's share in
 * block order, every task on one node, and the gaps and contradictions
 * refused with the variables named.  mpirun's PMIx server (the host of
 * every rank) is exercised in where/t_pmixc.c.  Under a PMI-1 server
 * (PMI_FD a socketpair holding Hydra's replies) the layout comes from
 * PMI_process_mapping, checked against MPI_LOCALRANKID; an MPI program's
 * PMI_FD (pmi_off) is not touched. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "where/alloc.h"
#include "where/pmic.h"
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
    { MPICH, { "PMI_PORT=h:1", "PMI_ID=2", NULL }, 1,
      "mpiexec.hydra -pmi-port: PMI_PORT and PMI_ID" },
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

#define HYDRA_INIT "cmd=response_to_init pmi_version=1 pmi_subversion=1 " \
    "rc=0\ncmd=my_kvsname kvsname=kvs_1\n"

/* The mpich source over a PMI_FD whose server end holds replies: its
 * return value; what dlrun sent into sent (len bytes). */
static int rd_pmi(const char *replies, const char *local, int pmi_off,
                  struct alloc *a, struct err *err, char *sent, size_t len)
{
    char fdvar[32];
    const char *env[] = { fdvar, "PMI_RANK=1", "PMI_SIZE=4", local,
                          "MPI_LOCALNRANKS=2", NULL };
    char **envp;
    struct alloc_request req = { .pmi_off = pmi_off };
    int sv[2], rc;
    ssize_t n;

    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
        return -2;
    snprintf(fdvar, sizeof fdvar, "PMI_FD=%d", sv[0]);
    envp = envp_of(env);
    memset(a, 0, sizeof *a);
    if (write(sv[1], replies, strlen(replies)) != (ssize_t)strlen(replies))
        return -2;
    shutdown(sv[1], SHUT_WR);
    rc = MPICH->read(&req, envp, a, err);
    pmic_the_end(0, err);   /* the next case opens its own */
    shutdown(sv[0], SHUT_WR);
    n = read(sv[1], sent, len - 1);
    sent[n > 0 ? n : 0] = '\0';
    close(sv[0]);
    close(sv[1]);
    envp_free(envp);
    return rc;
}

static void reads_pmi(void)
{
    struct alloc a;
    struct err err = { "" };
    char sent[1024];
    const char *cyclic = HYDRA_INIT "cmd=get_result rc=0 msg=success "
                         "value=(vector,(0,2,1))\n";

    is_int(rd_pmi(cyclic, "MPI_LOCALRANKID=0", 0, &a, &err, sent,
                  sizeof sent), 0, "-ppn 1 over two hosts, rank 1: read");
    ok(strstr(sent, "cmd=get kvsname=kvs_1 key=PMI_process_mapping\n") != NULL,
       "  asked for PMI_process_mapping");
    is_int(a.task.node_rank, 1, "  on the second node (cyclic, not block)");
    is_int(a.task.local_rank * 10 + a.task.local_size, 2,
           "  the first of two there");
    ok(a.pmi_node && a.pmi_node[0] == 0 && a.pmi_node[1] == 1 &&
       a.pmi_node[2] == 0 && a.pmi_node[3] == 1, "  every rank's node kept");
    is_str(a.task.node_rank_from, "PMI_process_mapping", "  named");
    alloc_free(&a);
    is_int(rd_pmi(cyclic, "MPI_LOCALRANKID=1", 0, &a, &err, sent,
                  sizeof sent), -1, "MPI_LOCALRANKID against the mapping: refused");
    ok(strstr(err.msg, "MPI_LOCALRANKID=1 and MPI_LOCALNRANKS=2 but the "
              "launcher's PMI_process_mapping makes rank 1 the 1. of 2 on "
              "node 1") != NULL, "  naming both");
    alloc_free(&a);
    is_int(rd_pmi(HYDRA_INIT "cmd=get_result rc=-1 msg=key_not_found\n",
                  "MPI_LOCALRANKID=0", 0, &a, &err, sent, sizeof sent), 0,
           "no mapping published: the variables (block)");
    is_int(a.task.node_rank, 0, "  rank 1 on node 0");
    ok(!a.pmi_node, "  no map kept");
    alloc_free(&a);
    is_int(rd_pmi(cyclic, "MPI_LOCALRANKID=0", 1, &a, &err, sent,
                  sizeof sent), 0, "an MPI program's PMI_FD: read");
    is_str(sent, "", "  nothing said on it");
    alloc_free(&a);
    is_int(rd_pmi(HYDRA_INIT "cmd=get_result rc=0 value=(vector,(3,1,4))\n",
                  "MPI_LOCALRANKID=0", 0, &a, &err, sent, sizeof sent), -1,
           "a mapping that leaves nodes out: refused");
    ok(strstr(err.msg, "mpiexec.hydra: PMI_process_mapping '(vector,(3,1,4))' "
              "gives node 0 no rank") != NULL, "  quoting it");
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
    reads_pmi();
    return tap_done();
}
