/* job.c - see job.h. */
#include "job/job.h"
#include "job/progress.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "job/horovod.h"
#include "mpi/pmix_host.h"
#include "place/envout.h"
#include "place/nodeset.h"
#include "place/topo.h"
#include "run/envwire.h"
#include "run/errfile.h"
#include "run/guard.h"
#include "run/proc.h"
#include "run/sshexec.h"
#include "util/net.h"
#include "util/safefile.h"
#include "util/say.h"
#include "util/tmpdir.h"
#include "where/hostname.h"
#include "where/mpidetect.h"
#include "where/pmic.h"
#include "where/pmixc.h"
#include "where/sched.h"

extern char **environ;

/* An allocation of several nodes dlrun starts agents on: a scheduler's
 * job, -H or --hostfile (--spares, --nnodes MIN:MAX). */
static int job_in_allocation(const struct job *j)
{
    enum alloc_kind k = j->alloc.kind;

    return k == ALLOC_JOB || k == ALLOC_HOSTS || k == ALLOC_HOSTFILE;
}

/* torchrun's multi-node lines on a host without a scheduler or host list
 * mean one launcher per node started by hand: `dlrun run` does that
 * (j->by_hand, job/nodes.c); plan and env cannot show such a group. */
static int torch_by_hand(struct job *j)
{
    const struct torch_opts *t = &j->opt.torch;
    const char *what = t->node_rank >= 0 ? "--node-rank/--master-addr" :
                       t->rdzv_endpoint || t->rdzv_backend || t->run_id ?
                       "--rdzv-endpoint/--rdzv-id" : "--nnodes N";

    int elastic = t->nnodes_max > j->opt.plan.nodes;

    /* in an allocation the node set shrinks within MIN:MAX (job_spares) */
    if (elastic && !job_in_allocation(j) &&
        (j->alloc.kind != ALLOC_LOCAL || !j->by_hand_ok))
        return say_fail(EXIT_USAGE, "torchrun's --nnodes %d:%d (elastic): "
                        "only in an allocation (a scheduler's job, -H, "
                        "--hostfile) or with one dlrun per node started by "
                        "hand (--rdzv-backend c10d --rdzv-endpoint HOST:PORT, "
                        "no scheduler, dlrun run), not %s; else give "
                        "--nnodes N", j->opt.plan.nodes, t->nnodes_max,
                        j->alloc.source);
    if (!t->used || (j->opt.plan.nodes <= 1 && !elastic) ||
        j->alloc.kind != ALLOC_LOCAL)
        return t->node_rank > 0 && j->opt.plan.nodes <= 1 ?
               say_fail(EXIT_USAGE, "torchrun's --node-rank %d with one node: "
                        "node ranks run from 0 to --nnodes - 1", t->node_rank)
               : 0;
    if (j->by_hand_ok)
        return j->by_hand = 1, 0;
    return say_fail(EXIT_USAGE, "torchrun's %s on a host without a scheduler "
                    "(one dlrun per node by hand): only dlrun run starts such "
                    "a group; dlrun plan/env cannot show it", what);
}

static int hosts_given(const struct job *j)
{
    return j->alloc.kind == ALLOC_HOSTS || j->alloc.kind == ALLOC_HOSTFILE;
}

/* Hosts given by -H or a host file that cannot be resolved: named now,
 * before any agent starts (else the broker fails with exit 1 later). */
int job_check_hosts(const struct job *j)
{
    const char *from = j->alloc.kind == ALLOC_HOSTS ? "-H" : "host file";
    struct err err = { "" };

    /* simulated nodes (t_agents.sh): the agents run here, the names are
     * only labels */
    if (!hosts_given(j) || getenv("DLRUN_RELAY_SIM_MS"))
        return 0;
    for (int i = 0; i < j->plan.nnodes; i++) {
        const struct plan_node *n = &j->plan.nodes[i];
        if (!n->host)
            continue;
        if (n->addr_name && net_resolves(n->addr_name, &err) < 0)
            return say_fail(EXIT_USAGE, "%s, the HostName of %s in the ssh "
                            "configuration (%s): fix its HostName line",
                            err.msg, n->host, from);
        if (!n->addr_name && net_resolves(n->host, &err) < 0)
            return say_fail(EXIT_USAGE, "%s (%s): fix the name, add it to "
                            "DNS or /etc/hosts, or give it a HostName in "
                            "~/.ssh/config", err.msg, from);
    }
    return 0;
}

