/* rdv.c - deciding MASTER_ADDR and MASTER_PORT.
 *
 * Address: --master-addr; else rank 0's host: this host's address (on
 * --iface when given; loopback for a one-node job) or the resolved name of
 * a remote one.  Port: --master-port; else in per-task mode derived from
 * the job and step id (net_derived_port; rank 0 refuses one a socket on its
 * host holds), or with --pmix-rendezvous agreed
 * through the PMIx server (rank 0 binds a free port and publishes it with
 * its address); when dlrun places the ranks itself, a port free on this
 * host.  PMIx is not the default: a rank whose process used the PMIx
 * server once cannot use it again from the program dlrun execs, and
 * Open MPI 4.1's MPI_Init then fails (seen under srun --mpi=pmix and
 * mpirun alike).
 */
#include "place/rdv.h"

#include <stdio.h>
#include <string.h>

#include "util/net.h"
#include "where/pmixc.h"

/* rank 0's host when the plan knows it, else NULL */
static const char *rank0_host(const struct plan *p)
{
    return p->nodes[p->rank_node[0]].host;
}

static int rank0_is_here(const struct plan *p)
{
    if (p->per_task)
        return p->rank_node[p->self] == p->rank_node[0];
    if (p->self_node >= 0)
        return p->self_node == p->rank_node[0];
    return net_is_this_host(rank0_host(p));
}

static int local_addr(const struct plan *p, const struct rdv_opts *o,
                      struct rdv *out, struct err *err)
{
    if (o->iface) {
        snprintf(out->addr_from, sizeof out->addr_from,
                 "address of --iface %s on rank 0's host", o->iface);
        return net_iface_addr(o->iface, out->addr, sizeof out->addr, err);
    }
    if (p->nnodes == 1) {
        snprintf(out->addr, sizeof out->addr, "127.0.0.1");
        snprintf(out->addr_from, sizeof out->addr_from,
                 "loopback: every rank is on this host");
        return 0;
    }
    snprintf(out->addr_from, sizeof out->addr_from,
             "address of rank 0's host (this host)");
    return net_host_addr(rank0_host(p) ? plan_addr_name(p, p->rank_node[0])
                                       : "localhost",
                         out->addr, sizeof out->addr, err);
}

static int pick_addr(const struct plan *p, const struct rdv_opts *o,
                     struct rdv *out, struct err *err)
{
    const char *h = rank0_host(p);
    const char *name = plan_addr_name(p, p->rank_node[0]); /* an alias: HostName */

    if (o->master_addr) {
        snprintf(out->addr, sizeof out->addr, "%s", o->master_addr);
        snprintf(out->addr_from, sizeof out->addr_from, "--master-addr");
        return 0;
    }
    if (rank0_is_here(p))
        return local_addr(p, o, out, err);
    if (!h)
        return err_set(err, "cannot tell rank 0's host: mpirun names no "
                       "other hosts to its ranks; pass --master-addr with "
                       "the host of rank 0 (or launch with srun)");
    if (strcmp(name, h) != 0)
        snprintf(out->addr_from, sizeof out->addr_from, "address of rank 0's "
                 "host %.50s (HostName %.50s in ssh_config)", h, name);
    else
        snprintf(out->addr_from, sizeof out->addr_from,
                 "address of rank 0's host %.100s", h);
    return net_host_addr(name, out->addr, sizeof out->addr, err);
}

/* The task that hosts rank 0 (task 0: rank 0 is on the first node) binds a
 * free port and publishes it with its address. */
static int agree_pmix(const struct alloc *a, struct rdv *out, struct err *err)
{
    int port = 0;

    if (a->task.rank == 0 && (port = net_free_port(err)) < 0)
        return -1;
    if (pmixc_agree_master(a->task.rank, out->addr, sizeof out->addr, &port,
                           err) < 0)
        return -1;
    out->port = port;
    snprintf(out->port_from, sizeof out->port_from,
             "free port of rank 0, agreed through PMIx");
    return 0;
}

/* The port from the job and step id.  Nothing agrees it, so another job
 * on rank 0's host may have derived the same one: rank 0 of a job that
 * runs refuses a port something holds, before its program's ranks would
 * meet that job's (a TCPStore of another job hands out its ranks'
 * addresses). */
static int derive_port(const struct alloc *a, const struct plan *p,
                       const struct rdv_opts *o, struct rdv *out,
                       struct err *err)
{
    const char *job = a->jobid ? a->jobid : "-";
    const char *step = a->stepid ? a->stepid : "-";

    out->port = net_derived_port(a->jobid, a->stepid);
    snprintf(out->port_from, sizeof out->port_from,
             "derived from job %.40s step %.20s (20000-29999)", job, step);
    if (o->collective && p->per_task && p->self == 0 &&
        net_port_taken(out->port) == 1)
        return err_set(err, "MASTER_PORT %d, derived from job %.40s step "
                       "%.20s, is taken on rank 0's host (by another job?); "
                       "pass --master-port with a free port", out->port,
                       job, step);
    return 0;
}

int rdv_resolve(const struct alloc *a, const struct plan *p,
                const struct rdv_opts *o, char **envp, struct rdv *out,
                struct err *err)
{
    /* the scheduler started this process: every task computes the same */
    int tasks = p->per_task || p->self_node >= 0;
    int pmix = tasks && o->collective && o->pmix && pmixc_usable(envp);

    memset(out, 0, sizeof *out);
    if ((!pmix || o->master_addr || a->task.rank == 0) &&
        pick_addr(p, o, out, err) < 0)
        return -1;
    if (o->master_port) {
        out->port = o->master_port;
        snprintf(out->port_from, sizeof out->port_from, "--master-port");
    } else if (pmix) {
        if (a->task.rank != 0 && !o->master_addr)
            snprintf(out->addr_from, sizeof out->addr_from,
                     "rank 0's address, agreed through PMIx");
        return agree_pmix(a, out, err);
    } else if (!tasks && rank0_is_here(p)) {
        if ((out->port = net_free_port(err)) < 0)
            return -1;
        snprintf(out->port_from, sizeof out->port_from, "free port on this host");
    } else {
        return derive_port(a, p, o, out, err);
    }
    return 0;
}
