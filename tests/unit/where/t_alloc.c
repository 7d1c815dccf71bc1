/* t_alloc.c - the choice among allocation sources (lib/where/alloc.c),
 * one table row per environment, and captured environments of real
 * clusters (tests/fixtures) read end to end.  Each source's own detect and
 * read are tested in t_sched_NAME.c (one per scheduler), t_alloc_mpi.c
 * and t_alloc_hosts.c, the schedulers' table and probing order in
 * t_sched.c; the host list and host file grammar in t_hostfile.c. */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "where/alloc.h"
#include "fixture.h"
#include "where/hostfile.h"
#include "tap.h"

struct row {
    const char *what;
    const char *env[24];
    struct alloc_request req;
    const char *source;         /* NULL: must fail */
    const char *nodes;          /* "name:slots,..." */
    int rank, local_rank, local_size, node_rank;  /* when has_task */
    const char *err_has;        /* substring of the error */
};

#define STEP2x2(procid, localid, nodeid) \
    "SLURM_JOB_ID=42", "SLURM_STEP_ID=0", "SLURM_STEP_NODELIST=node[1-2]", \
    "SLURM_STEP_NUM_NODES=2", "SLURM_STEP_NUM_TASKS=4", \
    "SLURM_STEP_TASKS_PER_NODE=2(x2)", "SLURM_PROCID=" procid, \
    "SLURM_LOCALID=" localid, "SLURM_NODEID=" nodeid

