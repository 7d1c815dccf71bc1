/* nodes.c - one dlrun per node, started by hand (cloud VMs, Kubernetes,
 * pdsh), as torchrun's static (--node-rank, --master-addr/--master-port)
 * and rendezvous (--rdzv-backend c10d --rdzv-endpoint HOST:PORT) modes:
 * where the group meets and with which token, and who serves its broker.
 * The attempts themselves are nodes_run.c's, over lib/run/nodegroup.c. */
#include "job/nodes.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/net.h"
#include "util/say.h"

/* torchrun's defaults: the static master, the c10d endpoint's port */
#define STATIC_ADDR "127.0.0.1"
#define STATIC_PORT 29500
#define C10D_PORT 29400

/* torchrun's --rdzv-conf K=V,...: join_timeout (seconds) and is_host
 * (whether this node serves) are dlrun's too; the rest has no meaning
 * here.  0 or the exit code. */
static int rdzv_conf(struct nodes *n, const char *conf)
{
    char buf[512], *save = NULL;

    n->join_timeout_s = 600;    /* torchrun's */
    n->last_call_s = 30;
    n->is_host = -1;
    if (!conf)
        return 0;
    snprintf(buf, sizeof buf, "%s", conf);
    for (char *kv = strtok_r(buf, ",", &save); kv;
         kv = strtok_r(NULL, ",", &save)) {
        char *v = strchr(kv, '=');
        if (!v)
            return say_fail(EXIT_USAGE, "--rdzv-conf '%s': expected "
                            "KEY=VALUE,...", conf);
        *v++ = '\0';
        if (strcmp(kv, "join_timeout") == 0 &&
            (n->join_timeout_s = atoi(v)) <= 0)
            return say_fail(EXIT_USAGE, "--rdzv-conf join_timeout=%s: "
                            "expected seconds above 0", v);
        if (strcmp(kv, "last_call_timeout") == 0 &&
            (n->last_call_s = atoi(v)) < 0)
            return say_fail(EXIT_USAGE, "--rdzv-conf last_call_timeout=%s: "
                            "expected seconds", v);
        if (strcmp(kv, "is_host") == 0)
            n->is_host = strcmp(v, "1") == 0 || strcasecmp(v, "true") == 0;
    }
    return 0;
}

/* HOST:PORT, or HOST and the default port. */
static int endpoint(struct nodes *n, const char *ep, int dflt,
                    const char *what)
{
    struct err err = { "" };
    char buf[300];

    if (client_parse_addr(ep, n->host, sizeof n->host, &n->port, &err) < 0) {
        snprintf(buf, sizeof buf, strchr(ep, ':') && *ep != '[' ? "[%s]:%d"
                 : "%s:%d", ep, dflt);
        if (client_parse_addr(buf, n->host, sizeof n->host, &n->port,
                              &err) < 0)
            return say_fail(EXIT_USAGE, "%s '%s': %s", what, ep, err.msg);
        ep = buf;
    }
    snprintf(n->endpoint, sizeof n->endpoint, "%s", ep);
    return 0;
}

/* Where the group meets.  0 or the exit code. */
static int where(struct nodes *n, const struct options *o)
{
    const struct torch_opts *t = &o->torch;
    const char *backend = t->rdzv_backend ? t->rdzv_backend : "static";
    char ep[300];

    if (strcmp(backend, "etcd") == 0 || strcmp(backend, "etcd-v2") == 0)
        return say_fail(EXIT_USAGE, "torchrun's --rdzv-backend %s: dlrun "
                        "serves the rendezvous itself; use --rdzv-backend "
                        "c10d --rdzv-endpoint HOST:PORT (the dlrun on HOST "
                        "serves it)", backend);
    n->rendezvous = strcmp(backend, "c10d") == 0;
    if (!n->rendezvous && strcmp(backend, "static") != 0)
        return say_fail(EXIT_USAGE, "--rdzv-backend %s: expected static or "
                        "c10d", backend);
    if (n->rendezvous && !t->rdzv_endpoint)
        return say_fail(EXIT_USAGE, "--rdzv-backend c10d needs "
                        "--rdzv-endpoint HOST:PORT, the same on every node");
    if (!n->rendezvous && t->nnodes_max > o->plan.nodes)
        return say_fail(EXIT_USAGE, "torchrun's --nnodes %d:%d (elastic) "
                        "needs --rdzv-backend c10d --rdzv-endpoint HOST:PORT "
                        "(node ranks given where the nodes meet)",
                        o->plan.nodes, t->nnodes_max);
    if (rdzv_conf(n, t->rdzv_conf) != 0)
        return EXIT_USAGE;
    if (t->rdzv_endpoint)
        return endpoint(n, t->rdzv_endpoint, n->rendezvous ? C10D_PORT :
                        STATIC_PORT, "--rdzv-endpoint");
    snprintf(ep, sizeof ep, "%s", o->rdv.master_addr ? o->rdv.master_addr :
             STATIC_ADDR);
    return endpoint(n, ep, o->rdv.master_port ? o->rdv.master_port :
                    STATIC_PORT, "--master-addr");
}

