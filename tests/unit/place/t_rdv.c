/* t_rdv.c - MASTER_ADDR and MASTER_PORT for a plan, each with its reason:
 * the options win; one node is loopback with a port free here; rank 0 on
 * this host among several nodes is an address other nodes can reach (or
 * --iface's); rank 0 on a host nobody can resolve is refused; ranks the
 * scheduler started derive the port from the job and step (every task
 * computes the same), or use an exported MASTER_PORT and MASTER_ADDR,
 * which dlrun replaces with one line when it starts the ranks itself.  No
 * PMIx server is involved: where the environment names one, the tests
 * take the port out of PMIx's hands (an MPI program, --no-pmix-rendezvous)
 * and check the lines name why; rdv_wants_pmix decides when the agreement
 * is made (tests/e2e/t_pertask_port.sh makes it under mpirun).  Under
 * mpiexec.hydra's PMI_FD the agreement goes over PMI-1: rdv_wants_pmi, and
 * one made with a socketpair standing in for Hydra's proxy
 * (tests/e2e/t_pertask_pmi.sh makes it under the real one). */
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "where/alloc.h"
#include "fixture.h"
#include "where/hostfile.h"
#include "util/net.h"
#include "place/plan.h"
#include "place/rdv.h"
#include "util/say.h"
#include "fixedport.h"
#include "said.h"
#include "tap.h"

/* Plan -H hosts (all slots) and resolve with o. */
static int resolve_hosts(const char *hosts, const struct rdv_opts *o,
                         struct rdv *out, struct err *err)
{
    struct alloc a = { 0 };
    struct plan p = { 0 };
    struct plan_request req = { 0 };
    char *envp[] = { NULL };
    int rc = -1;

    if (hosts_parse(hosts, &a, err) == 0 && plan_build(&a, &req, &p, err) == 0)
        rc = rdv_resolve(&a, &p, o, envp, out, err);
    plan_free(&p);
    alloc_free(&a);
    return rc;
}

/* Rank 0 on an ssh alias that only ssh_config knows (its HostName in
 * addr_name, as lib/job/job.c sets it): the HostName's address. */
static void by_alias(void)
{
    struct alloc a = { 0 };
    struct plan p = { 0 };
    struct plan_request req = { 0 };
    struct rdv_opts o = { 0 };
    struct rdv r = { 0 };
    struct err err = { "" };
    char *envp[] = { NULL };

    if (hosts_parse("gpu-alias.invalid:1,localhost:1", &a, &err) == 0) {
        a.nodes[0].addr_name = strdup("10.9.8.7");
        if (plan_build(&a, &req, &p, &err) == 0)
            rdv_resolve(&a, &p, &o, envp, &r, &err);
    }
    ok(!err.msg[0] && strcmp(r.addr, "10.9.8.7") == 0 &&
       strstr(r.addr_from, "gpu-alias.invalid (HostName 10.9.8.7 in "
              "ssh_config)"), "rank 0 on an ssh alias: its HostName's address");
    if (err.msg[0])
        printf("# %s\n", err.msg);
    plan_free(&p);
    alloc_free(&a);
}

