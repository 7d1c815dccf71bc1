/* sched_slurm.c - Slurm: a step (srun started this process as one task)
 * or an allocation (batch script, salloc shell); sbatch, "#SBATCH"
 * directives, srun starts the agents.
 *
 * A step is told from an allocation by SLURM_STEP_ID.  Inside a step the
 * SLURM_STEP_* variables describe the tasks; in a batch script or salloc
 * shell the SLURM_JOB_* ones describe the nodes.  The counts are checked
 * against each other: a silent hang on mismatched variables is the most
 * common complaint about other launchers.
 */
#include "where/sched.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "where/hostlist.h"

/* The first of the names that is set, or NULL; *which gets its name. */
static const char *first_env(char **envp, const char *a, const char *b,
                             const char **which)
{
    const char *v = alloc_getenv(envp, a);

    *which = a;
    if (!v && b) {
        v = alloc_getenv(envp, b);
        *which = b;
    }
    return v;
}

static int dupstr(char **dst, const char *src, struct err *err)
{
    if (!src)
        return 0;
    *dst = strdup(src);
    return *dst ? 0 : err_set(err, "out of memory");
}

/* GPU ids granted on this node, from the most specific variable set. */
static int read_gpus(char **envp, struct alloc *a, struct err *err)
{
    static const char *const vars[] = {
        "SLURM_STEP_GPUS", "SLURM_JOB_GPUS", "CUDA_VISIBLE_DEVICES",
    };
    const char *n;
    char buf[64];

    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = alloc_getenv(envp, vars[i]);
        if (v && *v) {
            a->gpus_from = vars[i];
            a->gpus_pci = i < 2;    /* Slurm's own: the GRES indices */
            return dupstr(&a->gpus, v, err);
        }
    }
    n = alloc_getenv(envp, "SLURM_GPUS_ON_NODE");
    if (!n || atoi(n) <= 0 || atoi(n) > 64)
        return 0;
    a->gpus_from = "SLURM_GPUS_ON_NODE";
    snprintf(buf, sizeof buf, "0-%d", atoi(n) - 1);
    return dupstr(&a->gpus, buf, err);
}

static int check_node_count(char **envp, const char *var, size_t nnodes,
                            const char *list_var, struct err *err)
{
    int n;

    if (!alloc_getenv(envp, var))
        return 0;
    if (alloc_getint(envp, var, 1, 1 << 24, &n, err) < 0)
        return -1;
    if ((size_t)n != nnodes)
        return err_set(err, "%s=%d but %s names %zu nodes: the scheduler's "
                       "variables disagree; run dlrun from a fresh job or step",
                       var, n, list_var, nnodes);
    return 0;
}

/* --- the allocation (batch script, salloc) --- */

static int job_detect(const struct alloc_request *req, char **envp)
{
    (void)req;
    return alloc_getenv(envp, "SLURM_JOB_ID") != NULL;
}

static int job_read_cpus(char **envp, struct alloc *a, struct err *err)
{
    const char *cpn = alloc_getenv(envp, "SLURM_JOB_CPUS_PER_NODE");
    int *cpus = NULL;
    size_t n = 0;

    if (!cpn)
        return 0;
    if (tasks_per_node_parse(cpn, &cpus, &n, err) < 0)
        return err_prefix(err, "SLURM_JOB_CPUS_PER_NODE");
    for (size_t i = 0; i < n && i < a->nnodes; i++)
        a->nodes[i].cpus = cpus[i];
    free(cpus);
    return 0;
}

static int job_read(const struct alloc_request *req, char **envp,
                    struct alloc *a, struct err *err)
{
    const char *list_var, *list, *tpn;
    int ntasks = -1;

    (void)req;
    list = first_env(envp, "SLURM_JOB_NODELIST", "SLURM_NODELIST", &list_var);
    if (!list)
        return err_set(err, "SLURM_JOB_ID is set but SLURM_JOB_NODELIST is "
                       "not: not a usable Slurm allocation (use --alloc local "
                       "or -H to say where to run)");
    tpn = alloc_getenv(envp, "SLURM_TASKS_PER_NODE");
    if (alloc_getenv(envp, "SLURM_NTASKS") &&
        alloc_getint(envp, "SLURM_NTASKS", 1, 1 << 24, &ntasks, err) < 0)
        return -1;
    if (tpn) {
        if (alloc_add_hostlist(a, list, list_var, tpn, "SLURM_TASKS_PER_NODE",
                               ntasks, "SLURM_NTASKS", err) < 0)
            return -1;
    } else if (alloc_add_hostlist(a, list, list_var, NULL, NULL, -1, NULL,
                                  err) < 0) {
        return -1;
    }
    a->spread_ok = 1;
    snprintf(a->why, sizeof a->why, "SLURM_JOB_ID=%s without SLURM_STEP_ID "
             "(batch script or salloc shell)", alloc_getenv(envp, "SLURM_JOB_ID"));
    if (check_node_count(envp, "SLURM_JOB_NUM_NODES", a->nnodes, list_var,
                         err) < 0 || job_read_cpus(envp, a, err) < 0)
        return -1;
    return dupstr(&a->jobid, alloc_getenv(envp, "SLURM_JOB_ID"), err) < 0 ||
                   read_gpus(envp, a, err) < 0 ? -1 : 0;
}

