/* t_head.c - the head in this process: its real broker, real supervision
 * and a fake launcher whose "agents" are sleep and sh processes that
 * write into the head's broker what the scenario needs, on a fake clock
 * that runs 20 times faster than the real one.
 *
 * - A lost heartbeat: an agent that beat once and then stays silent is
 *   declared lost after --heartbeat-timeout (10 s of the fake clock, well
 *   under that of the real one); the head stops the others and ends the
 *   job with its line and exit 1.
 * - A failure report with a bad rank: an agent's report that names a rank
 *   outside the plan, and one of garbage bytes, are each named and
 *   ignored; the job ends with the failed agent's own line and code.
 * - A good report: the failed rank's code is the job's; with
 *   --max-restarts the agents start again. */
#include "job/head.h"
#include "job/horovod.h"
#include "job/preflight_run.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rendezvous/client.h"
#include "run/failwire.h"
#include "run/proc.h"
#include "tap.h"
#include "util/clock.h"
#include "util/say.h"

/* The lines the head said, one after the other. */
static char said[4096];

static void keep(void *ctx, const char *line)
{
    size_t at = strlen(said);

    (void)ctx;
    snprintf(said + at, sizeof said - at, "%s\n", line);
}

/* The fake clock: from the test's start, 20 times the real one. */
static long real_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static long fast_clock(void *ctx)
{
    long base = *(long *)ctx;

    return base + (real_ms() - base) * 20;
}

/* What the fake agents do, per scenario. */
enum { LOST, BAD_RANK, GOOD_REPORT };
static int scenario;
static atomic_int starts;

/* NAME's value in envp, or NULL. */
static const char *env_of(char **envp, const char *name)
{
    size_t n = strlen(name);

    for (; envp && *envp; envp++)
        if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
            return *envp + n + 1;
    return NULL;
}

/* Write into the head's broker what the scenario's agents would have. */
static int fake_reports(const struct agent_job *aj, struct err *err)
{
    struct client *c = client_connect(env_of(aj->envp, "DLRUN_BROKER"),
                                      env_of(aj->envp, "DLRUN_TOKEN"), 5000,
                                      err);
    const struct fw_failure outside = { .rank = 99, .status = 256, .pid = 7 };
    const struct fw_failure good = { .rank = 1, .status = 7 << 8, .pid = 4242 };
    int64_t seq = 0;
    int rc = c ? 0 : -1;

    if (c && scenario == LOST)      /* node 1 beats once, then no more */
        rc = client_add(c, "dlrun.hb.1", 1, NULL, err);
    if (c && scenario == BAD_RANK) {
        rc = fw_failure_put(c, &outside, "node-a", err);
        if (rc == 0 && client_add(c, "dlrun.failseq", 1, &seq, err) == 0)
            rc = client_put(c, "dlrun.fail.2", "\x01\xff garbage", 10, err);
    }
    if (c && scenario == GOOD_REPORT)
        rc = fw_failure_put(c, &good, "node-a", err);
    client_close(c);
    return rc;
}

/* One process per node: node 0's fails at once (but when its agent is to
 * be lost), the others wait to be stopped. */
static int fake_start(const struct launch_req *req, struct launched *run,
                      struct err *err)
{
    const struct agent_job *aj = req->agents;
    static char *sleep_argv[] = { "sleep", "30", NULL };
    static char *fail_argv[] = { "sh", "-c", "exit 3", NULL };
    int exec_errno = 0;

    atomic_fetch_add(&starts, 1);
    if (fake_reports(aj, err) < 0)
        return -1;
    for (int i = 0; i < aj->nnodes; i++) {
        struct proc_spec spec = { .argv = i == 0 && scenario != LOST ?
                                          fail_argv : sleep_argv,
                                  .envp = aj->envp, .mask = aj->child_mask,
                                  .out_fd = -1, .err_fd = -1 };
        struct sv_rank *p = &run->procs[run->n];
        if (proc_spawn(&spec, &p->pid, &exec_errno, err) < 0)
            return -1;
        p->rank = -1 - aj->nodes[i];
        p->running = 1;
        run->n++;
    }
    return 0;
}

static int fake_signal(struct launched *run, int sig)
{
    return launcher_signal_groups(run, sig);
}

static void fake_destroy(struct launched *run)
{
    launcher_end(run, SIGTERM, 2000);
}

static int fake_detect(const struct plan *p, const struct alloc *a)
{
    (void)p, (void)a;
    return 1;
}