/* The token in --token-file (only its owner may read it).  0 / code. */
static int token_file(const char *path, char out[TOKEN_HEX_LEN + 1])
{
    struct err err = { "" };
    uint8_t tok[TOKEN_BYTES];
    char buf[128];
    struct stat st;
    ssize_t len;
    int fd = open(path, O_RDONLY | O_CLOEXEC), rc = EXIT_USAGE;

    if (fd < 0)
        return say_fail(EXIT_USAGE, "--token-file %s: %s", path,
                        strerror(errno));
    if (fstat(fd, &st) < 0 || (st.st_mode & 077)) {
        say_fail(EXIT_USAGE, "--token-file %s: others may read it (mode "
                 "%03o): chmod 600 %s", path, (unsigned)(st.st_mode & 0777),
                 path);
        goto out;
    }
    len = read(fd, buf, sizeof buf - 1);
    while (len > 0 && strchr(" \t\r\n", buf[len - 1]))
        len--;
    buf[len > 0 ? len : 0] = '\0';
    if (len != TOKEN_HEX_LEN || token_from_hex(buf, tok, &err) < 0) {
        say_fail(EXIT_USAGE, "--token-file %s: expected 32 hex digits, the "
                 "same on every node (openssl rand -hex 16 > FILE)", path);
        goto out;
    }
    token_to_hex(tok, out);
    rc = 0;
out:
    close(fd);
    return rc;
}

/* DLRUN_TOKEN, --token-file, else one derived from the run id and the
 * endpoint (a warning: no secret then).  0 or the exit code. */
static int group_token(struct nodes *n, const struct options *o)
{
    const char *env = getenv("DLRUN_TOKEN");
    const char *id = o->torch.run_id ? o->torch.run_id : "none";
    uint8_t tok[TOKEN_BYTES];
    struct err err = { "" };

    if (o->token_file)
        return token_file(o->token_file, n->token);
    if (env) {
        if (token_from_hex(env, tok, &err) < 0)
            return say_fail(EXIT_USAGE, "DLRUN_TOKEN: expected 32 hex digits, "
                            "the same on every node (openssl rand -hex 16)");
        token_to_hex(tok, n->token);
        return 0;
    }
    ng_derive_token(id, n->endpoint, n->token);
    say("warning: no DLRUN_TOKEN or --token-file: the group's token comes "
        "from --rdzv-id and %s, so anyone who can reach that port can join "
        "this job; export DLRUN_TOKEN (32 hex digits, the same on every "
        "node) to keep others out", n->endpoint);
    return 0;
}

/* What this node brings: ranks, its address for the others, its name. */
static int self_record(struct nodes *n, const struct options *o)
{
    struct ng_member *m = &n->conf.self;
    struct err err = { "" };
    int rc = 0;

    m->nproc = o->plan.per_node > 0 ? o->plan.per_node : 1;  /* torchrun's */
    m->max_restarts = o->max_restarts;
    alloc_this_host(m->host, sizeof m->host);
    if (o->torch.local_addr)
        rc = snprintf(m->addr, sizeof m->addr, "%s", o->torch.local_addr) <
             (int)sizeof m->addr ? 0 : err_set(&err, "too long");
    else if (o->rdv.iface)
        rc = net_iface_addr(o->rdv.iface, m->addr, sizeof m->addr, &err);
    else
        rc = net_route_addr(n->host, m->addr, sizeof m->addr, &err);
    if (rc < 0)
        return say_fail(EXIT_USAGE, "this node's address for the others "
                        "(%s): %s; pass --local-addr ADDR",
                        o->torch.local_addr ? "--local-addr" : o->rdv.iface ?
                        "--iface" : "its route to the endpoint", err.msg);
    return 0;
}

/* Static: node rank 0 serves, on the master's address if it is one of
 * this host's, else on every address (a Kubernetes service's address is
 * not the pod's).  Rendezvous: whichever dlrun binds the endpoint first.
 * 0 or the exit code. */
static int serve(struct nodes *n, const struct options *o)
{
    struct err err = { "" };
    uint8_t tok[TOKEN_BYTES];

    if (n->is_host == 0 || (!n->rendezvous && o->torch.node_rank > 0))
        return 0;
    token_from_hex(n->token, tok, &err);
    n->server = broker_thread_start(n->host, n->port, tok, &err);
    if (!n->server && !n->rendezvous)
        n->server = broker_thread_start("0.0.0.0", n->port, tok, &err);
    /* the port is taken: by another node rank 0 (its claim says so), or
     * by another program (the token does not fit: connect_both says so) */
    return 0;
}

int nodes_setup(struct nodes *n, struct job *j)
{
    const struct options *o = &j->opt;
    int rc;

    if (o->summary || o->gloo || o->mpi == MPI_PMIX || o->mpi == MPI_SRUN ||
        o->mpi == MPI_PMI1 || o->mpi == MPI_PMI2)
        return say_fail(EXIT_USAGE, "%s with one dlrun per node by hand: not "
                        "supported; drop it, or start the job from one dlrun "
                        "(-H host1,host2, or under a scheduler)",
                        o->summary ? "--summary" : o->gloo ? "--gloo" :
                        "--mpi=pmix/pmi1/pmi2/srun");
    j->opt.mpi = MPI_NONE;
    n->j = j;
    if ((rc = where(n, o)) != 0 || (rc = group_token(n, o)) != 0 ||
        (rc = self_record(n, o)) != 0)
        return rc;
    n->conf.broker = n->endpoint;
    n->conf.token_hex = n->token;
    n->conf.nnodes = o->plan.nodes;
    n->conf.node_rank = n->rendezvous ? -1 : (o->torch.node_rank > 0 ?
                                              o->torch.node_rank : 0);
    n->conf.join_timeout_ms = n->join_timeout_s * 1000;
    n->conf.max_nodes = o->torch.nnodes_max > o->plan.nodes ?
                        o->torch.nnodes_max : 0;
    n->conf.last_call_ms = n->last_call_s * 1000;
    n->conf.hb_timeout_ms = o->remote.heartbeat_s * 1000;
    return serve(n, o);
}
