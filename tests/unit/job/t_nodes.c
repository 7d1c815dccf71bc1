/* t_nodes.c - the setup of one dlrun per node by hand: what it refuses
 * (each with its line and exit 2), where the group meets (torchrun's
 * defaults, an endpoint), which token (DLRUN_TOKEN, --token-file and its
 * mode, a derived one with the warning), this node's record, and a node
 * that serves the group's broker. */
#include "job/nodes.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rendezvous/client.h"
#include "fixedport.h"
#include "tap.h"
#include "util/say.h"

static char said[1024];
static int nsaid;

static void keep(void *ctx, const char *line)
{
    (void)ctx;
    nsaid++;
    snprintf(said, sizeof said, "%s", line);
}

/* Options as dlrun run leaves them by default, for a group of 2 nodes
 * where this one is node rank 1 (it serves nothing). */
static void defaults(struct job *j)
{
    memset(j, 0, sizeof *j);
    j->opt.plan.nodes = 2;
    j->opt.plan.per_node = 4;
    j->opt.torch.node_rank = 1;
    j->opt.max_restarts = 3;
    j->opt.remote.heartbeat_s = 10;
    j->opt.torch.local_addr = "10.0.0.9";
}

/* nodes_setup's code and what it said last; the server stopped. */
static int setup(struct job *j, struct nodes *n)
{
    int rc;

    memset(n, 0, sizeof *n);
    said[0] = '\0';
    nsaid = 0;
    rc = nodes_setup(n, j);
    broker_thread_stop(n->server);
    n->server = NULL;
    return rc;
}

static void refused(struct job *j, const char *want, const char *what)
{
    struct nodes n;

    is_int(setup(j, &n), EXIT_USAGE, what);
    is_str(said, want, "  its line");
}

static void test_refusals(void)
{
    struct job j;

    defaults(&j);
    j.opt.summary = "s.json";
    refused(&j, "--summary with one dlrun per node by hand: not supported; "
            "drop it, or start the job from one dlrun (-H host1,host2, or "
            "under a scheduler)", "--summary refused");
    defaults(&j);
    j.opt.torch.rdzv_backend = "etcd";
    refused(&j, "torchrun's --rdzv-backend etcd: dlrun serves the rendezvous "
            "itself; use --rdzv-backend c10d --rdzv-endpoint HOST:PORT (the "
            "dlrun on HOST serves it)", "etcd refused");
    defaults(&j);
    j.opt.torch.rdzv_backend = "zk";
    refused(&j, "--rdzv-backend zk: expected static or c10d",
            "an unknown backend");
    defaults(&j);
    j.opt.torch.rdzv_backend = "c10d";
    refused(&j, "--rdzv-backend c10d needs --rdzv-endpoint HOST:PORT, the "
            "same on every node", "c10d without an endpoint");
    defaults(&j);
    j.opt.torch.nnodes_max = 4;
    refused(&j, "torchrun's --nnodes 2:4 (elastic) needs --rdzv-backend c10d "
            "--rdzv-endpoint HOST:PORT (node ranks given where the nodes "
            "meet)", "elastic without c10d");
    defaults(&j);
    j.opt.torch.rdzv_conf = "join_timeout";
    refused(&j, "--rdzv-conf 'join_timeout': expected KEY=VALUE,...",
            "--rdzv-conf without =");
    defaults(&j);
    j.opt.torch.rdzv_conf = "is_host=0,join_timeout=0";
    refused(&j, "--rdzv-conf join_timeout=0: expected seconds above 0",
            "join_timeout 0");
    defaults(&j);
    j.opt.rdv.master_addr = "[::1";
    refused(&j, "--master-addr '[::1': broker address '[::1:29500' is not "
            "HOST:PORT, [IPV6]:PORT or unix:PATH", "a bad master address");
}

static void test_static(void)
{
    struct job j;
    struct nodes n;
    char want[TOKEN_HEX_LEN + 1];

    defaults(&j);
    unsetenv("DLRUN_TOKEN");
    j.opt.mpi = MPI_AUTO;
    is_int(setup(&j, &n), 0, "static, node rank 1: set up");
    is_str(n.endpoint, "127.0.0.1:29500", "torchrun's static default");
    is_int(j.opt.mpi, MPI_NONE, "no MPI hosted by hand");
    ng_derive_token("none", "127.0.0.1:29500", want);
    is_str(n.token, want, "no secret: the token from the run id and endpoint");
    ok(strstr(said, "warning: no DLRUN_TOKEN or --token-file: the group's "
              "token comes from --rdzv-id and 127.0.0.1:29500") == said,
       "  with the warning");
    is_int(n.conf.node_rank, 1, "the node rank given");
    is_int(n.conf.nnodes, 2, "the group's size");
    is_int(n.conf.self.nproc, 4, "this node's ranks");
    is_int(n.conf.self.max_restarts, 3, "its --max-restarts");
    is_str(n.conf.self.addr, "10.0.0.9", "--local-addr");
    is_int(n.conf.join_timeout_ms, 600000, "torchrun's join timeout");
    is_int(n.conf.hb_timeout_ms, 10000, "--heartbeat-timeout");
    ok(n.server == NULL, "node rank 1 serves nothing");
}