static void by_hosts(void)
{
    struct rdv_opts o = { 0 };
    struct rdv r;
    struct err err = { "" };

    ok(resolve_hosts("localhost:2", &o, &r, &err) == 0 &&
       !strcmp(r.addr, "127.0.0.1") && strstr(r.addr_from, "loopback"),
       "one node here: loopback");
    ok(r.port > 0 && r.port < 65536 &&
       !strcmp(r.port_from, "free port on this host"),
       "a port free here (net_free_port: tested in t_net.c)");
    ok(r.worker_ports == NULL, "no worker ports chosen");

    o.master_addr = "10.1.2.3";
    o.master_port = 29500;
    ok(resolve_hosts("localhost:2", &o, &r, &err) == 0 &&
       !strcmp(r.addr, "10.1.2.3") && r.port == 29500 &&
       !strcmp(r.addr_from, "--master-addr") &&
       !strcmp(r.port_from, "--master-port"), "--master-addr and -port win");
    ok(resolve_hosts("dlrun-no-such-host.invalid:1,localhost:1", &o, &r,
                     &err) == 0 && !strcmp(r.addr, "10.1.2.3"),
       "  also when rank 0's host cannot be resolved");

    o = (struct rdv_opts){ 0 };
    ok(resolve_hosts("dlrun-no-such-host.invalid:1,localhost:1", &o, &r,
                     &err) < 0 && strstr(err.msg, "dlrun-no-such-host.invalid")
       && strstr(err.msg, "--master-addr"),
       "rank 0 on a host nobody resolves: refused, what to pass");
    if (resolve_hosts("localhost:1,dlrun-no-such-host.invalid:1", &o, &r,
                      &err) == 0)
        ok(strncmp(r.addr, "127.", 4) != 0 && strstr(r.addr_from, "this host"),
           "rank 0 here among several nodes: not loopback");
    else
        ok(strstr(err.msg, "loopback") != NULL,
           "rank 0 here, no other address: refused, says loopback");
    o.iface = "lo";
    ok(resolve_hosts("localhost:1,dlrun-no-such-host.invalid:1", &o, &r,
                     &err) == 0 && !strcmp(r.addr, "127.0.0.1") &&
       strstr(r.addr_from, "--iface lo"), "--iface lo: its address");
    o.iface = "dlrun0";
    ok(resolve_hosts("localhost:1,dlrun-no-such-host.invalid:1", &o, &r,
                     &err) < 0 && strstr(err.msg, "dlrun0"),
       "--iface of no interface: refused");
}

/* Ranks srun started: rank 0 is on the first node, this task on the second. */
static void per_task(void)
{
    static const char *const env[] = {
        "SLURM_JOB_ID=42", "SLURM_STEP_ID=3",
        "SLURM_STEP_NODELIST=dlrun-none[1-2].invalid",
        "SLURM_STEP_NUM_NODES=2", "SLURM_STEP_NUM_TASKS=4",
        "SLURM_STEP_TASKS_PER_NODE=2(x2)", "SLURM_PROCID=2",
        "SLURM_LOCALID=0", "SLURM_NODEID=1", NULL };
    char **envp = envp_of(env);
    struct alloc a = { 0 };
    struct alloc_request areq = { 0 };
    struct plan p = { 0 };
    struct plan_request req = { 0 };
    struct rdv_opts o = { .master_addr = "10.9.8.7", .collective = 1 };
    struct rdv r;
    struct err err = { "" };

    if (!ok(alloc_detect(&areq, envp, &a, &err) == 0 &&
            plan_build(&a, &req, &p, &err) == 0 && p.per_task,
            "a Slurm step's task")) {
        printf("# %s\n", err.msg);
        goto out;
    }
    ok(rdv_resolve(&a, &p, &o, envp, &r, &err) == 0 &&
       r.port == net_derived_port("42", "3") && strstr(r.port_from, "job 42") &&
       strstr(r.port_from, "step 3"), "the port derived from job 42 step 3");
    o.master_addr = NULL;
    ok(rdv_resolve(&a, &p, &o, envp, &r, &err) < 0 &&
       strstr(err.msg, "dlrun-none1.invalid"),
       "rank 0's host resolved by name: unknown, refused, named");
out:
    plan_free(&p);
    alloc_free(&a);
    envp_free(envp);
}

/* Rank 0 of a job that runs (per task, from srun) refuses a derived port
 * that something on its host holds: another job's TCPStore there would
 * hand this job's ranks that job's addresses. */
