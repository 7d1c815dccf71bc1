/* t_plan.c - laying ranks on nodes, and each rank's environment. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "where/alloc.h"
#include "where/sched.h"
#include "place/envout.h"
#include "fixture.h"
#include "util/net.h"
#include "place/plan.h"
#include "tap.h"

/* An allocation of "name:slots[:cpus]" entries. */
static void make_alloc(struct alloc *a, const char *spec, int default_ranks)
{
    char *copy = strdup(spec), *save = NULL;
    struct err err = { "" };

    memset(a, 0, sizeof *a);
    a->source = "hosts";
    a->kind = ALLOC_HOSTS;
    snprintf(a->why, sizeof a->why, "test");
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char name[64];
        int slots = 0, cpus = 0;
        sscanf(t, "%63[^:]:%d:%d", name, &slots, &cpus);
        alloc_add_node(a, name, slots, 0, &err);
        a->nodes[a->nnodes - 1].cpus = cpus;
    }
    a->default_ranks = default_ranks;
    free(copy);
}

/* "host/local host/local ..." for every rank */
static const char *layout(const struct plan *p)
{
    static char buf[1024];
    size_t len = 0;

    buf[0] = '\0';
    for (int r = 0; r < p->nranks && len < sizeof buf; r++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s/%d",
                                r ? " " : "", p->nodes[p->rank_node[r]].host,
                                p->rank_local[r]);
    return buf;
}

struct prow {
    const char *what, *alloc;
    int default_ranks;
    struct plan_request req;
    const char *layout;     /* NULL: refused */
    const char *err_has;
};

static const struct prow prows[] = {
    { "all slots in order", "a:2,b:2", 0, { 0 }, "a/0 a/1 b/0 b/1", NULL },
    { "-np fills in order", "a:2,b:2", 0, { .ranks = 3 }, "a/0 a/1 b/0", NULL },
    { "-np fits one node", "a:4,b:4", 0, { .ranks = 2 }, "a/0 a/1", NULL },
    { "-N 1", "a:2,b:2", 0, { .nodes = 1 }, "a/0 a/1", NULL },
    { "--nproc-per-node overrides slots", "a:1,b:1", 0, { .per_node = 2 },
      "a/0 a/1 b/0 b/1", NULL },
    { "default ranks of the local source", "h:8", 1, { 0 }, "h/0", NULL },
    { "uneven slots", "a:3,b:1", 0, { 0 }, "a/0 a/1 a/2 b/0", NULL },
    { "-np above slots refused", "a:2,b:2", 0, { .ranks = 5 }, NULL,
      "-np 5 but the 2 nodes" },
    { "-N above nodes refused", "a:2", 0, { .nodes = 2 }, NULL, "-N 2 but" },
    { "-np above task slots spreads over CPUs", "a:1:8,b:1:8", 0,
      { .ranks = 8 }, "a/0 a/1 a/2 a/3 b/0 b/1 b/2 b/3", NULL },
    { "spread needs every node's CPUs", "a:1:8,b:1:2", 0, { .ranks = 8 },
      NULL, "--oversubscribe" },
    { "oversubscribe", "a:1,b:1", 0, { .ranks = 3, .oversubscribe = 1 },
      "a/0 a/1 b/0", NULL },
    { "Hydra's -hosts a,b: dealt round, one each", "a:1,b:1", 0,
      { .ranks = 4, .deal = 1 }, "a/0 b/0 a/1 b/1", NULL },
    { "Hydra's -ppn 2: blocks of 2, again from the first", "a:1,b:1", 0,
      { .ranks = 6, .per_node = 2, .deal = 1 },
      "a/0 a/1 b/0 b/1 a/2 a/3", NULL },
    { "Hydra's a:2,b:1: each node's count, round again", "a:2,b:1", 0,
      { .ranks = 5, .deal = 1 }, "a/0 a/1 b/0 a/2 a/3", NULL },
    { "Hydra's dealing within the slots is block", "a:2,b:2", 0,
      { .ranks = 3, .deal = 1 }, "a/0 a/1 b/0", NULL },
};

static void check_plans(void)
{
    for (size_t i = 0; i < sizeof prows / sizeof prows[0]; i++) {
        const struct prow *r = &prows[i];
        struct alloc a;
        struct plan p;
        struct err err = { "" };
        int rc;

        make_alloc(&a, r->alloc, r->default_ranks);
        rc = plan_build(&a, &r->req, &p, &err);
        if (r->layout) {
            if (ok(rc == 0, r->what))
                is_str(layout(&p), r->layout, "  layout");
            else
                printf("#   error: %s\n", err.msg);
        } else {
            ok(rc < 0, r->what);
            if (!ok(strstr(err.msg, r->err_has) != NULL, "  message"))
                printf("#   message: %s\n", err.msg);
        }
        plan_free(&p);
        alloc_free(&a);
    }
}

