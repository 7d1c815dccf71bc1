/* t_envout.c - envout on its own: Slurm's compressed task counts, the
 * error file of each attempt, Horovod's Gloo variables, torchrun's names
 * (restarts, run id, role), the OMP_NUM_THREADS default and TF_CONFIG's
 * worker ports.  t_plan.c checks the rank variables of whole plans. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "where/alloc.h"
#include "place/envout.h"
#include "fixture.h"
#include "place/plan.h"
#include "tap.h"

static const char *get(const struct envset *s, const char *name)
{
    const char *v = envset_get(s, name);
    return v ? v : "(unset)";
}

/* Slurm's "2(x3),1" for nodes holding counts[0..n) ranks. */
static void tasks_per_node(const int *counts, int n, const char *want)
{
    struct plan_node nodes[8] = { { 0 } };
    struct plan p = { .nodes = nodes, .nnodes = n };
    char *s;

    for (int i = 0; i < n; i++)
        nodes[i].nranks = counts[i];
    s = envout_tasks_per_node(&p);
    is_str(s, want, want);
    free(s);
}

static void check_tasks_per_node(void)
{
    tasks_per_node((const int[]){ 4 }, 1, "4");
    tasks_per_node((const int[]){ 2, 2, 2, 1 }, 4, "2(x3),1");
    tasks_per_node((const int[]){ 1, 2, 1 }, 3, "1,2,1");
    tasks_per_node((const int[]){ 3, 3, 1, 1 }, 4, "3(x2),1(x2)");
    tasks_per_node(NULL, 0, "");
}

static void check_error_file_and_gloo(void)
{
    char buf[128];
    struct envset s = { 0 };
    struct err err = { "" };

    envout_error_file("/tmp/e", 2, 7, buf, sizeof buf);
    is_str(buf, "/tmp/e/attempt.2.rank.7.json", "error file per attempt");
    ok(envout_gloo("10.0.0.1", 4321, "eth0", &s, &err) == 0, "gloo");
    is_str(get(&s, "HOROVOD_GLOO_RENDEZVOUS_ADDR"), "10.0.0.1", "gloo addr");
    is_str(get(&s, "HOROVOD_GLOO_RENDEZVOUS_PORT"), "4321", "gloo port");
    is_str(get(&s, "HOROVOD_CONTROLLER"), "gloo", "gloo controller");
    is_str(get(&s, "HOROVOD_GLOO_IFACE"), "eth0", "gloo interface");
    is_str(get(&s, "NCCL_SOCKET_IFNAME"), "eth0", "NCCL's, the same");
    envset_free(&s);
}

/* b's ssh_config HostName, or NULL */
static const char *b_addr_name;

/* Two nodes a:2, b:1 from -H; rank's variables with o into s. */
static int rank_env(int rank, const struct rdv *rdv,
                    const struct envout_opts *o, struct envset *s)
{
    struct alloc a;
    struct plan p;
    struct plan_request req = { 0 };
    struct err err = { "" };
    int rc;

    memset(&a, 0, sizeof a);
    a.source = "hosts";
    a.kind = ALLOC_HOSTS;
    alloc_add_node(&a, "a", 2, 0, &err);
    alloc_add_node(&a, "b", 1, 0, &err);
    a.nodes[1].addr_name = b_addr_name ? strdup(b_addr_name) : NULL;
    rc = plan_build(&a, &req, &p, &err) == 0 ? 0 : -1;
    if (rc == 0)
        rc = envout_rank(&a, &p, rank, rdv, o, s, &err);
    if (rc < 0)
        printf("# %s\n", err.msg);
    plan_free(&p);
    alloc_free(&a);
    return rc;
}