/* -H or host file names that ~/.ssh/config (or --ssh-config) makes
 * aliases (Host gpu1 / HostName 10.1.0.7): ssh connects through the alias,
 * with its settings; addresses (MASTER_ADDR) come from its HostName.  No
 * libssh: nothing to read, ssh will fail later with its own line. */
static int job_ssh_aliases(struct job *j)
{
    struct sshexec_opts o = { .config = j->opt.remote.ssh_config };
    struct err err = { "" };
    char name[256];

    if (!hosts_given(j))
        return 0;
    for (size_t i = 0; i < j->alloc.nnodes; i++) {
        struct alloc_node *n = &j->alloc.nodes[i];
        o.host = n->name;
        if (sshexec_host_name(&o, name, sizeof name, &err) < 0)
            return 0;
        if (strcasecmp(name, n->name) == 0)     /* libssh lowercases */
            continue;
        if (hostname_check(name, &err) < 0)
            return say_fail(EXIT_USAGE, "host %s: the ssh configuration "
                            "gives it %s; fix its HostName line", n->name,
                            err.msg);
        if (!(n->addr_name = strdup(name)))
            return say_fail(EXIT_FAIL, "out of memory");
    }
    return 0;
}

/* dlrun plan --topology on this host alone: the slots are that
 * topology's CPUs and the default ranks its GPUs, as on the machine it
 * describes, not this host's. */
static int job_topology_slots(struct job *j)
{
    struct err err = { "" };
    struct topo_summary sum;
    struct topo *t;

    if (!j->opt.topology || j->alloc.kind != ALLOC_LOCAL ||
        j->alloc.nnodes != 1)
        return 0;
    if (!(t = topo_load(j->opt.topology, &err)))
        return say_fail(EXIT_USAGE, "--topology: %s", err.msg);
    topo_describe(t, &sum);
    topo_free(t);
    j->alloc.nodes[0].slots = j->alloc.nodes[0].cpus = sum.pus > 0 ? sum.pus : 1;
    j->alloc.default_ranks = sum.gpus > 0 ? sum.gpus : 1;
    snprintf(j->alloc.why, sizeof j->alloc.why, "no scheduler variables "
             "found: this host alone, %d slot%s (the CPUs of --topology); %d "
             "rank%s by default (%s)", j->alloc.nodes[0].slots,
             j->alloc.nodes[0].slots == 1 ? "" : "s", j->alloc.default_ranks,
             j->alloc.default_ranks == 1 ? "" : "s",
             sum.gpus > 0 ? "one per GPU of --topology" : "no GPU in --topology");
    return 0;
}

/* --nnodes MIN:MAX in an allocation: at most MAX nodes, the others
 * spares, the job may shrink to MIN (lib/place/nodeset.h); the plan is
 * made on every active node, its world size follows them. */
static int job_elastic(struct job *j)
{
    struct plan_request *req = &j->opt.plan;
    struct err err = { "" };

    if (req->ranks)
        return say_fail(EXIT_USAGE, "--nnodes %d:%d with -np %d: the world "
                        "size follows the nodes when the job shrinks; give "
                        "--nproc-per-node instead of -np", req->nodes,
                        j->opt.torch.nnodes_max, req->ranks);
    if (nodeset_limit(j->nodeset, req->nodes, j->opt.torch.nnodes_max,
                      &err) < 0)
        return say_fail(EXIT_USAGE, "%s", err.msg);
    req->nodes = 0;
    progress_step("--nnodes %zu:%zu: %zu node%s, shrinking to %zu at the "
                  "fewest", j->nodeset->min_nodes, j->nodeset->max_nodes,
                  j->nodeset->nactive, j->nodeset->nactive == 1 ? "" : "s",
                  j->nodeset->min_nodes);
    return 0;
}

