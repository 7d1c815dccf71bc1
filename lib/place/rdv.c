/* rdv.c - deciding MASTER_ADDR and MASTER_PORT.
 *
 * Address: --master-addr; in per-task and per-node mode an exported
 * MASTER_ADDR; else rank 0's host: this host's address (on --iface when
 * given; loopback for a one-node job) or the resolved name of a remote
 * one.  Port: --master-port; else in per-task and per-node mode under a
 * PMIx server (srun --mpi=pmix, mpirun), or else a simple PMI-1 server
 * (mpiexec.hydra's PMI_FD or PMI_PORT), agreed through it (rank 0 picks a free port
 * and publishes it with its address) unless an exported
 * MASTER_PORT is there, as a program srun or mpirun started reads it;
 * else that one or the port derived from the job and step id
 * (net_derived_port); rank 0 of a per-task job refuses either when a
 * socket on its host holds it.  When dlrun places the ranks itself, a
 * port free on this host: an exported MASTER_ADDR or MASTER_PORT is not
 * used then (torchrun does not either), and one line says so.
 *
 * The agreement is left out by default where the per-task rank becomes an
 * MPI program (o->prog_mpi): Open MPI 4.1's MPI_Init fails ("getting local
 * rank failed") in a rank whose process connected to the launcher's server
 * before (mpirun's and Slurm's alike), finalized or not, even from a
 * forked child, unless the program's PMIx client reads its job data from
 * the server (PMIX_MCA_gds=hash) rather than from the shared-memory store.
 * dlrun gives the program PMIX_MCA_gds=hash after an agreement, so
 * --pmix-rendezvous works for MPI programs too (and a program that loads
 * MPI unseen does not fail); it is not their default because every rank
 * then fetches the job's data over its socket, which can slow the start
 * of a large MPI job, and an MPI program seldom reads MASTER_PORT.
 * Under a PMI-1 server (PMI_FD) the same default holds: a rank that
 * finalized PMI cannot init it again, and one that did not may under
 * Hydra (pmic.h) but an MPICH program's MPI_Init hangs so under
 * srun --mpi=pmi2; with --pmix-rendezvous the task of an MPI program
 * leaves the connection open for its MPI_Init and MPI_Finalize.
 */
#include "place/rdv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/net.h"
#include "util/say.h"
#include "where/pmic.h"
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

/* The task that hosts rank 0 (task 0: rank 0 is on the first node) picks
 * a port free on its host (net_free_port: never an ephemeral one) and
 * publishes it with its address; every task reads both back. */
static int agree_pmix(const struct alloc *a, const struct plan *p,
                      const struct rdv_opts *o, struct rdv *out,
                      struct err *err)
{
    int port = 0;

    if (a->task.rank == 0 && (port = net_free_port(err)) < 0)
        return -1;
    if (pmixc_agree_master(a->task.rank, out->addr, sizeof out->addr, &port,
                           err) < 0) {
        char why[sizeof err->msg];

        snprintf(why, sizeof why, "%s", err->msg);
        return err_set(err, "agreeing MASTER_PORT through PMIx: %.300s; "
                       "--no-pmix-rendezvous derives it instead, or pass "
                       "--master-port", why);
    }
    out->port = port;
    out->pmix = 1;
    snprintf(out->port_from, sizeof out->port_from,
             "free port of rank 0's host, agreed through PMIx (%s)",
             o->pmix == RDV_PMIX_ON ? "--pmix-rendezvous" :
             p->per_task ? "program not MPI" : "dlrun starts the ranks");
    return 0;
}

/* Under a simple PMI-1 server (mpiexec.hydra's PMI_FD or PMI_PORT, flux
 * run's or srun --mpi=pmi2's PMI_FD), as agree_pmix, on the process's one
 * connection (the one the allocation read the node layout on, if any);
 * rdv_resolve ends it. */
