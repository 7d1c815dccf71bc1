/* horovod.c - see horovod.h. */
#include "job/horovod.h"

#include <stdio.h>
#include <string.h>

#include "place/envout.h"
#include "rendezvous/hvd_server.h"
#include "util/net.h"
#include "util/say.h"

/* Gloo's values are each rank's addresses, bytes to a few KiB a rank:
 * the budget is far above any real job and far below the machine. */
#define GLOO_STORE_BYTES (256u << 20)
#define GLOO_MAX_VALUE (16u << 20)
/* A rank makes one request at a time, each on a connection of its own
 * (Horovod's HTTPStore), done in milliseconds: a source (this host's user,
 * another node) has a few per rank, and a connection that is not done in
 * GLOO_DEADLINE_MS however it trickles is closed (16 MiB at 1 MB/s). */
#define GLOO_MAX_CONNS 1024
#define GLOO_DEADLINE_MS 20000
#define GLOO_IDLE_MS 10000

/* The server lives as long as dlrun (restarts reuse it, emptied), like
 * horovodrun's; its thread ends with the process. */
static struct hvd_server *server;
static char where[400];         /* "ADDR,PORT,IFACE" */

static void log_refusal(void *ctx, const char *line)
{
    (void)ctx;
    say("Gloo rendezvous: %s", line);
}

int horovod_check(const struct job *j)
{
    if (!j->opt.gloo)
        return 0;
    if (j->plan.per_task || j->opt.mpi == MPI_SRUN)
        return say_fail(EXIT_USAGE, "--gloo: srun or mpirun starts every "
                        "rank, so no dlrun can serve Horovod's rendezvous for "
                        "all; start one dlrun for the job (dlrun --gloo -np N "
                        "PROG) and let it start the ranks");
    if (j->plan.self_node >= 0 && j->plan.nnodes > 1)
        return say_fail(EXIT_USAGE, "--gloo: one dlrun per node cannot share "
                        "one rendezvous; start one dlrun for the job (it "
                        "starts an agent on every node)");
    return 0;
}

/* Loopback when every rank is on this host (horovodrun picks the
 * interfaces with 127.0.0.1 then), else --iface's address or the one
 * this host reaches the other nodes from. */
static int server_ip(const struct job *j, char *ip, size_t len,
                     struct err *err)
{
    const struct plan *p = &j->plan;
    const char *remote = NULL;

    for (int i = 0; i < p->nnodes && !remote; i++)
        if (p->nodes[i].host && !net_is_this_host(p->nodes[i].host))
            remote = plan_addr_name(p, i);
    if (j->opt.rdv.iface)
        return net_iface_addr(j->opt.rdv.iface, ip, len, err);
    if (!remote) {
        snprintf(ip, len, "127.0.0.1");
        return 0;
    }
    return net_route_addr(remote, ip, len, err);
}

/* The connections one source may hold at once: two per rank of the
 * largest node, and some for the ranks' retries. */
static int per_source(const struct plan *p)
{
    int most = 0;

    for (int i = 0; i < p->nnodes; i++)
        if (p->nodes[i].nranks > most)
            most = p->nodes[i].nranks;
    return most > GLOO_MAX_CONNS / 2 ? GLOO_MAX_CONNS : 2 * most + 16;
}

static int start_server(const struct job *j, int local, struct err *err)
{
    struct hvd_server_opts o = {
        .max_bytes = GLOO_STORE_BYTES, .max_body = GLOO_MAX_VALUE,
        .max_conns = GLOO_MAX_CONNS, .max_per_source = per_source(&j->plan),
        .idle_ms = GLOO_IDLE_MS, .deadline_ms = GLOO_DEADLINE_MS,
        .log = log_refusal,
    };
    char ip[200], iface[64] = "";

    if (server_ip(j, ip, sizeof ip, err) < 0)
        return -1;
    /* on several nodes each agent finds its own (interface names differ
     * between nodes); --iface is everyone's */
    if (j->opt.rdv.iface)
        snprintf(iface, sizeof iface, "%s", j->opt.rdv.iface);
    else if (local && hvd_iface_of(ip, iface, sizeof iface, err) < 0)
        return -1;
    o.ip = ip;
    server = hvd_server_start(&o, err);
    if (!server)
        return -1;
    snprintf(where, sizeof where, "%s,%d,%s", ip, hvd_server_port(server),
             iface);
    return 0;
}

int horovod_begin(struct job *j)
{
    struct err err = { "" };

    if (!j->opt.gloo || j->agent)
        return 0;
    if (!server && start_server(j, !head_wanted(j), &err) < 0)
        return say_fail(EXIT_FAIL, "--gloo: cannot serve Horovod's "
                        "rendezvous: %s", err.msg);
    if (hvd_server_begin(server, &j->plan, &err) < 0)
        return say_fail(EXIT_FAIL, "--gloo: %s", err.msg);
    j->opt.gloo_rdv = where;
    return 0;
}

void horovod_allow_peer(void *ctx, const struct sockaddr *sa)
{
    (void)ctx;
    if (server)
        hvd_server_allow(server, sa);
}

/* The interface this host reaches addr through: an agent's ranks use it
 * (the head's may be named otherwise here).  Found once. */
static int route_iface(const char *addr, char *out, size_t len,
                       struct err *err)
{
    static char found[64];
    char ip[200];

    if (!found[0] && (net_route_addr(addr, ip, sizeof ip, err) < 0 ||
                      hvd_iface_of(ip, found, sizeof found, err) < 0))
        return -1;
    snprintf(out, len, "%s", found);
    return 0;
}

int horovod_rank_env(const struct job *j, struct envset *out)
{
    struct err err = { "" };
    char addr[200] = "", iface[64] = "";
    int port = 0;
    const char *w = j->opt.gloo_rdv;

    if (!j->opt.gloo || !w)
        return 0;       /* `dlrun env`, `plan`: nothing is served */
    if (sscanf(w, "%199[^,],%d,%63s", addr, &port, iface) < 2 || port <= 0 ||
        port > 65535)
        return say_fail(EXIT_USAGE, "the head's Gloo rendezvous '%s': "
                        "expected ADDR,PORT,[IFACE]", w);
    if (!iface[0] && route_iface(addr, iface, sizeof iface, &err) < 0)
        return say_fail(EXIT_FAIL, "--gloo: %s", err.msg);
    if (envout_gloo(addr, port, iface, out, &err) < 0)
        return say_fail(EXIT_FAIL, "%s", err.msg);
    return 0;
}