static const struct row rows[] = {
    { "slurm step rank 0", { STEP2x2("0", "0", "0"), NULL }, { 0 },
      "slurm-step", "node1:2,node2:2", 0, 0, 2, 0, NULL },
    { "slurm step rank 3", { STEP2x2("3", "1", "1"), NULL }, { 0 },
      "slurm-step", "node1:2,node2:2", 3, 1, 2, 1, NULL },
    { "slurm step uneven 2(x2),1", { "SLURM_JOB_ID=7", "SLURM_STEP_ID=3",
      "SLURM_STEP_NODELIST=n[1-3]", "SLURM_STEP_NUM_TASKS=5",
      "SLURM_STEP_TASKS_PER_NODE=2(x2),1", "SLURM_PROCID=4", "SLURM_LOCALID=0",
      "SLURM_NODEID=2", NULL }, { 0 },
      "slurm-step", "n1:2,n2:2,n3:1", 4, 0, 1, 2, NULL },
    { "slurm step: tasks per node disagree with task count", {
      "SLURM_JOB_ID=7", "SLURM_STEP_ID=3", "SLURM_STEP_NODELIST=n[1-2]",
      "SLURM_STEP_NUM_TASKS=5", "SLURM_STEP_TASKS_PER_NODE=2(x2)",
      "SLURM_PROCID=0", "SLURM_LOCALID=0", "SLURM_NODEID=0", NULL }, { 0 },
      NULL, NULL, 0, 0, 0, 0, "SLURM_STEP_NUM_TASKS=5" },
    { "slurm step: node count disagrees", { "SLURM_JOB_ID=7", "SLURM_STEP_ID=3",
      "SLURM_STEP_NODELIST=n[1-3]", "SLURM_STEP_NUM_TASKS=4",
      "SLURM_STEP_TASKS_PER_NODE=2(x2)", "SLURM_PROCID=0", "SLURM_LOCALID=0",
      "SLURM_NODEID=0", NULL }, { 0 },
      NULL, NULL, 0, 0, 0, 0, "names 3 nodes" },
    { "slurm step: SLURM_STEP_NUM_NODES disagrees", { "SLURM_JOB_ID=7",
      "SLURM_STEP_ID=3", "SLURM_STEP_NODELIST=n[1-2]", "SLURM_STEP_NUM_NODES=3",
      "SLURM_STEP_NUM_TASKS=4", "SLURM_STEP_TASKS_PER_NODE=2(x2)",
      "SLURM_PROCID=0", "SLURM_LOCALID=0", "SLURM_NODEID=0", NULL }, { 0 },
      NULL, NULL, 0, 0, 0, 0, "SLURM_STEP_NUM_NODES=3" },
    { "slurm step: procid out of range", { STEP2x2("4", "0", "0"), NULL }, { 0 },
      NULL, NULL, 0, 0, 0, 0, "SLURM_PROCID=4" },
    { "slurm step: localid beyond the node's tasks", { STEP2x2("1", "2", "0"),
      NULL }, { 0 }, NULL, NULL, 0, 0, 0, 0, "SLURM_LOCALID=2" },
    { "slurm step: garbage nodelist", { "SLURM_JOB_ID=7", "SLURM_STEP_ID=3",
      "SLURM_STEP_NODELIST=n[3-1]", "SLURM_STEP_NUM_TASKS=1",
      "SLURM_STEP_TASKS_PER_NODE=1", "SLURM_PROCID=0", "SLURM_LOCALID=0",
      "SLURM_NODEID=0", NULL }, { 0 },
      NULL, NULL, 0, 0, 0, 0, "SLURM_STEP_NODELIST" },
    { "interactive step (srun --pty bash) with -np 4 uses the job",
      { "SLURM_JOB_ID=9", "SLURM_STEP_ID=0", "SLURM_STEP_NODELIST=a1",
        "SLURM_STEP_NUM_TASKS=1", "SLURM_STEP_TASKS_PER_NODE=1",
        "SLURM_PROCID=0", "SLURM_LOCALID=0", "SLURM_NODEID=0",
        "SLURM_JOB_NODELIST=a[1-2]", "SLURM_JOB_NUM_NODES=2",
        "SLURM_TASKS_PER_NODE=2(x2)", NULL }, { .want_ranks = 4 },
      "slurm-job", "a1:2,a2:2", -1, 0, 0, 0, NULL },
    { "slurm batch script", { "SLURM_JOB_ID=42", "SLURM_JOB_NODELIST=gpu[01-02]",
      "SLURM_JOB_NUM_NODES=2", "SLURM_TASKS_PER_NODE=4(x2)", "SLURM_NTASKS=8",
      "SLURM_JOB_CPUS_PER_NODE=16(x2)", NULL }, { 0 },
      "slurm-job", "gpu01:4,gpu02:4", -1, 0, 0, 0, NULL },
    { "slurm batch: SLURM_NTASKS disagrees", { "SLURM_JOB_ID=42",
      "SLURM_JOB_NODELIST=gpu[01-02]", "SLURM_TASKS_PER_NODE=4(x2)",
      "SLURM_NTASKS=7", NULL }, { 0 },
      NULL, NULL, 0, 0, 0, 0, "SLURM_NTASKS=7" },
    { "slurm salloc without tasks per node", { "SLURM_JOB_ID=5",
      "SLURM_JOB_NODELIST=c[1-3]", "SLURM_JOB_NUM_NODES=3", NULL }, { 0 },
      "slurm-job", "c1:1,c2:1,c3:1", -1, 0, 0, 0, NULL },
    { "open mpi rank", { "OMPI_COMM_WORLD_RANK=5", "OMPI_COMM_WORLD_SIZE=8",
      "OMPI_COMM_WORLD_LOCAL_RANK=1", "OMPI_COMM_WORLD_LOCAL_SIZE=4", NULL },
      { 0 }, "ompi", NULL, 5, 1, 4, 1, NULL },
    { "mpich hydra rank", { "PMI_RANK=2", "PMI_SIZE=4", "MPI_LOCALRANKID=0",
      "MPI_LOCALNRANKS=2", NULL }, { 0 }, "mpich", NULL, 2, 0, 2, 1, NULL },
    { "open mpi: uneven local sizes refused", { "OMPI_COMM_WORLD_RANK=0",
      "OMPI_COMM_WORLD_SIZE=5", "OMPI_COMM_WORLD_LOCAL_RANK=0",
      "OMPI_COMM_WORLD_LOCAL_SIZE=2", NULL }, { 0 },
      NULL, NULL, 0, 0, 0, 0, "not a multiple" },
    { "lsf", { "LSB_JOBID=11", "LSB_MCPU_HOSTS=hostA 2 hostB 1", NULL }, { 0 },
      "lsf", "hostA:2,hostB:1", -1, 0, 0, 0, NULL },
    { "lsf garbage", { "LSB_MCPU_HOSTS=hostA two", NULL }, { 0 },
      NULL, NULL, 0, 0, 0, 0, "LSB_MCPU_HOSTS" },
    { "-H wins over Slurm", { STEP2x2("0", "0", "0"), NULL },
      { .hosts = "h1:4,h2:4" }, "hosts", "h1:4,h2:4", -1, 0, 0, 0, NULL },
    { "-H hostlist with slots, repeats add", { NULL },
      { .hosts = "node[1-3]:2,node1" }, "hosts", "node1:3,node2:2,node3:2",
      -1, 0, 0, 0, NULL },
    { "-H user@host and ipv6", { NULL },
      { .hosts = "alice@h1:2,[fe80::1]:4,::1" }, "hosts",
      "alice@h1:2,fe80::1:4,::1:1", -1, 0, 0, 0, NULL },
    { "-H bad slots", { NULL }, { .hosts = "h1:0" }, NULL, NULL, 0, 0, 0, 0,
      "slots after ':'" },
    { "-H empty entry", { NULL }, { .hosts = "h1,,h2" }, NULL, NULL, 0, 0, 0,
      0, "empty entry" },
    /* issue 11 item 9: what cannot be a host name is refused at every
     * source, and the message says which */
    { "-H option-like host", { NULL }, { .hosts = "--ssh-config=x:1" }, NULL,
      NULL, 0, 0, 0, 0, "-H: host name \"--ssh-config=x\": a label starts "
      "with '-'" },
    { "-H shell text", { NULL }, { .hosts = "$(touch /tmp/x):1" }, NULL, NULL,
      0, 0, 0, 0, "-H: host name \"$(touch\"" },
    { "slurm job: bad name in the node list", { "SLURM_JOB_ID=7",
      "SLURM_JOB_NODELIST=n1,-oProxyCommand=x", NULL }, { 0 }, NULL, NULL, 0,
      0, 0, 0, "SLURM_JOB_NODELIST: host name \"-oProxyCommand=x\"" },
    { "slurm step: bad name in the node list", { "SLURM_JOB_ID=7",
      "SLURM_STEP_ID=0", "SLURM_STEP_NODELIST=a;b", "SLURM_STEP_NUM_TASKS=1",
      "SLURM_STEP_TASKS_PER_NODE=1", "SLURM_PROCID=0", "SLURM_LOCALID=0",
      "SLURM_NODEID=0", NULL }, { 0 }, NULL, NULL, 0, 0, 0, 0,
      "SLURM_STEP_NODELIST: host name \"a;b\"" },
    { "lsf: bad name", { "LSB_MCPU_HOSTS=hostA 2 -x 1", NULL }, { 0 },
      NULL, NULL, 0, 0, 0, 0, "LSB_MCPU_HOSTS: host name \"-x\"" },
    { "--alloc unknown", { NULL }, { .force = "sge" }, NULL, NULL, 0, 0, 0, 0,
      "unknown allocation source" },
    { "-H and --hostfile", { NULL }, { .hosts = "a", .hostfile = "f" }, NULL,
      NULL, 0, 0, 0, 0, "use one of them" },
    /* mpirun inside an allocation: the Slurm variables are those of the
     * step that started mpirun's daemons, one per node */
    { "Open MPI variables win over the Slurm step of mpirun's daemons", {
      "SLURM_JOB_ID=42", "SLURM_STEP_ID=0", "SLURM_STEP_NODELIST=node[1-2]",
      "SLURM_STEP_NUM_NODES=2", "SLURM_STEP_NUM_TASKS=2",
      "SLURM_STEP_TASKS_PER_NODE=1(x2)", "SLURM_PROCID=1", "SLURM_LOCALID=0",
      "SLURM_NODEID=1", "OMPI_COMM_WORLD_RANK=3", "OMPI_COMM_WORLD_SIZE=4",
      "OMPI_COMM_WORLD_LOCAL_RANK=1", "OMPI_COMM_WORLD_LOCAL_SIZE=2", NULL },
      { 0 }, "ompi", NULL, 3, 1, 2, 1, NULL },
};