static int agree_pmi(const struct alloc *a, const struct plan *p,
                     const struct rdv_opts *o, char **envp, struct rdv *out,
                     struct err *err)
{
    struct pmic *c = pmic_the(envp, err);
    int port = 0;

    if (a->task.rank == 0 && (port = net_free_port(err)) < 0)
        return -1;
    if (!c || pmic_agree_master(c, a->task.rank, out->addr, sizeof out->addr,
                                &port, err) < 0) {
        char why[sizeof err->msg];

        snprintf(why, sizeof why, "%s", err->msg);
        return err_set(err, "agreeing MASTER_PORT through PMI: %.300s; "
                       "--no-pmix-rendezvous derives it instead, or pass "
                       "--master-port", why);
    }
    out->port = port;
    snprintf(out->port_from, sizeof out->port_from,
             "free port of rank 0's host, agreed through PMI over %s "
             "(%s)", c->own ? "PMI_PORT" : "PMI_FD",
             o->pmix == RDV_PMIX_ON ? "--pmix-rendezvous" :
             p->per_task ? "program not MPI" : "dlrun starts the ranks");
    return 0;
}

/* server: 0 none, 1 a PMIx server, 2 a PMI-1 server (PMI_FD) */
static const char *server_name(int server)
{
    return server == 2 ? "PMI" : "PMIx";
}

/* Rank 0 of a per-task job that runs, or the dlrun that starts rank 0 in
 * per-node mode, refuses a port something on its host holds (another
 * job's TCPStore there would hand this job's ranks that job's addresses);
 * what names where the port came from.  Before rank 0 runs: later its own
 * TCPStore holds the port. */
static int check_port(const struct plan *p, const struct rdv_opts *o,
                      int server, const struct rdv *out, const char *what,
                      struct err *err)
{
    int first = p->per_task ? p->self == 0 :
                p->self_node >= 0 && p->self_node == p->rank_node[0];

    if (o->collective && first && net_port_taken(out->port) == 1)
        return err_set(err, "MASTER_PORT %d, %s, is taken on rank 0's host "
                       "(by another job?); pass --master-port with a free "
                       "port%s%s", out->port, what, server &&
                       o->pmix != RDV_PMIX_ON ? ", or --pmix-rendezvous to "
                       "agree one through " : "", server &&
                       o->pmix != RDV_PMIX_ON ? server_name(server) : "");
    return 0;
}

/* Why a task under a PMIx or PMI server did not agree the port through it, into
 * why (len bytes): "" when no server or the job does not run. */
static void no_agreement(const struct rdv_opts *o, int server, char *why,
                         size_t len)
{
    if (!server || !o->collective || o->quiet)
        snprintf(why, len, "%s", "");
    else if (o->pmix == RDV_PMIX_OFF)
        snprintf(why, len, "; not agreed through %s (--no-pmix-rendezvous)",
                 server_name(server));
    else
        snprintf(why, len, "; %s left to the MPI program (%.50s; "
                 "--pmix-rendezvous agrees anyway)", server_name(server),
                 o->prog_why);
}

/* The port from the job and step id.  Nothing agrees it, so another job
 * on rank 0's host may have derived the same one. */
static int derive_port(const struct alloc *a, const struct plan *p,
                       const struct rdv_opts *o, int server, struct rdv *out,
                       struct err *err)
{
    const char *job = a->jobid ? a->jobid : "-";
    const char *step = a->stepid ? a->stepid : "-";
    char what[100], why[120];

    no_agreement(o, server, why, sizeof why);
    out->port = net_derived_port(a->jobid, a->stepid);
    snprintf(out->port_from, sizeof out->port_from,
             "derived from job %.40s step %.20s (20000-29999)%s", job, step,
             why);
    snprintf(what, sizeof what, "derived from job %.40s step %.20s", job,
             step);
    return check_port(p, o, server, out, what, err);
}

/* An exported MASTER_PORT (value v), used as a program srun or mpirun
 * started would use it. */