static void per_task_taken(void)
{
    static const char *const env[] = {
        "SLURM_JOB_ID=4242", "SLURM_STEP_ID=0",
        "SLURM_STEP_NODELIST=localhost", "SLURM_STEP_NUM_NODES=1",
        "SLURM_STEP_NUM_TASKS=2", "SLURM_STEP_TASKS_PER_NODE=2",
        "SLURM_PROCID=0", "SLURM_LOCALID=0", "SLURM_NODEID=0", NULL };
    char **envp = envp_of(env);
    struct alloc a = { 0 };
    struct alloc_request areq = { 0 };
    struct plan p = { 0 };
    struct plan_request req = { 0 };
    struct rdv_opts o = { .master_addr = "127.0.0.1", .collective = 1 };
    struct rdv r;
    struct err err = { "" };
    int port = net_derived_port("4242", "0"), fd = -1, one = 1;
    struct sockaddr_in sa = { .sin_family = AF_INET,
                              .sin_port = htons((uint16_t)port) };

    if (!ok(alloc_detect(&areq, envp, &a, &err) == 0 &&
            plan_build(&a, &req, &p, &err) == 0 && p.per_task && p.self == 0,
            "rank 0 of a Slurm step")) {
        printf("# %s\n", err.msg);
        goto out;
    }
    fd = socket(AF_INET, SOCK_STREAM, 0);
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (!ok(bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 && listen(fd, 1) == 0,
            "another job listens on the derived port"))
        goto out;
    ok(rdv_resolve(&a, &p, &o, envp, &r, &err) < 0 &&
       strstr(err.msg, "is taken") && strstr(err.msg, "--master-port"),
       "the derived port taken: refused, naming --master-port");
    o.collective = 0;
    ok(rdv_resolve(&a, &p, &o, envp, &r, &err) == 0 && r.port == port,
       "  a plan that starts nothing only shows it");
    o.collective = 1;
    close(fd);
    fd = -1;
    ok(rdv_resolve(&a, &p, &o, envp, &r, &err) == 0 && r.port == port,
       "  free again: the derived port");
out:
    if (fd >= 0)
        close(fd);
    plan_free(&p);
    alloc_free(&a);
    envp_free(envp);
}

/* Rank 0 of a one-node Slurm step (localhost) with extra variables. */
static char **step_env(const char *x1, const char *x2)
{
    const char *env[] = {
        "SLURM_JOB_ID=4343", "SLURM_STEP_ID=0",
        "SLURM_STEP_NODELIST=localhost", "SLURM_STEP_NUM_NODES=1",
        "SLURM_STEP_NUM_TASKS=2", "SLURM_STEP_TASKS_PER_NODE=2",
        "SLURM_PROCID=0", "SLURM_LOCALID=0", "SLURM_NODEID=0", x1, x2, NULL };

    return envp_of(env);
}

/* rdv_resolve for the job envp describes; 0 / -1 with err. */
static int resolve_env(char **envp, const struct rdv_opts *o, struct rdv *r,
                       struct err *err)
{
    struct alloc a = { 0 };
    struct alloc_request areq = { 0 };
    struct plan p = { 0 };
    struct plan_request req = { 0 };
    int rc = -1;

    if (alloc_detect(&areq, envp, &a, err) == 0 &&
        plan_build(&a, &req, &p, err) == 0)
        rc = rdv_resolve(&a, &p, o, envp, r, err);
    plan_free(&p);
    alloc_free(&a);
    return rc;
}