static void check_row(const struct row *r)
{
    char **envp = envp_of(r->env);
    struct alloc a = { 0 };
    struct err err = { "" };
    char what[300];
    int rc = alloc_detect(&r->req, envp, &a, &err);

    snprintf(what, sizeof what, "%s: %s", r->what,
             r->source ? "accepted" : "refused");
    if (!ok(r->source ? rc == 0 : rc < 0, what))
        printf("#   error: %s\n", err.msg);
    if (!r->source) {
        snprintf(what, sizeof what, "%s: message names '%s'", r->what, r->err_has);
        if (!ok(strstr(err.msg, r->err_has) != NULL, what))
            printf("#   message: %s\n", err.msg);
    } else if (rc == 0) {
        is_str(a.source, r->source, r->what);
        if (r->nodes)
            is_str(alloc_nodes_str(&a), r->nodes, r->what);
        if (r->rank >= 0) {
            ok(a.has_task, r->what);
            is_int(a.task.rank, r->rank, "  rank");
            is_int(a.task.local_rank, r->local_rank, "  local rank");
            is_int(a.task.local_size, r->local_size, "  local size");
            is_int(a.task.node_rank, r->node_rank, "  node rank");
        }
    }
    alloc_free(&a);
    envp_free(envp);
}

/* PBS_NODEFILE and NQSV_MPIOPTS point at files: write them for real. */
static void check_file_sources(void)
{
    char path[] = "/tmp/dlrun-t-alloc.XXXXXX", var[128], opts[160];
    int fd = mkstemp(path);
    const char *text = "n01.cluster\nn01.cluster\nn02.cluster\nn02.cluster\n";
    struct alloc a = { 0 };
    struct alloc_request req = { 0 };
    struct err err = { "" };

    ok(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text),
       "write a node file");
    close(fd);
    snprintf(var, sizeof var, "PBS_NODEFILE=%s", path);
    {
        const char *env[] = { "PBS_JOBID=12.pbs", var, NULL };
        char **envp = envp_of(env);
        ok(alloc_detect(&req, envp, &a, &err) == 0, "pbs node file read");
        is_str(a.source, "pbs", "pbs detected");
        is_str(alloc_nodes_str(&a), "n01.cluster:2,n02.cluster:2", "pbs slots");
        alloc_free(&a);
        envp_free(envp);
    }
    snprintf(opts, sizeof opts, "NQSV_MPIOPTS=-v -hostfile %s -np 4", path);
    {
        const char *env[] = { opts, NULL };
        char **envp = envp_of(env);
        ok(alloc_detect(&req, envp, &a, &err) == 0, "nqsv host file read");
        is_str(a.source, "nqsv", "nqsv detected");
        is_str(alloc_nodes_str(&a), "n01.cluster:2,n02.cluster:2", "nqsv slots");
        alloc_free(&a);
        envp_free(envp);
    }
    {
        const char *env[] = { "NQSV_MPIOPTS=-v", NULL };
        char **envp = envp_of(env);
        ok(alloc_detect(&req, envp, &a, &err) < 0, "nqsv without host file");
        ok(strstr(err.msg, "-hostfile") != NULL, "  message says what to pass");
        envp_free(envp);
    }
    unlink(path);
}