static int exported_port(const struct plan *p, const struct rdv_opts *o,
                         int server, const char *v, struct rdv *out,
                         struct err *err)
{
    char *end;
    long x = strtol(v, &end, 10);

    if (*end || x < 1 || x > 65535)
        return err_set(err, "MASTER_PORT='%.20s' in the environment is not "
                       "a port (1-65535): unset it or pass --master-port", v);
    out->port = (int)x;
    snprintf(out->port_from, sizeof out->port_from,
             "exported MASTER_PORT (the environment the tasks started with)");
    return check_port(p, o, server, out, "exported in MASTER_PORT", err);
}

/* NAME's value in envp when the user exported it: not empty, and not the
 * copy a dlrun around this one gave its rank (DLRUN_NAME the same). */
static const char *exported(char **envp, const char *name, const char *ours)
{
    const char *v = alloc_getenv(envp, name), *d = alloc_getenv(envp, ours);

    return v && *v && !(d && strcmp(d, v) == 0) ? v : NULL;
}

void rdv_say_unused(const struct rdv_opts *o, char **envp, int by_hand)
{
    /* by hand, --master-addr/--master-port name the group's endpoint */
    const char *addr = o->master_addr && !by_hand ? NULL :
                       exported(envp, "MASTER_ADDR", "DLRUN_MASTER_ADDR");
    const char *port = o->master_port && !by_hand ? NULL :
                       exported(envp, "MASTER_PORT", "DLRUN_MASTER_PORT");
    int both = addr && port;
    char vars[120], opts[120];

    if (!o->collective || o->quiet || (!addr && !port))
        return;
    snprintf(vars, sizeof vars, "%s%.50s%s%s%.20s", addr ? "MASTER_ADDR=" : "",
             addr ? addr : "", both ? " and " : "", port ? "MASTER_PORT=" : "",
             port ? port : "");
    snprintf(opts, sizeof opts, "%s%.50s%s%s%.20s", addr ? "--master-addr " :
             "", addr ? addr : "", both ? " " : "", port ? "--master-port " :
             "", port ? port : "");
    if (by_hand)
        say("%s in the environment %s not used: node rank 0's dlrun gives "
            "the ranks its address and a port free there, as torchrun's "
            "agent does", vars, both ? "are" : "is");
    else
        say("%s in the environment %s not used: dlrun starts the ranks and "
            "gives them rank 0's address and a port free there, as torchrun "
            "does; pass %s to use %s", vars, both ? "are" : "is", opts,
            both ? "them" : "it");
}

/* Per-task or per-node mode: the scheduler started every task with one
 * environment, so an exported MASTER_ADDR is the same in each. */
static int task_addr(const struct plan *p, const struct rdv_opts *o,
                     char **envp, struct rdv *out, struct err *err)
{
    const char *v = o->master_addr || o->iface ? NULL :
                    exported(envp, "MASTER_ADDR", "DLRUN_MASTER_ADDR");

    if (!v)
        return pick_addr(p, o, out, err);
    snprintf(out->addr, sizeof out->addr, "%s", v);
    snprintf(out->addr_from, sizeof out->addr_from,
             "exported MASTER_ADDR (the environment the tasks started with)");
    return 0;
}

/* The agreement's decision under a server (pmixc_server or pmic_server
 * of envp: server 1); mpi_off: an MPI program (o->prog_mpi) leaves it to
 * --pmix-rendezvous. */
static int wants_agree(const struct plan *p, const struct rdv_opts *o,
                       char **envp, int server, int mpi_off)
{
    /* the scheduler started this process: every task computes the same */
    int tasks = p->per_task || p->self_node >= 0;

    if (!tasks || !o->collective || o->master_port ||
        o->pmix == RDV_PMIX_OFF || !server)
        return 0;
    if (o->pmix == RDV_PMIX_ON)
        return 1;
    /* an agent or a --mpi=srun head: its head or srun's tasks decide */
    return !o->quiet && !(mpi_off && p->per_task && o->prog_mpi) &&
           !exported(envp, "MASTER_PORT", "DLRUN_MASTER_PORT");
}