static const struct launcher fake = {
    .name = "fake", .caps = LAUNCHER_AGENTS | LAUNCHER_SIGNALS,
    .needs = "nothing", .detect = fake_detect, .start = fake_start,
    .signal = fake_signal, .destroy = fake_destroy,
};

/* A job of two nodes of two ranks on hosts that are not this one; the
 * head's broker on loopback. */
static int make_job(struct job *j)
{
    struct plan_request req = { 0 };
    struct err err = { "" };

    memset(j, 0, sizeof *j);
    j->opt.rdv.iface = "lo";
    j->opt.remote.heartbeat_s = 10;
    j->opt.remote.fanout = 32;
    j->opt.remote.connect_timeout_s = 10;
    j->opt.kill_timeout_ms = 10000;
    j->opt.mpi = MPI_NONE;
    if (alloc_add_node(&j->alloc, "node-a", 2, 0, &err) < 0 ||
        alloc_add_node(&j->alloc, "node-b", 2, 0, &err) < 0 ||
        plan_build(&j->alloc, &req, &j->plan, &err) < 0)
        return -1;
    j->alloc.source = "hostfile";
    j->alloc.kind = ALLOC_HOSTFILE;
    return 0;
}

static void free_job(struct job *j)
{
    plan_free(&j->plan);
    alloc_free(&j->alloc);
}

static int run(int which, int max_restarts)
{
    static char *prog[] = { "true", NULL };
    struct job j;
    sigset_t mask;
    int rc;

    scenario = which;
    atomic_store(&starts, 0);
    said[0] = '\0';
    if (make_job(&j) < 0)
        return -1;
    j.opt.max_restarts = max_restarts;
    /* the head blocks signals for good (dlrun exits after it): unblocked
     * again, the next head's agents start as the first's did */
    sigprocmask(SIG_SETMASK, NULL, &mask);
    rc = run_head_with(&j, prog, &fake);
    sigprocmask(SIG_SETMASK, &mask, NULL);
    free_job(&j);
    return rc;
}

static void test_lost(void)
{
    long t0 = real_ms();
    int rc = run(LOST, 0);

    is_int(rc, EXIT_FAIL, "a lost heartbeat: exit 1");
    ok(strstr(said, "lost the agent on node-b: no heartbeat for 10 s "
              "(killed, or its network is down); stopped the job on 2 "
              "nodes\n") != NULL, "  the line naming the lost node");
    ok(real_ms() - t0 < 8000, "  on the fake clock, not 10 s of waiting");
    is_int(atomic_load(&starts), 1, "  started once");
}

static void test_bad_rank(void)
{
    int rc = run(BAD_RANK, 0);

    is_int(rc, 3, "reports with a bad rank: the failed agent's code");
    ok(strstr(said, "ignoring the failure report dlrun.fail.1: rank 99 is "
              "not one of the job's 4 (not written by an agent)\n") != NULL,
       "  a rank outside the plan: named, ignored");
    ok(strstr(said, "ignoring the failure report dlrun.fail.2: not \"RANK "
              "STATUS PID HOST\" (not written by an agent)\n") != NULL,
       "  garbage bytes: named, ignored");
    ok(strstr(said, "the agent on node-a ended with code 3; stopped the job "
              "on 2 nodes\n") != NULL, "  the failed agent's line");
    ok(strstr(said, "rank 99 (") == NULL, "  no rank 99 believed");
}

static void test_good_report(void)
{
    int rc = run(GOOD_REPORT, 1);

    is_int(rc, 7, "a good report: the failed rank's code");
    is_int(atomic_load(&starts), 2, "  --max-restarts 1: started again");
    ok(strstr(said, "restarting the job on 2 nodes (restart 1 of 1)\n") !=
       NULL, "  the restart's line");
    ok(strstr(said, "rank 1 (host node-a, pid 4242) exited with code 7; "
              "stopped the job on 2 nodes\n") != NULL,
       "  the failed rank's line");
}

int main(void)
{
    long base = real_ms();
    char dir[64] = "/tmp/t_head.XXXXXX", sub[80];

    /* dlrun status's files of these jobs: a folder of their own */
    if (mkdtemp(dir))
        setenv("XDG_RUNTIME_DIR", dir, 1);
    say_set_sink(keep, NULL);
    clock_fake(fast_clock, &base);
    test_lost();
    test_bad_rank();
    test_good_report();
    clock_fake(NULL, NULL);
    snprintf(sub, sizeof sub, "%s/dlrun", dir);
    rmdir(sub);
    rmdir(dir);
    return tap_done();
}