static void check_cyclic_and_gpus(void)
{
    const char *env[] = { "SLURM_JOB_ID=1", "SLURM_STEP_ID=0",
        "SLURM_STEP_NODELIST=n[1-2]", "SLURM_STEP_NUM_TASKS=4",
        "SLURM_STEP_TASKS_PER_NODE=2(x2)", "SLURM_PROCID=1", "SLURM_LOCALID=0",
        "SLURM_NODEID=1", "SLURM_DISTRIBUTION=cyclic", "SLURM_STEP_GPUS=2,3",
        "CUDA_VISIBLE_DEVICES=0", NULL };
    char **envp = envp_of(env);
    struct alloc_request req = { 0 };
    struct alloc a = { 0 };
    struct err err = { "" };

    ok(alloc_detect(&req, envp, &a, &err) == 0, "cyclic step read");
    ok(a.task_node != NULL, "cyclic: task map kept (rank 1 is on node 1)");
    if (a.task_node) {
        is_int(a.task_node[0], 0, "cyclic: rank 0 on node 0");
        is_int(a.task_node[1], 1, "cyclic: rank 1 on node 1");
        is_int(a.task_node[2], 0, "cyclic: rank 2 on node 0");
        is_int(a.task_node[3], 1, "cyclic: rank 3 on node 1");
    }
    is_str(a.gpus, "2,3", "GPUs from SLURM_STEP_GPUS first");
    is_str(a.gpus_from, "SLURM_STEP_GPUS", "  named");
    alloc_free(&a);
    envp_free(envp);
}

