/* agent_rdv.c - the agents agree on the rendezvous before any rank starts.
 *
 * Each agent finds ports free on its host for its ranks' TF_CONFIG
 * workers (rank 0's agent one more, for MASTER_PORT unless given) and
 * publishes them (dlrun.ports.NODE).  Rank 0's agent gathers every node's
 * and publishes the whole rendezvous, dlrun.rdv = "ADDR PORT W0 W1 ...",
 * one worker port per rank; the others wait for it.  Each agent talks to
 * the broker twice, rank 0's once per node more.  Without TF_CONFIG
 * (--tf-config) there are no worker ports: rank 0's agent publishes
 * "ADDR PORT" alone, and no agent carries a list as long as the world. */
#include "job/head.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rendezvous/client.h"
#include "util/net.h"
#include "util/say.h"

/* "P0 P1 ..." of n ports (caller frees). */
static char *format_ports(const char *head, const int *v, int n)
{
    struct membuf b;
    FILE *m = membuf_open(&b);

    if (!m)
        return NULL;
    fputs(head, m);
    for (int i = 0; i < n; i++)
        fprintf(m, i || *head ? " %d" : "%d", v[i]);
    return membuf_close(&b);
}

/* n ports from text into v; the rest of the text after them in *end. */
static int parse_ports(const char *text, int *v, int n, struct err *err)
{
    char *end = (char *)text;

    for (int i = 0; i < n; i++) {
        long x = strtol(end, &end, 10);
        if (x < 1 || x > 65535)
            return err_set(err, "bad port list from the broker");
        v[i] = (int)x;
    }
    return 0;
}

/* The ranks get TF_CONFIG, whose workers need ports (unresolved: yes). */
static int tf_wanted(const struct job *j)
{
    return j->opt.tf_config != TF_NO;
}

/* This node's ports: its ranks' workers (with TF_CONFIG), then
 * MASTER_PORT if it is ours to find.  The workers' published; *master set
 * when found here. */
static int publish_mine(struct client *c, const struct job *j, int *master,
                        struct err *err)
{
    const struct plan *p = &j->plan;
    int node = p->self_node, k = tf_wanted(j) ? p->nodes[node].nranks : 0;
    int want = k + (node == p->rank_node[0] && !j->opt.rdv.master_port);
    int *ports = calloc((size_t)want + 1, sizeof *ports), rc = -1;
    char key[64], *val = NULL;

    if (!ports || (want > 0 && net_free_ports(ports, want, err) < 0))
        goto out;
    if (want > k)
        *master = ports[k];
    if (k == 0) {
        rc = 0;
        goto out;
    }
    snprintf(key, sizeof key, "dlrun.ports.%d", node);
    val = format_ports("", ports, k);
    if (val && client_put(c, key, val, strlen(val), err) == CLIENT_OK)
        rc = 0;
out:
    free(val);
    free(ports);
    return rc;
}

/* Rank 0's agent without TF_CONFIG: the master's address and port. */
static int publish_master(struct client *c, const struct job *j,
                          struct err *err)
{
    char val[300];

    snprintf(val, sizeof val, "%s %d", j->rdv.addr, j->rdv.port);
    return client_put(c, "dlrun.rdv", val, strlen(val), err) == CLIENT_OK ?
           0 : -1;
}

/* Rank 0's agent: every node's ports into j->rdv.worker_ports, then the
 * whole rendezvous for the others. */
static int gather(struct client *c, struct job *j, struct err *err)
{
    const struct plan *p = &j->plan;
    int *off = NULL, *all = NULL, rc = -1;
    char key[64], head[300], *val = NULL;

    if (!tf_wanted(j))
        return publish_master(c, j, err);
    off = calloc((size_t)p->nnodes + 1, sizeof *off);
    all = calloc((size_t)p->nranks, sizeof *all);
    for (int i = 0; off && i < p->nnodes; i++)
        off[i + 1] = off[i] + p->nodes[i].nranks;
    j->rdv.worker_ports = calloc((size_t)p->nranks, sizeof (int));
    for (int i = 0; off && all && j->rdv.worker_ports && i < p->nnodes; i++) {
        void *got = NULL;
        size_t len = 0;
        snprintf(key, sizeof key, "dlrun.ports.%d", i);
        rc = client_get(c, key, CLIENT_FOREVER, &got, &len, err) == CLIENT_OK ?
             parse_ports(got, all + off[i], p->nodes[i].nranks, err) : -1;
        free(got);
        if (rc < 0)
            goto out;
    }
    for (int r = 0; rc == 0 && r < p->nranks; r++)
        j->rdv.worker_ports[r] = all[off[p->rank_node[r]] + p->rank_local[r]];
    snprintf(head, sizeof head, "%s %d", j->rdv.addr, j->rdv.port);
    val = rc == 0 ? format_ports(head, j->rdv.worker_ports, p->nranks) : NULL;
    rc = val && client_put(c, "dlrun.rdv", val, strlen(val), err) == CLIENT_OK
         ? 0 : -1;
out:
    free(val);
    free(off);
    free(all);
    return rc;
}

static int receive(struct client *c, struct job *j, struct err *err)
{
    void *got = NULL;
    size_t len = 0;
    int used = 0, rc = -1;

    if (tf_wanted(j))
        j->rdv.worker_ports = calloc((size_t)j->plan.nranks, sizeof (int));
    if ((j->rdv.worker_ports || !tf_wanted(j)) &&
        client_get(c, "dlrun.rdv", CLIENT_FOREVER, &got, &len, err) == CLIENT_OK &&
        sscanf(got, "%255s %d%n", j->rdv.addr, &j->rdv.port, &used) == 2) {
        /* any rank could have written it: a port is 1 to 65535 */
        rc = j->rdv.port < 1 || j->rdv.port > 65535 ?
             err_set(err, "bad master port %d from the broker", j->rdv.port) :
             !j->rdv.worker_ports ? 0 :
             parse_ports((char *)got + used, j->rdv.worker_ports,
                         j->plan.nranks, err);
    }
    free(got);
    return rc;
}

int agent_agree_rdv(struct job *j)
{
    const struct plan *p = &j->plan;
    struct err err = { "" };
    struct client *c = NULL;
    int rc = -1, master = 0;

    if (!getenv("DLRUN_BROKER"))
        return 0;
    if ((c = client_from_env(10000, &err)) && publish_mine(c, j, &master, &err) == 0) {
        if (p->self_node != p->rank_node[0]) {
            rc = receive(c, j, &err);
        } else {
            j->rdv.port = master ? master : j->rdv.port;
            rc = gather(c, j, &err);
        }
    }
    client_close(c);
    if (rc < 0)
        return say_fail(EXIT_FAIL, "agent: cannot agree on the rendezvous: "
                        "%s", err.msg);
    if (!j->opt.rdv.master_port)
        snprintf(j->rdv.port_from, sizeof j->rdv.port_from,
                 "free port on rank 0's host, found by its agent");
    return 0;
}