/* --spares: the allocation's last nodes held back from the plan; and
 * --nnodes MIN:MAX in an allocation (job_elastic). */
static int job_spares(struct job *j)
{
    struct err err = { "" };
    int elastic = j->opt.torch.nnodes_max > j->opt.plan.nodes &&
                  job_in_allocation(j) && !j->by_hand;
    int rc;

    if (!j->opt.spares && !elastic)
        return 0;
    if (!job_in_allocation(j))
        return say_fail(EXIT_USAGE, "--spares %d: only for an allocation of "
                        "several nodes (a scheduler's job, -H or --hostfile), "
                        "not %s", j->opt.spares, j->alloc.source);
    if (!(j->nodeset = calloc(1, sizeof *j->nodeset)))
        return say_fail(EXIT_FAIL, "out of memory");
    if (nodeset_init(j->nodeset, &j->alloc, j->opt.spares, &err) < 0)
        return say_fail(EXIT_USAGE, "%s", err.msg);
    if (elastic && (rc = job_elastic(j)) != 0)
        return rc;
    if (!j->opt.max_restarts && j->opt.spares)
        say("warning: --spares %d without --max-restarts: a node fault ends "
            "the job (each restart on a spare counts against "
            "--max-restarts)", j->opt.spares);
    else if (!j->opt.max_restarts && j->nodeset->nactive >
             j->nodeset->min_nodes)
        say("warning: --nnodes %zu:%zu without --max-restarts: a node fault "
            "ends the job (each restart on fewer nodes counts against "
            "--max-restarts)", j->nodeset->min_nodes, j->nodeset->max_nodes);
    progress_step("spares: %zu node%s held in reserve", j->nodeset->nspare,
                  j->nodeset->nspare == 1 ? "" : "s");
    return 0;
}

/* An MPI program keeps the launcher's PMI_FD to itself unless
 * --pmix-rendezvous (place/rdv.c), and a look that runs nothing (dlrun
 * plan: not collective) leaves it to the dlrun that runs: the allocation
 * then opens no PMI session to read the node layout (PMI_PORT's is
 * dlrun's own, finalized after). */
static void job_pmi_off(struct job *j, int collective)
{
    char why[160];

    j->opt.alloc.pmi_off = !collective || (j->opt.rdv.pmix != RDV_PMIX_ON &&
        (j->opt.mpmd_first || (j->opt.progv &&
         mpidetect_argv_why(j->opt.progv, getenv("PATH"), why, sizeof why))));
}