/* Every captured step: dlrun's reading agrees with what Slurm told the
 * task directly (PROCID, LOCALID, NODEID, and GTIDS: the ranks on its node). */
static void check_step_fixture(const char *path)
{
    char **envp = envp_load(path, NULL);
    struct alloc_request req = { 0 };
    struct alloc a = { 0 };
    struct err err = { "" };
    char what[512], gtids[256];
    int procid = -1, localid = -1, nodeid = -1, n = 0;

    alloc_getint(envp, "SLURM_PROCID", 0, 1 << 20, &procid, &err);
    alloc_getint(envp, "SLURM_LOCALID", 0, 1 << 20, &localid, &err);
    alloc_getint(envp, "SLURM_NODEID", 0, 1 << 20, &nodeid, &err);
    snprintf(gtids, sizeof gtids, "%s", alloc_getenv(envp, "SLURM_GTIDS") ?
             alloc_getenv(envp, "SLURM_GTIDS") : "");
    snprintf(what, sizeof what, "fixture %s", path);
    if (!ok(alloc_detect(&req, envp, &a, &err) == 0, what)) {
        printf("#   error: %s\n", err.msg);
        envp_free(envp);
        return;
    }
    is_str(a.source, "slurm-step", "  source");
    is_int(a.task.rank, procid, "  rank = SLURM_PROCID");
    is_int(a.task.local_rank, localid, "  local rank = SLURM_LOCALID");
    is_int(a.task.node_rank, nodeid, "  node rank = SLURM_NODEID");
    ok(a.task_node != NULL, "  every task's node is known");
    for (char *save = NULL, *t = strtok_r(gtids, ",", &save); t && a.task_node;
         t = strtok_r(NULL, ",", &save), n++)
        if (!is_int(a.task_node[atoi(t)], nodeid, "  SLURM_GTIDS task here"))
            break;
    is_int(a.task.local_size, n, "  local size = tasks in SLURM_GTIDS");
    alloc_free(&a);
    envp_free(envp);
}

/* Batch scripts and salloc shells: the job's nodes and task slots. */
static void check_job_fixture(const char *path)
{
    char **envp = envp_load(path, NULL);
    struct alloc_request req = { 0 };
    struct alloc a = { 0 };
    struct err err = { "" };
    char what[512];
    int nnodes = 0, ntasks = 0;

    alloc_getint(envp, "SLURM_JOB_NUM_NODES", 1, 1 << 20, &nnodes, &err);
    snprintf(what, sizeof what, "fixture %s", path);
    if (!ok(alloc_detect(&req, envp, &a, &err) == 0, what)) {
        printf("#   error: %s\n", err.msg);
        envp_free(envp);
        return;
    }
    is_str(a.source, "slurm-job", "  source");
    ok(!a.has_task, "  not one task of many");
    is_int(a.nnodes, nnodes, "  nodes = SLURM_JOB_NUM_NODES");
    if (alloc_getint(envp, "SLURM_NTASKS", 1, 1 << 20, &ntasks, &err) == 0)
        is_int(alloc_slots(&a), ntasks, "  slots = SLURM_NTASKS");
    alloc_free(&a);
    envp_free(envp);
}

static void check_fixtures(void)
{
    glob_t g;
    size_t steps = 0, jobs = 0;

    if (glob("tests/fixtures/slurm/*.env", 0, NULL, &g) != 0) {
        ok(0, "Slurm fixtures found (run from the repository root)");
        return;
    }
    for (size_t i = 0; i < g.gl_pathc; i++) {
        char **envp = envp_load(g.gl_pathv[i], NULL);
        int step = alloc_getenv(envp, "SLURM_STEP_ID") != NULL;
        envp_free(envp);
        if (step && ++steps)
            check_step_fixture(g.gl_pathv[i]);
        else if (++jobs)
            check_job_fixture(g.gl_pathv[i]);
    }
    ok(steps >= 10 && jobs >= 3, "enough step and job fixtures");
    globfree(&g);
}

/* PJM (tests/fixtures/pjm/README): hosts from the node-information file,
 * slots from PJM_PROC_BY_NODE, counts cross-checked. */
