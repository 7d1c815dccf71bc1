/* sched_pjm.c - Fujitsu Technical Computing Suite's job manager (PJM:
 * pjsub, "#PJM" directives), as on Fugaku and Nagoya's Flow.
 *
 * PJM_O_NODEINF names the node-information file: one host name per line
 * for each node (or virtual node) of the job, the file sites pass to
 * mpirun -machinefile.  PJM_PROC_BY_NODE (from --mpi proc= or
 * max-proc-per-node=) gives the ranks per node and PJM_MPI_PROC the total;
 * PJM_NODE and PJM_VNODES count the nodes; PJM_NODE_CORE and
 * PJM_VNODE_CORE the cores of each.  The counts are checked against the
 * file as Slurm's are against each other (tests/fixtures/pjm/README names
 * where each variable is documented).
 */
#include "where/sched.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int pjm_detect(const struct alloc_request *req, char **envp)
{
    (void)req;
    return alloc_getenv(envp, "PJM_JOBID") != NULL ||
           alloc_getenv(envp, "PJM_O_NODEINF") != NULL;
}

/* An optional whole number: 0 when unset, -1 with err when bad. */
static int opt_int(char **envp, const char *name, int *out, struct err *err)
{
    *out = 0;
    if (!alloc_getenv(envp, name))
        return 0;
    return alloc_getint(envp, name, 1, 1 << 24, out, err);
}

/* PJM_NODE counts hosts, PJM_VNODES lines of the file. */
static int check_counts(char **envp, const struct alloc *a, int lines,
                        struct err *err)
{
    int node, vnodes;

    if (opt_int(envp, "PJM_NODE", &node, err) < 0 ||
        opt_int(envp, "PJM_VNODES", &vnodes, err) < 0)
        return -1;
    if (node && (size_t)node != a->nnodes)
        return err_set(err, "PJM_NODE=%d but PJM_O_NODEINF names %zu host%s: "
                       "the job manager's variables disagree; run dlrun from "
                       "the job script itself (or pass --hostfile)", node,
                       a->nnodes, a->nnodes == 1 ? "" : "s");
    if (vnodes && vnodes != lines)
        return err_set(err, "PJM_VNODES=%d but PJM_O_NODEINF has %d line%s: "
                       "the job manager's variables disagree; run dlrun from "
                       "the job script itself (or pass --hostfile)", vnodes,
                       lines, lines == 1 ? "" : "s");
    return 0;
}

/* Ranks per node and in all from --mpi proc=/max-proc-per-node=. */
static int read_procs(char **envp, struct alloc *a, struct err *err)
{
    int per, total, cores, vcores;

    if (opt_int(envp, "PJM_PROC_BY_NODE", &per, err) < 0 ||
        opt_int(envp, "PJM_MPI_PROC", &total, err) < 0 ||
        opt_int(envp, "PJM_NODE_CORE", &cores, err) < 0 ||
        opt_int(envp, "PJM_VNODE_CORE", &vcores, err) < 0)
        return -1;
    for (size_t i = 0; i < a->nnodes; i++) {
        a->nodes[i].cpus = cores ? cores : vcores * a->nodes[i].slots;
        if (per)
            a->nodes[i].slots = per;
    }
    if (!per)       /* one slot per (virtual) node: the job asked for nodes */
        a->spread_ok = 1;
    if (total && total > alloc_slots(a))
        return err_set(err, "PJM_MPI_PROC=%d but PJM_O_NODEINF and "
                       "PJM_PROC_BY_NODE give %d slots: the job manager's "
                       "variables disagree; run dlrun from the job script "
                       "itself (or pass --hostfile)", total, alloc_slots(a));
    a->default_ranks = total;
    return 0;
}

/* No node file: a job of one node is this host; more cannot be named. */
static int this_host_only(char **envp, struct alloc *a, struct err *err)
{
    char host[256] = "localhost";
    int node;

    if (opt_int(envp, "PJM_NODE", &node, err) < 0)
        return -1;
    if (node > 1)
        return err_set(err, "PJM_NODE=%d but PJM_O_NODEINF is not set: the "
                       "hosts of the job are unknown; pass --hostfile", node);
    alloc_this_host(host, sizeof host);
    return alloc_add_node(a, host, 1, 0, err) < 0 ? -1 : 0;
}

static int pjm_read(const struct alloc_request *req, char **envp,
                    struct alloc *a, struct err *err)
{
    const char *path = alloc_getenv(envp, "PJM_O_NODEINF");
    const char *job = alloc_getenv(envp, "PJM_JOBID");
    int lines;

    (void)req;
    if (!job && !path)
        return err_set(err, "--alloc pjm: neither PJM_JOBID nor PJM_O_NODEINF "
                       "is set (not inside a pjsub job)");
    if (job && !(a->jobid = strdup(job)))
        return err_set(err, "out of memory");
    snprintf(a->why, sizeof a->why, "PJM_JOBID=%.60s, PJM_O_NODEINF=%.150s",
             job ? job : "-", path ? path : "-");
    if (!path)
        return this_host_only(envp, a, err) < 0 ? -1 : read_procs(envp, a, err);
    if (alloc_read_hostfile(path, a, err) < 0)
        return err_prefix(err, "PJM_O_NODEINF");
    lines = alloc_slots(a);
    return check_counts(envp, a, lines, err) < 0 ? -1 : read_procs(envp, a, err);
}

static const struct alloc_source source = {
    .name = "pjm", .kind = ALLOC_JOB, .detect = pjm_detect, .read = pjm_read,
};

static const struct alloc_source *const sources[] = { &source, NULL };
static const char *const submit[] = { "pjsub", NULL };

const struct sched sched_pjm = {
    .name = "pjm", .title = "PJM", .sources = sources,
    .probe = SCHED_PROBE_BATCH + 2,
    .job_var = "PJM_JOBID", .launcher = "ssh",
    .template_file = "pjm.sh.in", .directive = "#PJM",
    /* "[INFO] PJM 0000 pjsub Job 123 submitted." */
    .submit = submit, .id_after = " Job ", .id_end = " \t\n",
    .requeue_signal = "TERM@10",
    /* pjsub --restart reruns a job after a node failure only (where the
     * site allows it); no PJM command puts a running job back in its
     * queue, as scontrol requeue or qrerun do */
    .no_requeue = "no PJM command puts a running job back in its queue "
                  "(chain the runs with pjsub --step --sparam jid=JOBID "
                  "instead)",
};