static const struct alloc_source job_source = {
    .name = "slurm-job", .kind = ALLOC_JOB,
    .detect = job_detect, .read = job_read,
};

/* --- the step (srun started us, one task per rank) --- */

static int step_detect(const struct alloc_request *req, char **envp)
{
    (void)req;
    return alloc_getenv(envp, "SLURM_JOB_ID") &&
           (alloc_getenv(envp, "SLURM_STEP_ID") ||
            alloc_getenv(envp, "SLURM_STEPID"));
}

/* Which node each task is on: block unless SLURM_DISTRIBUTION says cyclic. */
static int step_map_tasks(char **envp, struct alloc *a, int ntasks,
                          struct err *err)
{
    const char *dist = alloc_getenv(envp, "SLURM_DISTRIBUTION");
    int cyclic = dist && strncmp(dist, "cyclic", 6) == 0;
    int *left = calloc(a->nnodes, sizeof *left);
    int t = 0;

    a->task_node = calloc((size_t)ntasks, sizeof *a->task_node);
    if (!left || !a->task_node) {
        free(left);
        return err_set(err, "out of memory");
    }
    for (size_t i = 0; i < a->nnodes; i++)
        left[i] = a->nodes[i].slots;
    while (t < ntasks) {
        for (size_t i = 0; i < a->nnodes && t < ntasks; i++) {
            while (left[i] > 0 && t < ntasks) {
                a->task_node[t++] = (int)i;
                left[i]--;
                if (cyclic)
                    break;
            }
        }
    }
    free(left);
    return 0;
}

/* SLURM_GTIDS lists the tasks on this node: the map must agree with it,
 * else the distribution was one we cannot recompute (arbitrary, plane). */
static int step_map_agrees(char **envp, const struct alloc *a)
{
    const char *g = alloc_getenv(envp, "SLURM_GTIDS");
    int n = 0;

    if (a->task_node[a->task.rank] != a->task.node_rank)
        return 0;
    for (; g && *g; n++) {
        char *end = NULL;
        long t = strtol(g, &end, 10);
        if (end == g || t < 0 || t >= a->task.size ||
            a->task_node[t] != a->task.node_rank)
            return 0;
        g = *end == ',' ? end + 1 : end;
    }
    return !alloc_getenv(envp, "SLURM_GTIDS") || n == a->task.local_size;
}

static int step_read_task(char **envp, struct alloc *a, int ntasks,
                          struct err *err)
{
    struct alloc_task *t = &a->task;

    t->size = ntasks;
    t->size_from = "SLURM_STEP_NUM_TASKS";
    t->rank_from = "SLURM_PROCID";
    t->local_rank_from = "SLURM_LOCALID";
    t->node_rank_from = "SLURM_NODEID";
    t->local_size_from = "SLURM_STEP_TASKS_PER_NODE";
    if (alloc_getint(envp, "SLURM_PROCID", 0, ntasks - 1, &t->rank, err) < 0 ||
        alloc_getint(envp, "SLURM_NODEID", 0, (int)a->nnodes - 1,
                     &t->node_rank, err) < 0)
        return -1;
    t->local_size = a->nodes[t->node_rank].slots;
    if (alloc_getint(envp, "SLURM_LOCALID", 0, t->local_size - 1,
                     &t->local_rank, err) < 0)
        return -1;
    a->has_task = 1;
    if (step_map_tasks(envp, a, ntasks, err) < 0)
        return -1;
    if (!step_map_agrees(envp, a)) {
        /* An arbitrary distribution: the map is not ours to guess. */
        free(a->task_node);
        a->task_node = NULL;
    }
    return 0;
}

/* An interactive step (srun --pty bash, salloc's interactive step) has one
 * task; a request for more ranks means the job's allocation. */
static int step_is_shell(const struct alloc_request *req, int ntasks)
{
    return ntasks == 1 && (req->want_ranks > 1 || req->want_nodes > 1 ||
                           req->want_per_node > 1);
}