static void check_pjm(void)
{
    static const struct {
        const char *file, *nodes, *err_has;
        int ranks, cpus, spread;
    } pjm[] = {
        { "flow-2node", "cx0101:4,cx0102:4", NULL, 8, 40, 0 },
        { "flow-1node", "cx0101:4", NULL, 4, 40, 0 },
        { "vnode-2", "vn001:1,vn002:1", NULL, 0, 8, 1 },
        { "bad-node", NULL, "PJM_NODE=3 but PJM_O_NODEINF names 2 hosts", 0, 0, 0 },
        { "bad-proc", NULL, "PJM_MPI_PROC=12", 0, 0, 0 },
    };
    struct alloc_request req = { 0 };

    for (size_t i = 0; i < sizeof pjm / sizeof pjm[0]; i++) {
        char path[128];
        char **envp;
        struct alloc a = { 0 };
        struct err err = { "" };
        int rc;

        snprintf(path, sizeof path, "tests/fixtures/pjm/%s.env", pjm[i].file);
        envp = envp_load(path, NULL);
        rc = alloc_detect(&req, envp, &a, &err);
        if (pjm[i].err_has) {
            ok(rc < 0 && strstr(err.msg, pjm[i].err_has), pjm[i].file);
            if (!strstr(err.msg, pjm[i].err_has))
                printf("#   message: %s\n", err.msg);
        } else if (ok(rc == 0, pjm[i].file)) {
            is_str(a.source, "pjm", "  source pjm");
            is_str(alloc_nodes_str(&a), pjm[i].nodes, "  hosts from PJM_O_NODEINF");
            is_int(a.default_ranks, pjm[i].ranks, "  ranks = PJM_MPI_PROC");
            is_int(a.nodes[0].cpus, pjm[i].cpus, "  cores per node");
            is_int(a.spread_ok, pjm[i].spread, "  spread over vnodes");
            is_str(a.jobid ? a.jobid : "", alloc_getenv(envp, "PJM_JOBID"),
                   "  job id");
        } else {
            printf("#   error: %s\n", err.msg);
        }
        alloc_free(&a);
        envp_free(envp);
    }
}

/* mpirun -np 1 dlrun --nproc-per-node 2: every task on this node, so the
 * map is known (one node) and the plan can be per node; without the
 * option nothing changes (per-task mode needs no map). */
static void check_ompi_one_node(void)
{
    static const char *const env[] = {
        "OMPI_COMM_WORLD_RANK=1", "OMPI_COMM_WORLD_SIZE=2",
        "OMPI_COMM_WORLD_LOCAL_RANK=1", "OMPI_COMM_WORLD_LOCAL_SIZE=2", NULL,
    };
    struct alloc_request per_node = { .want_per_node = 3 }, none = { 0 };
    char **envp = envp_of(env);
    struct alloc a = { 0 };
    struct err err = { "" };

    ok(alloc_detect(&per_node, envp, &a, &err) == 0,
       "ompi, all tasks here, --nproc-per-node 3: accepted");
    ok(a.task_node && a.task_node[0] == 0 && a.task_node[1] == 0,
       "  every task on node 0");
    is_int(a.nnodes, 1, "  one node");
    is_int(a.nodes[0].slots, 2, "  with the 2 tasks");
    alloc_free(&a);
    ok(alloc_detect(&none, envp, &a, &err) == 0 && !a.task_node,
       "ompi without layout options: no map needed");
    alloc_free(&a);
    envp_free(envp);
    {
        static const char *const hydra[] = {
            "PMI_RANK=0", "PMI_SIZE=1", "MPI_LOCALRANKID=0",
            "MPI_LOCALNRANKS=1", NULL,
        };
        envp = envp_of(hydra);
        ok(alloc_detect(&per_node, envp, &a, &err) == 0 && a.task_node &&
           a.nnodes == 1 && strcmp(a.source, "mpich") == 0,
           "mpiexec -n 1 dlrun --nproc-per-node 3 (Hydra): one node, mapped");
        alloc_free(&a);
        envp_free(envp);
    }
}

int main(void)
{
    check_fixtures();
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        check_row(&rows[i]);
    check_file_sources();
    check_cyclic_and_gpus();
    check_ompi_one_node();
    check_pjm();
    return tap_done();
}