static void check_torch_names(void)
{
    struct rdv rdv = { .addr = "10.0.0.1", .port = 29500 };
    const char *user[] = { "OMP_NUM_THREADS=3", NULL };
    char **envp = envp_of(user), *none[] = { NULL };
    struct envout_opts o = { .envp = none, .restart = 2, .max_restarts = 5,
                             .error_dir = "/tmp/e", .omp_threads = 8 };
    struct envset s = { 0 };

    ok(rank_env(1, &rdv, &o, &s) == 0, "env of rank 1");
    is_str(get(&s, "TORCHELASTIC_RESTART_COUNT"), "2", "restart count");
    is_str(get(&s, "TORCHELASTIC_MAX_RESTARTS"), "5", "max restarts");
    is_str(get(&s, "TORCHELASTIC_RUN_ID"), "none", "run id default");
    is_str(get(&s, "ROLE_NAME"), "default", "role default");
    is_str(get(&s, "TORCHELASTIC_ERROR_FILE"),
           "/tmp/e/attempt.2.rank.1.json", "this attempt's error file");
    is_str(get(&s, "OMP_NUM_THREADS"), "8", "OMP_NUM_THREADS: the default");
    envset_free(&s);
    o.envp = envp;
    o.run_id = "job7";
    o.error_dir = NULL;
    ok(rank_env(1, &rdv, &o, &s) == 0, "env of rank 1 again");
    is_str(get(&s, "TORCHELASTIC_RUN_ID"), "job7", "run id given");
    is_str(get(&s, "OMP_NUM_THREADS"), "(unset)",
           "OMP_NUM_THREADS: the user's stays (not overridden)");
    is_str(get(&s, "TORCHELASTIC_ERROR_FILE"), "(unset)", "no error dir");
    envset_free(&s);
    envp_free(envp);
}

static void check_worker_ports(void)
{
    int ports[] = { 4001, 4002, 5001 };
    struct rdv rdv = { .addr = "10.0.0.1", .port = 29500,
                       .worker_ports = ports };
    char *none[] = { NULL };
    struct envout_opts o = { .envp = none, .tf_config = 1 };
    struct envset s = { 0 };

    ok(rank_env(0, &rdv, &o, &s) == 0, "env of rank 0");
    is_str(get(&s, "TF_CONFIG"), "{\"cluster\":{\"worker\":[\"a:4001\","
           "\"a:4002\",\"b:5001\"]},\"task\":{\"type\":\"worker\","
           "\"index\":0}}", "TF_CONFIG: the ports the agents found");
    envset_free(&s);
    b_addr_name = "10.1.0.7";
    ok(rank_env(0, &rdv, &o, &s) == 0, "env of rank 0, b an ssh alias");
    is_str(get(&s, "TF_CONFIG"), "{\"cluster\":{\"worker\":[\"a:4001\","
           "\"a:4002\",\"10.1.0.7:5001\"]},\"task\":{\"type\":\"worker\","
           "\"index\":0}}", "  TF_CONFIG: the alias's HostName, which other "
           "nodes can reach");
    b_addr_name = NULL;
    envset_free(&s);
}

/* TF_CONFIG grows with the world: only when asked (TensorFlow), and
 * never past what exec passes in one variable. */
static void check_tf_config_bound(void)
{
    struct rdv rdv = { .addr = "10.0.0.1", .port = 29500 };
    char *none[] = { NULL };
    struct envout_opts o = { .envp = none };
    struct envset s = { 0 };
    struct alloc a;
    struct plan p;
    struct plan_request req = { 0 };
    struct err err = { "" };

    ok(rank_env(0, &rdv, &o, &s) == 0, "env of rank 0 without --tf-config");
    is_str(get(&s, "TF_CONFIG"), "(unset)", "  no TF_CONFIG");
    envset_free(&s);
    memset(&a, 0, sizeof a);
    a.source = "hosts";
    a.kind = ALLOC_HOSTS;
    alloc_add_node(&a, "node-with-a-long-name-0001", 20000, 0, &err);
    req.oversubscribe = 1;
    ok(plan_build(&a, &req, &p, &err) == 0, "a plan of 20000 ranks");
    ok(envout_rank(&a, &p, 0, &rdv, &o, &s, &err) == 0,
       "  a rank's env without TF_CONFIG");
    ok(envset_get(&s, "TF_CONFIG") == NULL, "  has no TF_CONFIG");
    envset_free(&s);
    o.tf_config = 1;
    ok(envout_rank(&a, &p, 0, &rdv, &o, &s, &err) < 0,
       "  with TF_CONFIG: refused");
    ok(strstr(err.msg, "TF_CONFIG for 20000 workers would be") &&
       strstr(err.msg, "--nproc-per-node 1"), err.msg);
    envset_free(&s);
    plan_free(&p);
    alloc_free(&a);
}

int main(void)
{
    check_tasks_per_node();
    check_error_file_and_gloo();
    check_torch_names();
    check_worker_ports();
    check_tf_config_bound();
    return tap_done();
}