int job_prepare(struct job *j, int collective)
{
    struct err err = { "" };
    int rc;

    /* a head's -x values, before anything reads the environment */
    if (envwire_take_exports(&j->opt.exports, &j->opt.nexports, &j->xvalues,
                             &err) < 0)
        return say_fail(EXIT_FAIL, "%s", err.msg);
    progress_enable(j->opt.verbose && !j->agent);
    progress_straggler(j->opt.straggler_factor);
    job_pmi_off(j, collective);
    if (alloc_detect(&j->opt.alloc, environ, &j->alloc, &err) < 0) {
        pmic_the_abandon();
        return say_fail(pmic_the_timed_out() ? EXIT_PMI_TIMEOUT : EXIT_USAGE,
                        "%s", err.msg);
    }
    if (!collective && job_topology_slots(j) != 0)
        return EXIT_USAGE;
    if ((rc = job_ssh_aliases(j)) != 0)
        return rc;
    progress_step("allocation found: %s (%s), %zu node%s", j->alloc.source,
                  j->alloc.why, j->alloc.nnodes, j->alloc.nnodes == 1 ? "" :
                  "s");
    if (torch_by_hand(j) != 0)
        return EXIT_USAGE;
    /* mpirun without -np fills every slot */
    if (j->opt.dialect == D_MPIRUN)
        j->alloc.default_ranks = 0;
    if ((rc = job_ppr_ranks(j)) != 0 || (rc = job_spares(j)) != 0)
        return rc;
    if (j->by_hand) {   /* run_nodes plans each attempt with the group */
        j->opt.rdv.collective = collective;
        rdv_say_unused(&j->opt.rdv, environ, 1);
        return 0;
    }
    /* -np N on this host alone is --nproc-per-node N (torchrun's and
     * horovodrun's users expect it to run): the binding warns instead */
    if (j->alloc.kind == ALLOC_LOCAL && !j->opt.plan.per_node &&
        j->opt.plan.ranks > alloc_slots(&j->alloc))
        j->opt.plan.per_node = j->opt.plan.ranks;
    if (plan_build(&j->alloc, &j->opt.plan, &j->plan, &err) < 0)
        return say_fail(EXIT_USAGE, "%s", err.msg);
    progress_step("plan: %d rank%s on %d node%s (%s)", j->plan.nranks,
                  j->plan.nranks == 1 ? "" : "s", j->plan.nnodes,
                  j->plan.nnodes == 1 ? "" : "s", j->plan.layout ?
                  j->plan.layout : "as given");
    /* one dlrun for every node given one node's rank: a copy runs on each
     * node by hand, and each would start the whole job */
    if (j->opt.torch.node_rank >= 0 && j->plan.nnodes > 1 &&
        j->plan.self_node < 0 && !j->plan.per_task && !j->agent)
        return say_fail(EXIT_USAGE, "torchrun's --node-rank with %d nodes: "
                        "this dlrun would start every node's ranks; drop "
                        "--node-rank, or run one dlrun per node with srun "
                        "--ntasks-per-node=1", j->plan.nnodes);
    return job_prepare_planned(j, collective);
}

/* One task per rank, unless --no-pmix-rendezvous: does the program this
 * task becomes use MPI?  Its MPI_Init may then fail after dlrun used the
 * PMIx server, and under PMI-1 dlrun must leave the connection open for it
 * (place/rdv.c).  Every task runs the same line, so every task
 * decides the same without a word between them. */
static void job_rdv_prog(struct job *j)
{
    struct rdv_opts *o = &j->opt.rdv;

    o->prog_mpi = 0;
    snprintf(o->prog_why, sizeof o->prog_why, "no program");
    if (!j->plan.per_task || o->pmix == RDV_PMIX_OFF)
        return;
    if (j->opt.mpmd_first) {    /* the parts may differ between tasks */
        o->prog_mpi = 1;
        snprintf(o->prog_why, sizeof o->prog_why, "an MPMD line");
    } else if (j->opt.progv) {
        o->prog_mpi = mpidetect_argv_why(j->opt.progv, getenv("PATH"),
                                         o->prog_why, sizeof o->prog_why);
    }
}

int job_prepare_planned(struct job *j, int collective)
{
    struct err err = { "" };

    /* an agent starts its node's ranks; a preflight agent starts none
     * (and may be cut off and killed before it could remove a folder) */
    if (collective && j->agent && !j->opt.preflight)
        job_errdir(j);
    job_launcher_affinity(j);
    if (job_bind(j) != 0)
        return EXIT_USAGE;
    j->opt.rdv.collective = collective;
    j->opt.rdv.quiet = j->agent || j->opt.mpi == MPI_SRUN;
    job_rdv_prog(j);
    if (rdv_resolve(&j->alloc, &j->plan, &j->opt.rdv, environ, &j->rdv,
                    &err) == 0) {
        progress_step("MASTER_PORT %d: %s", j->rdv.port, j->rdv.port_from);
        return 0;
    }
    if (collective || pmic_the_timed_out())
        return say_fail(pmic_the_timed_out() ? EXIT_PMI_TIMEOUT : EXIT_USAGE,
                        "%s", err.msg);
    /* `plan` for hosts this machine cannot resolve still shows the plan */
    snprintf(j->rdv.addr, sizeof j->rdv.addr, "(unresolved)");
    snprintf(j->rdv.addr_from, sizeof j->rdv.addr_from, "%.150s", err.msg);
    return 0;
}