/* Hold port as a TCPStore would (another job's); the fd or -1. */
static int hold(int port)
{
    struct sockaddr_in sa = { .sin_family = AF_INET,
                              .sin_port = htons((uint16_t)port) };
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (fd >= 0 && (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 ||
                    listen(fd, 1) < 0)) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* Per task, an exported MASTER_PORT and MASTER_ADDR are what the ranks get
 * (srun and mpirun pass them to every task, and a program they start reads
 * them); rank 0 refuses the port when something holds it; the options
 * win; a value that is no port is refused; a dlrun's own copy is not the
 * user's. */
static void exported_per_task(void)
{
    struct rdv_opts o = { .collective = 1 };
    struct rdv r;
    struct err err = { "" };
    char pv[40], dv[40], **envp;
    int port = 0, fd;

    if (!ok(fixed_ports(&port, 1) == 0, "a free port to export"))
        return;
    snprintf(pv, sizeof pv, "MASTER_PORT=%d", port);
    envp = step_env(pv, "MASTER_ADDR=10.1.1.1");
    ok(resolve_env(envp, &o, &r, &err) == 0 && r.port == port &&
       strstr(r.port_from, "exported MASTER_PORT") &&
       !strcmp(r.addr, "10.1.1.1") && strstr(r.addr_from, "exported MASTER_ADDR"),
       "per task: the exported MASTER_PORT and MASTER_ADDR");
    fd = hold(port);
    ok(fd >= 0 && resolve_env(envp, &o, &r, &err) < 0 &&
       strstr(err.msg, "exported in MASTER_PORT, is taken") &&
       strstr(err.msg, "--master-port"), "  held on rank 0's host: refused");
    if (fd >= 0)
        close(fd);
    o.master_port = 29501;
    o.master_addr = "10.2.2.2";
    ok(resolve_env(envp, &o, &r, &err) == 0 && r.port == 29501 &&
       !strcmp(r.addr, "10.2.2.2"), "  --master-port and --master-addr win");
    envp_free(envp);
    o = (struct rdv_opts){ .collective = 1 };
    envp = step_env("MASTER_PORT=12ab", NULL);
    ok(resolve_env(envp, &o, &r, &err) < 0 && strstr(err.msg, "MASTER_PORT='12ab'") &&
       strstr(err.msg, "not a port"), "  not a port: refused, named");
    envp_free(envp);
    snprintf(dv, sizeof dv, "DLRUN_MASTER_PORT=%d", port);
    envp = step_env(pv, dv);
    ok(resolve_env(envp, &o, &r, &err) == 0 &&
       r.port == net_derived_port("4343", "0"),
       "  a dlrun's own MASTER_PORT (DLRUN_MASTER_PORT the same): derived");
    envp_free(envp);
}

/* Per-node mode (srun --ntasks-per-node=1 dlrun --nproc-per-node 2): the
 * dlrun of rank 0's node refuses a held derived port as rank 0 does per
 * task, before it starts rank 0. */
static void per_node_taken(void)
{
    static const char *const env[] = {
        "SLURM_JOB_ID=4444", "SLURM_STEP_ID=0",
        "SLURM_STEP_NODELIST=localhost", "SLURM_STEP_NUM_NODES=1",
        "SLURM_STEP_NUM_TASKS=1", "SLURM_STEP_TASKS_PER_NODE=1",
        "SLURM_PROCID=0", "SLURM_LOCALID=0", "SLURM_NODEID=0", NULL };
    char **envp = envp_of(env);
    struct alloc a = { 0 };
    struct alloc_request areq = { 0 };
    struct plan p = { 0 };
    struct plan_request req = { .per_node = 2, .oversubscribe = 1 };
    struct rdv_opts o = { .collective = 1 };
    struct rdv r;
    struct err err = { "" };
    int fd = -1;

    if (!ok(alloc_detect(&areq, envp, &a, &err) == 0 &&
            plan_build(&a, &req, &p, &err) == 0 && !p.per_task &&
            p.self_node == 0, "per-node mode, rank 0's node")) {
        printf("# %s\n", err.msg);
        goto out;
    }
    fd = hold(net_derived_port("4444", "0"));
    ok(fd >= 0 && rdv_resolve(&a, &p, &o, envp, &r, &err) < 0 &&
       strstr(err.msg, "is taken") && strstr(err.msg, "--master-port"),
       "  the derived port held: refused");
    close(fd);
    ok(rdv_resolve(&a, &p, &o, envp, &r, &err) == 0 &&
       r.port == net_derived_port("4444", "0"), "  free: the derived port");
out:
    plan_free(&p);
    alloc_free(&a);
    envp_free(envp);
}

static const char *const mpirun_env[] = {
    "OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=2",
    "OMPI_COMM_WORLD_LOCAL_RANK=0", "OMPI_COMM_WORLD_LOCAL_SIZE=2",
    "PMIX_NAMESPACE=dlrun-test-ns", "PMIX_RANK=0", NULL };

/* Under mpirun (a PMIx server's namespace in the environment) with the
 * port left to the MPI program, the derived port and its refusal name why
 * and --pmix-rendezvous, which agrees one there; --no-pmix-rendezvous
 * names itself. */
static void pmix_named(void)
{
    char **envp = envp_of(mpirun_env);
    struct rdv_opts o = { .collective = 1, .prog_mpi = 1,
                          .prog_why = "./a.out links an MPI library" };
    struct rdv r;
    struct err err = { "" };
    int fd = -1;

#ifndef HAVE_PMIX
    ok(resolve_env(envp, &o, &r, &err) == 0 &&
       !strstr(r.port_from, "--pmix-rendezvous"),
       "no PMIx in this build: nothing names --pmix-rendezvous");
    envp_free(envp);
    return;
#endif
    if (ok(resolve_env(envp, &o, &r, &err) == 0 &&
           strstr(r.port_from, "derived from") &&
           strstr(r.port_from, "PMIx left to the MPI program (./a.out links "
                  "an MPI library; --pmix-rendezvous"),
           "mpirun, an MPI program: the derived port's reason says why and "
           "names --pmix-rendezvous"))
        fd = hold(r.port);
    ok(fd >= 0 && resolve_env(envp, &o, &r, &err) < 0 &&
       strstr(err.msg, "is taken") && strstr(err.msg, "--master-port") &&
       strstr(err.msg, "--pmix-rendezvous"), "  held: the refusal names both");
    o = (struct rdv_opts){ .collective = 1, .pmix = RDV_PMIX_OFF };
    ok(fd >= 0 && resolve_env(envp, &o, &r, &err) < 0 &&
       strstr(err.msg, "--pmix-rendezvous"),
       "  --no-pmix-rendezvous, held: the refusal names the way back");
    if (fd >= 0)
        close(fd);
    ok(resolve_env(envp, &o, &r, &err) == 0 &&
       strstr(r.port_from, "not agreed through PMIx (--no-pmix-rendezvous)"),
       "  --no-pmix-rendezvous: the reason names it");
    envp_free(envp);
}

typedef int wants_fn(const struct plan *, const struct rdv_opts *, char **);

/* rdv_wants_pmix (or fn) for the job envp describes, with o. */
static int wants_with(wants_fn *fn, char **envp, const struct rdv_opts *o)
{
    struct alloc a = { 0 };
    struct alloc_request areq = { 0 };
    struct plan p = { 0 };
    struct plan_request req = { 0 };
    struct err err = { "" };
    int rc = -1;

    if (alloc_detect(&areq, envp, &a, &err) == 0 &&
        plan_build(&a, &req, &p, &err) == 0)
        rc = fn(&p, o, envp);
    plan_free(&p);
    alloc_free(&a);
    return rc;
}

static int wants_env(char **envp, const struct rdv_opts *o)
{
    return wants_with(rdv_wants_pmix, envp, o);
}

/* When a per-task rank agrees its port through PMIx: by default unless
 * its program uses MPI; --pmix-rendezvous forces it, --no-pmix-rendezvous,
 * --master-port, an exported MASTER_PORT (auto) and a dlrun that does not
 * give the ranks their rendezvous (quiet) leave it out, and so does a
 * task without a server or a `dlrun plan`. */
static void pmix_decision(void)
{
    static const char *const bare[] = {
        "OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=2",
        "OMPI_COMM_WORLD_LOCAL_RANK=0", "OMPI_COMM_WORLD_LOCAL_SIZE=2", NULL };
    static const char *const port[] = {
        "OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=2",
        "OMPI_COMM_WORLD_LOCAL_RANK=0", "OMPI_COMM_WORLD_LOCAL_SIZE=2",
        "PMIX_NAMESPACE=dlrun-test-ns", "PMIX_RANK=0", "MASTER_PORT=23456",
        NULL };
    char **envp = envp_of(mpirun_env), **nosrv = envp_of(bare),
         **exp = envp_of(port);
    struct rdv_opts o = { .collective = 1 };
#ifdef HAVE_PMIX
    int yes = 1;
#else
    int yes = 0;    /* no server dlrun could use */
#endif

    is_int(wants_env(envp, &o), yes, "mpirun, a program not MPI: agreed");
    o.prog_mpi = 1;
    is_int(wants_env(envp, &o), 0, "  an MPI program: left to it");
    o.pmix = RDV_PMIX_ON;
    is_int(wants_env(envp, &o), yes, "  --pmix-rendezvous: agreed all the same");
    is_int(wants_env(exp, &o), yes, "  --pmix-rendezvous over an exported "
           "MASTER_PORT");
    o = (struct rdv_opts){ .collective = 1, .pmix = RDV_PMIX_OFF };
    is_int(wants_env(envp, &o), 0, "  --no-pmix-rendezvous: not");
    o = (struct rdv_opts){ .collective = 1, .master_port = 23456 };
    is_int(wants_env(envp, &o), 0, "  --master-port: not");
    o = (struct rdv_opts){ .collective = 1 };
    is_int(wants_env(exp, &o), 0, "  an exported MASTER_PORT: not");
    is_int(wants_env(nosrv, &o), 0, "  no PMIx server in the environment: not");
    o.quiet = 1;
    is_int(wants_env(envp, &o), 0, "  an agent or a --mpi=srun head: not");
    o = (struct rdv_opts){ 0 };
    is_int(wants_env(envp, &o), 0, "  dlrun plan (the job does not run): not");
    envp_free(envp);
    envp_free(nosrv);
    envp_free(exp);
}

/* Under mpiexec.hydra (PMI_FD): agreed through PMI-1 as through PMIx (an
 * MPI program: only forced); the same options and an exported MASTER_PORT
 * leave it out. */
static void pmi_decision(void)
{
    static const char *const hydra[] = {
        "PMI_RANK=1", "PMI_SIZE=2", "MPI_LOCALRANKID=1", "MPI_LOCALNRANKS=2",
        "PMI_FD=9", NULL };
    static const char *const port[] = {
        "PMI_RANK=1", "PMI_SIZE=2", "MPI_LOCALRANKID=1", "MPI_LOCALNRANKS=2",
        "PMI_FD=9", "MASTER_PORT=23456", NULL };
    static const char *const nofd[] = {
        "PMI_RANK=1", "PMI_SIZE=2", "MPI_LOCALRANKID=1", "MPI_LOCALNRANKS=2",
        NULL };
    char **envp = envp_of(hydra), **exp = envp_of(port), **none = envp_of(nofd);
    struct rdv_opts o = { .collective = 1 };

    is_int(wants_with(rdv_wants_pmi, envp, &o), 1,
           "mpiexec.hydra, a program not MPI: agreed through PMI");
    is_int(wants_env(envp, &o), 0, "  not through PMIx");
    o.prog_mpi = 1;
    is_int(wants_with(rdv_wants_pmi, envp, &o), 0, "  an MPI program: left to it");
    o.pmix = RDV_PMIX_ON;
    is_int(wants_with(rdv_wants_pmi, envp, &o), 1, "  --pmix-rendezvous: agreed");
    o.pmix = RDV_PMIX_OFF;
    is_int(wants_with(rdv_wants_pmi, envp, &o), 0, "  --no-pmix-rendezvous: not");
    o = (struct rdv_opts){ .collective = 1, .master_port = 23456 };
    is_int(wants_with(rdv_wants_pmi, envp, &o), 0, "  --master-port: not");
    o = (struct rdv_opts){ .collective = 1 };
    is_int(wants_with(rdv_wants_pmi, exp, &o), 0, "  an exported MASTER_PORT: not");
    is_int(wants_with(rdv_wants_pmi, none, &o), 0, "  no PMI_FD: not");
    o.quiet = 1;
    is_int(wants_with(rdv_wants_pmi, envp, &o), 0, "  an agent: not");
    envp_free(envp);
    envp_free(exp);
    envp_free(none);
}

/* Rank 1 under mpiexec.hydra gets rank 0's address and port through PMI
 * (the server's replies waiting on a socketpair: the node layout the
 * allocation asks for first, then the agreement) and says so. */
static void pmi_agreed(void)
{
    static const char replies[] =
        "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n"
        "cmd=my_kvsname kvsname=kvs_1\n"
        "cmd=get_result rc=0 msg=success value=(vector,(0,1,2))\n"
        "cmd=barrier_out\n"
        "cmd=get_result rc=0 msg=success value=10.1.2.3:23999\n"
        "cmd=finalize_ack\n";
    const char *vars[] = { "PMI_RANK=1", "PMI_SIZE=2", "MPI_LOCALRANKID=1",
                           "MPI_LOCALNRANKS=2", NULL, NULL };
    struct rdv_opts o = { .collective = 1 };
    struct rdv r;
    struct err err = { "" };
    char fdvar[32], **envp;
    int sv[2];

    if (!ok(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0 &&
            write(sv[1], replies, sizeof replies - 1) == sizeof replies - 1,
            "a socketpair for PMI_FD"))
        return;
    snprintf(fdvar, sizeof fdvar, "PMI_FD=%d", sv[0]);
    vars[4] = fdvar;
    envp = envp_of(vars);
    ok(resolve_env(envp, &o, &r, &err) == 0 && r.port == 23999 &&
       strcmp(r.addr, "10.1.2.3") == 0 && !r.pmix,
       "rank 1: rank 0's address and port through PMI");
    ok(strstr(r.port_from, "agreed through PMI over PMI_FD (program not MPI)") &&
       strstr(r.addr_from, "agreed through PMI"), "  the reasons say so");
    envp_free(envp);
    close(sv[0]);
    close(sv[1]);
}

/* dlrun starts the ranks: an exported MASTER_PORT/ADDR is not theirs (as
 * under torchrun), and one line says so when the job runs. */
static void exported_launch(void)
{
    static const char *const env[] = { "MASTER_PORT=20000",
                                       "MASTER_ADDR=10.3.3.3", NULL };
    char **envp = envp_of(env);
    struct alloc a = { 0 };
    struct plan p = { 0 };
    struct plan_request req = { 0 };
    struct rdv_opts o = { .collective = 1 };
    struct rdv r = { 0 };
    struct err err = { "" };
    struct said s = { 0 };

    say_set_sink(said_keep, &s);
    if (hosts_parse("localhost:2", &a, &err) == 0 &&
        plan_build(&a, &req, &p, &err) == 0)
        rdv_resolve(&a, &p, &o, envp, &r, &err);
    ok(r.port > 0 && r.port != 20000 && strcmp(r.addr, "10.3.3.3") != 0,
       "launch mode: a free port and rank 0's address");
    is_int(s.n, 1, "  one line");
    ok(strstr(s.last, "MASTER_ADDR=10.3.3.3 and MASTER_PORT=20000 in the "
              "environment are not used") &&
       strstr(s.last, "--master-addr 10.3.3.3 --master-port 20000"),
       "  naming both and the options that keep them");
    o.collective = 0;
    rdv_resolve(&a, &p, &o, envp, &r, &err);
    is_int(s.n, 1, "  dlrun plan: nothing said");
    o.collective = 1;
    o.master_port = 29502;
    o.master_addr = "10.3.3.3";
    rdv_resolve(&a, &p, &o, envp, &r, &err);
    is_int(s.n, 1, "  with both options: nothing said");
    rdv_say_unused(&o, envp, 1);
    ok(s.n == 2 && strstr(s.last, "MASTER_ADDR=10.3.3.3 and MASTER_PORT=20000 "
                          "in the environment are not used: node rank 0's"),
       "  by hand the options name the endpoint: said all the same");
    o.quiet = 1;
    rdv_say_unused(&o, envp, 1);
    is_int(s.n, 2, "  quiet (an agent, a head under --mpi=srun): nothing");
    say_set_sink(NULL, NULL);
    plan_free(&p);
    alloc_free(&a);
    envp_free(envp);
}

int main(void)
{
    by_hosts();
    by_alias();
    per_task();
    per_task_taken();
    exported_per_task();
    per_node_taken();
    pmix_named();
    pmix_decision();
    pmi_decision();
    pmi_agreed();
    exported_launch();
    return tap_done();
}
