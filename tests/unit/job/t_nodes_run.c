/* t_nodes_run.c - one dlrun per node by hand, a group of one node in this
 * process: it serves the group's broker and the ranks', joins, plans its
 * ranks and hands them to the launch (a stand-in here), settles the
 * group's outcome: a clean end (0), a failed rank (its line and code;
 * with --max-restarts the group starts again, then ends with it), and a
 * group nobody serves (one line, exit 1). */
#include "job/nodes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixedport.h"
#include "tap.h"
#include "util/say.h"

/* The ranks' launch (lib/job/launch.c; the ranks' side is t_launch's): a
 * stand-in that records what it was asked and ends as the test says.  Its
 * failure line too, so that nothing here links launch.c, whose strong
 * run_launch would win over these weak ones. */
static int launches, fail_code;
static char broker_seen[300];
static int nodes_seen = -1, self_seen = -1;

__attribute__((weak)) int run_launch(struct job *j, char **prog)
{
    const char *b = getenv("DLRUN_BROKER");

    (void)prog;
    launches++;
    snprintf(broker_seen, sizeof broker_seen, "%s", b ? b : "");
    nodes_seen = j->plan.nnodes;
    self_seen = j->plan.self_node;
    j->last.rank = fail_code ? 0 : -1;
    j->last.status = fail_code << 8;
    j->last.pid = 4242;
    j->last.signal = 0;
    return fail_code;
}

__attribute__((weak)) void job_report_failure(int rank, const char *host,
                                              int pid, int status,
                                              const char *what_stopped)
{
    say("rank %d (host %s, pid %d) ended with status %d; %s", rank, host,
        pid, status, what_stopped);
}

static char said[4096];

static void keep(void *ctx, const char *line)
{
    size_t at = strlen(said);

    (void)ctx;
    snprintf(said + at, sizeof said - at, "%s\n", line);
}

/* run_nodes for a group of nnodes where this is node rank node_rank,
 * meeting at 127.0.0.1:port; the signals it blocks unblocked after. */
static int run(int nnodes, int node_rank, int port, int max_restarts)
{
    static char *prog[] = { "true", NULL };
    char conf[64];
    struct job j = { 0 };
    sigset_t mask;
    int rc;

    snprintf(conf, sizeof conf, "join_timeout=1");
    j.opt.plan.nodes = nnodes;
    j.opt.plan.per_node = 2;
    j.opt.torch.node_rank = node_rank;
    j.opt.torch.rdzv_conf = conf;
    j.opt.rdv.master_addr = "127.0.0.1";
    j.opt.rdv.master_port = port;
    j.opt.torch.local_addr = "127.0.0.1";
    j.opt.max_restarts = max_restarts;
    j.opt.remote.heartbeat_s = 10;
    j.opt.kill_timeout_ms = 1000;
    said[0] = '\0';
    launches = 0;
    sigprocmask(SIG_SETMASK, NULL, &mask);
    rc = run_nodes(&j, prog);
    sigprocmask(SIG_SETMASK, &mask, NULL);
    job_free(&j);
    return rc;
}

static void test_clean(int port)
{
    is_int(run(1, 0, port, 0), 0, "a group of one whose ranks end well: 0");
    is_int(launches, 1, "  one launch");
    is_int(nodes_seen, 1, "  of a plan of one node");
    is_int(self_seen, 0, "  this one");
    ok(strncmp(broker_seen, "127.0.0.1:", 10) == 0 &&
       strcmp(broker_seen + 10, "29500") != 0,
       "  the ranks' broker, node rank 0's own");
}

static void test_failed(int port)
{
    char want[256];

    fail_code = 3;
    is_int(run(1, 0, port, 1), 3, "a rank fails: its code");
    is_int(launches, 2, "  --max-restarts 1: launched again");
    ok(strstr(said, "restarting the group (restart 1 of 1)\n") != NULL,
       "  the restart's line");
    snprintf(want, sizeof want, "rank 0 (host ");
    ok(strstr(said, want) && strstr(said, "pid 4242) ended with status 768; "
                                    "stopped the job on 1 nodes\n"),
       "  the failed rank's line, every attempt");
    fail_code = 0;
}

static void test_nobody(int port)
{
    char want[256];

    is_int(run(2, 1, port, 0), EXIT_FAIL, "nobody serves the group: exit 1");
    snprintf(want, sizeof want, "cannot reach the group's rendezvous at "
             "127.0.0.1:%d: ", port);
    ok(strstr(said, want) != NULL, "  named");
    is_int(launches, 0, "  nothing launched");
}

int main(void)
{
    char dir[] = "/tmp/t_nodes_run.XXXXXX";
    int port[3];

    say_set_sink(keep, NULL);
    /* the ranks' error folders: a place of their own */
    if (mkdtemp(dir))
        setenv("TMPDIR", dir, 1);
    setenv("DLRUN_TOKEN", "00112233445566778899aabbccddeeff", 1);
    if (!ok(fixed_ports(port, 3) == 0, "three free ports"))
        return tap_done();
    test_clean(port[0]);
    test_failed(port[1]);
    test_nobody(port[2]);
    rmdir(dir);
    return tap_done();
}