static void check_per_task(void)
{
    struct alloc a;
    struct plan p;
    struct err err = { "" };
    struct plan_request same = { .ranks = 4 }, more = { .ranks = 8 },
                        per_node = { .per_node = 4 }, none = { 0 };

    make_alloc(&a, "n1:2,n2:2", 0);
    a.source = "slurm-step";
    a.kind = ALLOC_STEP;
    a.sched = sched_find("slurm");
    a.has_task = 1;
    a.task = (struct alloc_task){ .rank = 3, .size = 4, .local_rank = 1,
                                  .local_size = 2, .node_rank = 1 };
    a.task_node = calloc(4, sizeof(int));
    a.task_node[2] = a.task_node[3] = 1;
    ok(plan_is_per_task(&a, &none), "per-task when nothing is asked");
    ok(plan_is_per_task(&a, &same), "per-task when -np matches the tasks");
    ok(!plan_is_per_task(&a, &more), "not per-task when -np asks for more");
    ok(!plan_is_per_task(&a, &per_node), "not per-task with another "
       "--nproc-per-node");
    ok(plan_build(&a, &none, &p, &err) == 0, "per-task plan");
    is_int(p.self, 3, "  self is the scheduler's rank");
    is_str(layout(&p), "n1/0 n1/1 n2/0 n2/1", "  layout as the tasks");
    plan_free(&p);
    ok(plan_build(&a, &per_node, &p, &err) < 0, "two tasks on a node and "
       "--nproc-per-node: refused");
    ok(strstr(err.msg, "--ntasks-per-node=1") != NULL, "  says how");
    alloc_free(&a);
}

/* mpiexec.hydra -n 4 -ppn 1 over two hosts: only this host is known, and
 * the launcher's PMI_process_mapping says each rank's node (cyclic), not
 * block order. */
static void check_pmi_map(void)
{
    struct alloc a;
    struct plan p;
    struct err err = { "" };
    struct plan_request none = { 0 };

    make_alloc(&a, "here:2", 0);
    a.source = "mpich";
    a.kind = ALLOC_MPIRUN;
    a.has_task = 1;
    a.task = (struct alloc_task){ .rank = 1, .size = 4, .local_rank = 0,
                                  .local_size = 2, .node_rank = 1 };
    a.pmi_node = calloc(4, sizeof(int));
    a.pmi_node[1] = a.pmi_node[3] = 1;
    ok(plan_build(&a, &none, &p, &err) == 0, "per-task plan from the mapping");
    ok(p.nnodes == 2 && p.rank_node[0] == 0 && p.rank_node[1] == 1 &&
       p.rank_node[2] == 0 && p.rank_node[3] == 1, "  cyclic, as mapped");
    is_int(p.rank_local[3], 1, "  rank 3 the second on node 1");
    is_str(p.nodes[1].host, "here", "  this host is rank 1's node");
    ok(p.nodes[0].host == NULL, "  rank 0's host unknown");
    is_str(p.layout, "as the launcher's PMI_process_mapping says", "  said");
    plan_free(&p);
    alloc_free(&a);
}

/* srun --ntasks-per-node=1 dlrun --nproc-per-node 3: task 1 starts node 1's */
static void check_per_node(void)
{
    struct alloc a;
    struct plan p;
    struct err err = { "" };
    struct plan_request req = { .per_node = 3 };

    make_alloc(&a, "n1:1,n2:1", 0);
    a.source = "slurm-step";
    a.kind = ALLOC_STEP;
    a.sched = sched_find("slurm");
    a.has_task = 1;
    a.task = (struct alloc_task){ .rank = 1, .size = 2, .local_rank = 0,
                                  .local_size = 1, .node_rank = 1 };
    a.task_node = calloc(2, sizeof(int));
    a.task_node[1] = 1;
    ok(!plan_is_per_task(&a, &req), "per-node: not per-task");
    ok(plan_build(&a, &req, &p, &err) == 0, "per-node plan");
    is_str(layout(&p), "n1/0 n1/1 n1/2 n2/0 n2/1 n2/2", "  six ranks");
    is_int(p.self_node, 1, "  this task starts node 1's ranks");
    plan_free(&p);
    alloc_free(&a);
}

static const char *get(const struct envset *s, const char *name)
{
    const char *v = envset_get(s, name);
    return v ? v : "(unset)";
}