/* --gpu-bind isolate: the rank sees only its GPU. */
static int job_isolate_gpu(const struct job *j, int rank, struct envset *out)
{
    struct err err = { "" };
    char buf[64];

    if (!j->bind || j->opt.bind.gpu != GPU_BIND_ISOLATE)
        return 0;
    if (bind_visible(&j->bind[rank], getenv("CUDA_VISIBLE_DEVICES"), buf,
                     sizeof buf, &err) < 0)
        return say_fail(EXIT_USAGE, "rank %d: %s", rank, err.msg);
    if (!buf[0])
        return 0;
    return envset_set(out, "CUDA_VISIBLE_DEVICES", buf, &err,
                      "--gpu-bind isolate: GPU %d (%s)", j->bind[rank].gpu,
                      j->bind[rank].gpu_busid) < 0 ?
           say_fail(EXIT_FAIL, "%s", err.msg) : 0;
}

/* OMP_NUM_THREADS by default (torchrun's is 1): the CPUs the rank is bound
 * to; unbound, this task's CPUs shared among the ranks started beside it. */
static int omp_default(const struct job *j, int rank)
{
    cpu_set_t set;
    int n, local;

    if (j->bind && CPU_COUNT(&j->bind[rank].mask))
        return CPU_COUNT(&j->bind[rank].mask);
    if (sched_getaffinity(0, sizeof set, &set) < 0 || !CPU_COUNT(&set))
        return 0;
    local = j->plan.per_task ? 1 : j->plan.nodes[j->plan.rank_node[rank]].nranks;
    n = CPU_COUNT(&set) / (local > 0 ? local : 1);
    return n > 0 ? n : 1;
}

void job_tf_resolve(struct job *j, char **prog)
{
    char why[400] = "no program";
    int tf;

    if (j->opt.tf_config != TF_AUTO)
        return;
    tf = prog && mpidetect_tf_argv_why(prog, getenv("PATH"), why, sizeof why);
    j->opt.tf_config = tf ? TF_YES : TF_NO;
    progress_step("--tf-config=auto: %s: %s", tf ? "TF_CONFIG for every rank"
                  : "no TF_CONFIG (--tf-config to set it)", why);
}

int job_rank_env(const struct job *j, int rank, struct envset *out)
{
    struct envout_opts eo = {
        .run_id = j->opt.torch.run_id,
        .role = j->opt.torch.role,
        .error_dir = j->errdir,
        .omp_threads = rank >= 0 && rank < j->plan.nranks ?
                       omp_default(j, rank) : 0,
        .iface = j->opt.rdv.iface,
        .keep_env = j->opt.keep_env,
        .exports = j->opt.exports,
        .envp = environ,
        .restart = j->restart,
        /* an agent, or one dlrun per node under mpirun in an allocation:
         * the scheduler's task variables inherited are not this rank's */
        .in_job = (j->agent || j->plan.self_node >= 0) &&
                  sched_of_env(environ) != NULL,
        .max_restarts = j->opt.max_restarts,
        .ompi_names = j->pmix != NULL,
        .tf_config = j->opt.tf_config == TF_YES,
    };
    struct err err = { "" };

    if (envout_rank(&j->alloc, &j->plan, rank, &j->rdv, &eo, out, &err) < 0)
        return say_fail(EXIT_USAGE, "%s", err.msg);
    if (horovod_rank_env(j, out) != 0)
        return EXIT_USAGE;
    if (j->pmix && pmix_host_rank_env(j->pmix, rank, out, &err) < 0)
        return say_fail(EXIT_FAIL, "%s", err.msg);
    if (job_pmi_rank_env(j, rank, out) != 0)
        return EXIT_FAIL;
    /* this process used the launcher's PMIx server as the rank: a PMIx
     * client in the program (MPI_Init) connects again, which works with
     * its job data read from the server (place/rdv.c) */
    if (j->plan.per_task && j->rdv.pmix && !getenv("PMIX_MCA_gds") &&
        envset_set(out, "PMIX_MCA_gds", "hash", &err, "dlrun agreed "
                   "MASTER_PORT through PMIx: a second PMIx client in this "
                   "process reads its job data from the server") < 0)
        return say_fail(EXIT_FAIL, "%s", err.msg);
    return job_isolate_gpu(j, rank, out);
}