static int step_read(const struct alloc_request *req, char **envp,
                     struct alloc *a, struct err *err)
{
    const char *list_var, *tpn_var, *ntasks_var, *list, *tpn;
    int ntasks;

    list = first_env(envp, "SLURM_STEP_NODELIST", "SLURM_NODELIST", &list_var);
    tpn = first_env(envp, "SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE",
                    &tpn_var);
    first_env(envp, "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS", &ntasks_var);
    if (!list || !tpn)
        return err_set(err, "SLURM_STEP_ID is set but %s or %s is not: not a "
                       "usable Slurm step", list_var, tpn_var);
    if (alloc_getint(envp, ntasks_var, 1, 1 << 24, &ntasks, err) < 0)
        return -1;
    if (step_is_shell(req, ntasks) && alloc_getenv(envp, "SLURM_JOB_NODELIST")) {
        a->source = job_source.name;
        a->kind = job_source.kind;
        return job_read(req, envp, a, err);
    }
    if (alloc_add_hostlist(a, list, list_var, tpn, tpn_var, ntasks, ntasks_var,
                           err) < 0 ||
        check_node_count(envp, "SLURM_STEP_NUM_NODES", a->nnodes, list_var,
                         err) < 0 ||
        step_read_task(envp, a, ntasks, err) < 0)
        return -1;
    snprintf(a->why, sizeof a->why, "SLURM_JOB_ID=%s and SLURM_STEP_ID=%s "
             "(started by srun)", alloc_getenv(envp, "SLURM_JOB_ID"),
             alloc_getenv(envp, "SLURM_STEP_ID") ?
             alloc_getenv(envp, "SLURM_STEP_ID") :
             alloc_getenv(envp, "SLURM_STEPID"));
    if (dupstr(&a->jobid, alloc_getenv(envp, "SLURM_JOB_ID"), err) < 0 ||
        dupstr(&a->stepid, alloc_getenv(envp, "SLURM_STEP_ID"), err) < 0)
        return -1;
    return read_gpus(envp, a, err);
}

static const struct alloc_source step_source = {
    .name = "slurm-step", .kind = ALLOC_STEP,
    .detect = step_detect, .read = step_read,
};

/* --- the row --- */

/* A step's tasks are told from the job's allocation first. */
static const struct alloc_source *const sources[] = {
    &step_source, &job_source, NULL,
};

static const char *const procid[] = { "SLURM_PROCID", NULL };
static const char *const localid[] = { "SLURM_LOCALID", NULL };
static const char *const nodeid[] = { "SLURM_NODEID", NULL };
static const char *const ntasks[] = {
    "SLURM_NTASKS", "SLURM_NPROCS", "SLURM_STEP_NUM_TASKS", NULL,
};
static const char *const tpn[] = {
    "SLURM_TASKS_PER_NODE", "SLURM_STEP_TASKS_PER_NODE", NULL,
};
static const struct sched_task_vars task_vars = {
    procid, localid, nodeid, ntasks, tpn,
};

static const char *const submit[] = { "sbatch", "--parsable", NULL };

/* Requeued held first: the excluded nodes can be set only on a pending
 * job, and the requeue ends this one's processes (TERM, KILL after
 * KillWait), so the release comes once the list is set. */
static const char *const job_show[] = {
    "scontrol", "show", "job", "-o", "{id}", NULL,
};
static const char *const requeueable[] = { "Requeue=1", "BatchFlag=1", NULL };
static const char *const hold[] = { "scontrol", "requeuehold", "{id}", NULL };
static const char *const set_excluded[] = {
    "scontrol", "update", "JobId={id}", "ExcNodeList={nodes}", NULL,
};
static const char *const release[] = { "scontrol", "release", "{id}", NULL };
static const char *const *const requeue_without[] = {
    hold, set_excluded, release, NULL,
};

const struct sched sched_slurm = {
    .name = "slurm", .title = "Slurm", .sources = sources,
    .probe = SCHED_PROBE_TASKS,
    .starts_tasks = 1, .job_var = "SLURM_JOB_ID",
    .node_var = "SLURMD_NODENAME", .task_vars = &task_vars,
    .cgroup_gpus = 1,
    .launcher = "srun", .exclude = "sbatch/salloc --exclude=",
    .no_kill = "--no-kill",
    .job_show = job_show, .requeueable = requeueable,
    .excluded_key = "ExcNodeList=", .excluded_none = "(null)",
    .requeue_without = requeue_without,
    .template_file = "slurm.sh.in", .directive = "#SBATCH",
    /* --parsable: "123" or "123;cluster" */
    .submit = submit, .id_end = ";\n",
    /* the warning before the time limit (--signal) */
    .requeue_signal = "USR1@90", .requeue_cmd = "scontrol requeue",
};