static void check_env_launch(void)
{
    struct alloc a;
    struct plan p;
    struct plan_request req = { 0 };
    struct rdv rdv = { .addr = "10.0.0.1", .port = 29500 };
    char *x[] = { "FOO=bar", "DLRUN_T_COPY", "DLRUN_T_UNSET", NULL };
    const char *base[] = { "DLRUN_T_COPY=copied", NULL };
    char **envp = envp_of(base);
    struct envout_opts o = { .iface = "ib0", .exports = x, .envp = envp,
                             .tf_config = 1 };
    struct envset s = { 0 }, s1 = { 0 };
    struct err err = { "" };

    make_alloc(&a, "a:2,b:1", 0);
    a.source = "slurm-job";
    a.kind = ALLOC_JOB;
    a.sched = sched_find("slurm");
    plan_build(&a, &req, &p, &err);
    ok(envout_rank(&a, &p, 2, &rdv, &o, &s, &err) == 0, "env of rank 2");
    is_str(get(&s, "RANK"), "2", "RANK");
    is_str(get(&s, "WORLD_SIZE"), "3", "WORLD_SIZE");
    is_str(get(&s, "LOCAL_RANK"), "0", "LOCAL_RANK");
    is_str(get(&s, "LOCAL_WORLD_SIZE"), "1", "LOCAL_WORLD_SIZE");
    is_str(get(&s, "NODE_RANK"), "1", "NODE_RANK");
    is_str(get(&s, "MASTER_ADDR"), "10.0.0.1", "MASTER_ADDR");
    is_str(get(&s, "MASTER_PORT"), "29500", "MASTER_PORT");
    is_str(get(&s, "HOROVOD_CROSS_RANK"), "1", "HOROVOD_CROSS_RANK");
    is_str(get(&s, "HOROVOD_CROSS_SIZE"), "2", "HOROVOD_CROSS_SIZE");
    is_str(get(&s, "HOROVOD_HOSTNAME"), "b", "HOROVOD_HOSTNAME");
    is_str(get(&s, "TF_CONFIG"), "{\"cluster\":{\"worker\":[\"a:29501\","
           "\"a:29502\",\"b:29501\"]},\"task\":{\"type\":\"worker\","
           "\"index\":2}}", "TF_CONFIG");
    is_str(get(&s, "JAX_COORDINATOR_ADDRESS"), "10.0.0.1:29500", "JAX");
    is_str(get(&s, "NCCL_SOCKET_IFNAME"), "ib0", "NCCL_SOCKET_IFNAME");
    is_str(get(&s, "SLURM_PROCID"), "2", "SLURM_PROCID rewritten");
    is_str(get(&s, "SLURM_TASKS_PER_NODE"), "2,1", "SLURM_TASKS_PER_NODE");
    is_str(get(&s, "FOO"), "bar", "-x FOO=bar");
    is_str(get(&s, "DLRUN_T_COPY"), "copied", "-x VAR copies");
    is_str(get(&s, "DLRUN_T_UNSET"), "(unset)", "-x VAR of an unset one");
    o.keep_env = 1;
    ok(envout_rank(&a, &p, 1, &rdv, &o, &s1, &err) == 0, "env of rank 1");
    is_str(get(&s1, "HOROVOD_CROSS_SIZE"), "1", "cross size of local rank 1");
    is_str(get(&s1, "SLURM_PROCID"), "(unset)", "--keep-env: no rewrite");
    ok(envout_rank(&a, &p, 3, &rdv, &o, &s1, &err) < 0, "rank 3 refused");
    envset_free(&s);
    envset_free(&s1);
    plan_free(&p);
    alloc_free(&a);
    envp_free(envp);
}

/* An agent's allocation is the head's plan (-H): the scheduler's task
 * variables are rewritten when it runs inside a job of one that has them
 * (Slurm's), not in another's (PBS's), nor outside any. */
static void check_env_agent(void)
{
    const char *slurm[] = { "SLURM_JOB_ID=7", NULL }, *pbs[] = {
        "PBS_JOBID=7.pbs", NULL }, *none[] = { NULL };
    const char *const *envs[] = { slurm, pbs, none };
    const char *want[] = { "1", "(unset)", "(unset)" };
    struct rdv rdv = { .addr = "10.0.0.1", .port = 29500 };
    struct plan_request req = { 0 };
    struct err err = { "" };

    for (int i = 0; i < 3; i++) {
        char **envp = envp_of(envs[i]);
        struct envout_opts o = { .envp = envp, .in_job = 1 };
        struct envset s = { 0 };
        struct alloc a;
        struct plan p;

        make_alloc(&a, "a:2,b:1", 0);
        plan_build(&a, &req, &p, &err);
        ok(envout_rank(&a, &p, 1, &rdv, &o, &s, &err) == 0 &&
           strcmp(get(&s, "SLURM_PROCID"), want[i]) == 0,
           i == 0 ? "agent in a Slurm job: SLURM_PROCID rewritten" :
           i == 1 ? "agent in a PBS job: nothing of Slurm's" :
                    "agent in no job: nothing of Slurm's");
        envset_free(&s);
        plan_free(&p);
        alloc_free(&a);
        envp_free(envp);
    }
}

static void check_derived_port(void)
{
    int p1 = net_derived_port("42", "0"), p2 = net_derived_port("42", "0");
    int p3 = net_derived_port("42", "1");

    ok(p1 >= 20000 && p1 <= 29999, "derived port in 20000-29999");
    is_int(p1, p2, "derived port is stable");
    ok(p1 != p3, "another step gets another port");
}

int main(void)
{
    check_plans();
    check_per_task();
    check_pmi_map();
    check_per_node();
    check_env_launch();
    check_env_agent();
    check_derived_port();
    return tap_done();
}