void job_guard_start(const struct job *j)
{
    const char *cg = getenv("DLRUN_CGROUP");
    int use = !j->opt.no_cgroup && !(cg && strcmp(cg, "0") == 0);
    struct err err = { "" };

    /* without a guard the job runs as before; one started already (with
     * the job's folder) was said then */
    if (guard_pid() || guard_start(use, &err) < 0 || !use || guard_cgroup())
        return;
    progress_step("no cgroup for the job (%s): the guard ends what carries "
                  "its mark", guard_cgroup_why());
}

void job_errdir(struct job *j)
{
    char tmp[4096];
    char *d = NULL;

    /* best effort: without it the ranks run, only without the root cause.
     * The job's one private folder: the ranks' error files and the local
     * broker's socket; the guard removes it if dlrun is killed. */
    if (tmpdir_pick(tmp, sizeof tmp, sizeof tmp - 1, NULL) < 0 ||
        asprintf(&d, "%s/dlrun-job.XXXXXX", tmp) < 0)
        return;
    if (mkdtemp(d)) {
        j->errdir = d;
        /* the guard at once: an agent the head ends before its ranks start
         * (a SIGTERM that finds no handler yet, a SIGKILL) left it behind */
        guard_folder(d);
        job_guard_start(j);
    } else {
        free(d);
    }
}

void job_report_root_cause(const struct job *j)
{
    struct errfile best = { "", 0 }, ef;
    char path[4096];
    int best_rank = -1;

    if (!j->errdir)
        return;
    for (int r = 0; r < j->plan.nranks; r++) {
        if (j->plan.self_node >= 0 && j->plan.rank_node[r] != j->plan.self_node)
            continue;
        envout_error_file(j->errdir, j->restart, r, path, sizeof path);
        if (errfile_read(path, &ef) == 0 &&
            (best_rank < 0 || ef.timestamp < best.timestamp)) {
            best = ef;
            best_rank = r;
        }
    }
    if (best_rank >= 0)
        say("rank %d's root cause (its TORCHELASTIC_ERROR_FILE): %s",
            best_rank, best.message);
}

void job_free(struct job *j)
{
    /* the job's folder (the ranks' error files, sockets) goes with it */
    if (j->errdir)
        safefile_remove_dir(j->errdir);
    guard_stop();   /* ended cleanly: no search by mark (none if not started) */
    free(j->errdir);
    j->errdir = NULL;
    free(j->bind);
    j->bind = NULL;
    free(j->rdv.worker_ports);
    j->rdv.worker_ports = NULL;
    pmixc_finalize();
    plan_free(&j->plan);
    if (j->nodeset)     /* every node back into the allocation, to be freed */
        nodeset_free(j->nodeset);
    free(j->nodeset);
    j->nodeset = NULL;
    alloc_free(&j->alloc);
    options_free(&j->opt);
    strv_free(&j->xvalues);
}

int job_exec(char **argv, const struct envset *s, int rank)
{
    char **envp = envset_envp(s, environ);
    struct err err = { "" };
    int e;

    if (!envp)
        return say_fail(EXIT_FAIL, "out of memory");
    /* searched in the PATH the rank will have */
    proc_exec(argv, envp, NULL, &e, &err);
    envset_free_envp(envp);
    return say_fail(e == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC, "rank %d: %s",
                    rank, err.msg);
}