int rdv_wants_pmix(const struct plan *p, const struct rdv_opts *o,
                   char **envp)
{
    return wants_agree(p, o, envp, pmixc_server(envp), 1);
}

int rdv_wants_pmi(const struct plan *p, const struct rdv_opts *o,
                  char **envp)
{
    /* an MPI program inits PMI-1 again only where the server allows it
     * (Hydra: yes; srun --mpi=pmi2: its MPI_Init hangs), so forced only */
    return wants_agree(p, o, envp, !pmixc_server(envp) && pmic_server(envp),
                       1);
}

static int resolve(const struct alloc *a, const struct plan *p,
                   const struct rdv_opts *o, char **envp, struct rdv *out,
                   struct err *err)
{
    int tasks = p->per_task || p->self_node >= 0;
    int pmi_fd = pmic_server(envp) && pmic_fd_open(envp);
    int pmix = rdv_wants_pmix(p, o, envp);
    int pmi = pmi_fd && rdv_wants_pmi(p, o, envp);
    int server = !tasks ? 0 : pmixc_server(envp) ? 1 : pmi_fd ? 2 : 0;
    const char *port = tasks ?
                       exported(envp, "MASTER_PORT", "DLRUN_MASTER_PORT") : NULL;

    memset(out, 0, sizeof *out);
    if ((!(pmix || pmi) || o->master_addr || a->task.rank == 0) &&
        (tasks ? task_addr(p, o, envp, out, err) : pick_addr(p, o, out, err)) < 0)
        return -1;
    if (!tasks)
        rdv_say_unused(o, envp, 0);
    if (o->master_port) {
        out->port = o->master_port;
        snprintf(out->port_from, sizeof out->port_from, "--master-port");
    } else if (pmi && p->per_task && o->prog_mpi && pmic_is_port(envp)) {
        /* Hydra's PMI_PORT: after a put and a barrier on dlrun's
         * connection the program's own connection hangs in MPI_Init */
        return err_set(err, "--pmix-rendezvous under mpiexec.hydra "
                       "-pmi-port (PMI_PORT) with an MPI program (%.60s): "
                       "its MPI_Init hangs there after dlrun's agreement; "
                       "drop --pmix-rendezvous (the port is derived) or "
                       "start without -pmi-port (PMI_FD)", o->prog_why);
    } else if (pmix || pmi) {
        if (a->task.rank != 0 && !o->master_addr)
            snprintf(out->addr_from, sizeof out->addr_from,
                     "rank 0's address, agreed through %s", pmi ? "PMI" : "PMIx");
        return pmi ? agree_pmi(a, p, o, envp, out, err) :
                     agree_pmix(a, p, o, out, err);
    } else if (!tasks && rank0_is_here(p)) {
        if ((out->port = net_free_port(err)) < 0)
            return -1;
        snprintf(out->port_from, sizeof out->port_from, "free port on this host");
    } else if (port) {
        return exported_port(p, o, server, port, out, err);
    } else {
        return derive_port(a, p, o, server, out, err);
    }
    return 0;
}

/* The process's PMI-1 connection (the allocation's layout, the agreement)
 * ends here: finalized unless this task becomes an MPI program, which
 * inits PMI again on the same PMI_FD (pmic.h); on a failure to resolve
 * dlrun exits, and finalizes first unless the server stopped answering. */
int rdv_resolve(const struct alloc *a, const struct plan *p,
                const struct rdv_opts *o, char **envp, struct rdv *out,
                struct err *err)
{
    int keep = p->per_task && o->prog_mpi && o->collective;

    if (resolve(a, p, o, envp, out, err) < 0) {
        pmic_the_abandon();
        return -1;
    }
    if (pmic_the_end(!keep, err) < 0)
        return err_prefix(err, "ending dlrun's PMI session");
    return 0;
}