static void test_c10d(void)
{
    struct job j;
    struct nodes n;

    defaults(&j);
    setenv("DLRUN_TOKEN", "00112233445566778899aabbccddeeff", 1);
    j.opt.torch.rdzv_backend = "c10d";
    j.opt.torch.rdzv_endpoint = "head-node";
    j.opt.torch.rdzv_conf = "is_host=0,last_call_timeout=5,join_timeout=7";
    j.opt.torch.nnodes_max = 4;
    is_int(setup(&j, &n), 0, "c10d, elastic: set up");
    is_str(n.endpoint, "head-node:29400", "the c10d default port");
    is_str(n.token, "00112233445566778899aabbccddeeff", "DLRUN_TOKEN");
    is_int(nsaid, 0, "  and no warning");
    is_int(n.conf.node_rank, -1, "node ranks on arrival");
    is_int(n.conf.max_nodes, 4, "up to 4 nodes");
    is_int(n.conf.last_call_ms, 5000, "last_call_timeout");
    is_int(n.conf.join_timeout_ms, 7000, "join_timeout");
    setenv("DLRUN_TOKEN", "nothex", 1);
    refused(&j, "DLRUN_TOKEN: expected 32 hex digits, the same on every node "
            "(openssl rand -hex 16)", "a bad DLRUN_TOKEN");
    unsetenv("DLRUN_TOKEN");
}

/* A token file with text and mode; its path into path. */
static void token_file(char *path, size_t len, const char *text, int mode)
{
    int fd;

    snprintf(path, len, "%s/t_nodes.XXXXXX", getenv("TMPDIR") ?
             getenv("TMPDIR") : "/tmp");
    fd = mkstemp(path);
    if (fd < 0)
        return;
    if (write(fd, text, strlen(text)) < 0)
        path[0] = '\0';
    fchmod(fd, (mode_t)mode);
    close(fd);
}

static void test_token_file(void)
{
    struct job j;
    struct nodes n;
    char path[256], want[1024];

    defaults(&j);
    token_file(path, sizeof path, "ffeeddccbbaa99887766554433221100\n", 0600);
    j.opt.token_file = path;
    is_int(setup(&j, &n), 0, "--token-file, mode 600");
    is_str(n.token, "ffeeddccbbaa99887766554433221100", "its token");
    chmod(path, 0644);
    snprintf(want, sizeof want, "--token-file %s: others may read it (mode "
             "644): chmod 600 %s", path, path);
    refused(&j, want, "a token file others may read");
    unlink(path);
    token_file(path, sizeof path, "short\n", 0600);
    snprintf(want, sizeof want, "--token-file %s: expected 32 hex digits, the "
             "same on every node (openssl rand -hex 16 > FILE)", path);
    refused(&j, want, "a token file without a token");
    unlink(path);
    snprintf(want, sizeof want, "--token-file %s: No such file or directory",
             path);
    refused(&j, want, "no token file");
}

/* Node rank 0 serves the group's broker where the master address is. */
static void test_serves(void)
{
    struct job j;
    struct nodes n = { 0 };
    struct err err = { "" };
    struct client *c;
    int port[1];

    if (fixed_ports(port, 1) < 0)
        return;
    defaults(&j);
    setenv("DLRUN_TOKEN", "00112233445566778899aabbccddeeff", 1);
    j.opt.torch.node_rank = 0;
    j.opt.rdv.master_addr = "127.0.0.1";
    j.opt.rdv.master_port = port[0];
    is_int(nodes_setup(&n, &j), 0, "node rank 0: set up");
    ok(n.server != NULL, "it serves the group's broker");
    c = client_connect(n.endpoint, n.token, 5000, &err);
    ok(c != NULL, "which takes the group's token");
    client_close(c);
    broker_thread_stop(n.server);
    unsetenv("DLRUN_TOKEN");
}

int main(void)
{
    say_set_sink(keep, NULL);
    unsetenv("DLRUN_TOKEN");
    test_refusals();
    test_static();
    test_c10d();
    test_token_file();
    test_serves();
    return tap_done();
}
