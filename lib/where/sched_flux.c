/* sched_flux.c - Flux (flux-core, as on LLNL's El Capitan): a task that
 * `flux run` started (per-task mode, as in a Slurm step), or the script of
 * `flux batch` and the shell of `flux alloc` (the allocation); "#flux:"
 * directives, submitted with flux batch.
 *
 * Flux's job shell sets FLUX_JOB_ID, FLUX_JOB_SIZE (tasks),
 * FLUX_JOB_NNODES, FLUX_TASK_RANK and FLUX_TASK_LOCAL_ID in every task it
 * starts (flux-environment(7), JOB ENVIRONMENT).  A batch script is not
 * such a task: it is the initial program of a new Flux instance that the
 * batch job runs, and the instance's broker unsets all of those (and
 * PMI_*, SLURM_*) for it, so that the enclosing instance's job does not
 * leak in (flux-environment(7), INITIAL PROGRAM ENVIRONMENT).  What it
 * keeps is FLUX_URI, naming its own instance, whose resources are the
 * job's: so a script is told by FLUX_URI without FLUX_JOB_ID, and asks
 * its instance (`flux getattr jobid`, `flux getattr hostlist`).  A task
 * asks for its job's nodes and which tasks each runs (`flux job hostlist
 * ID`, `flux job taskmap --to=raw ID`: "0-3;4-7", one idset per node),
 * and the answers are checked against the variables as Slurm's are
 * against each other.  The `flux` run is the one on the PATH of the
 * environment read (tests put a stand-in there).
 */
#include "where/sched.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/findprog.h"
#include "where/pmic.h"
#include "where/ranges.h"

/* A flux query answers at once; one that hangs must not hang dlrun. */
#define FLUX_QUERY_MS 10000

/* Read the child's output into buf until EOF or the deadline: 0, or -1
 * when the time ran out. */
static int read_until(int fd, char *buf, size_t len, long long deadline)
{
    size_t n = 0;
    char drop[256];

    for (;;) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        long long left = deadline - clock_ms();
        ssize_t r;

        if (left <= 0)
            return -1;
        if (poll(&p, 1, (int)left) < 0 && errno != EINTR)
            return -1;
        if (n + 1 < len)
            r = read(fd, buf + n, len - 1 - n);
        else
            r = read(fd, drop, sizeof drop);
        if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN))
            break;
        if (r > 0 && n + 1 < len)
            n += (size_t)r;
    }
    buf[n] = '\0';
    return 0;
}

static pid_t spawn_flux(const char *path, char *const *argv, char **envp,
                        int out_fd)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    sigset_t none, all;
    pid_t pid = -1;

    sigemptyset(&none);
    sigfillset(&all);
    if (posix_spawn_file_actions_init(&fa) != 0)
        return -1;
    if (posix_spawnattr_init(&at) == 0) {
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
        posix_spawn_file_actions_adddup2(&fa, out_fd, 2);
        posix_spawnattr_setsigmask(&at, &none);
        posix_spawnattr_setsigdefault(&at, &all);
        posix_spawnattr_setpgroup(&at, 0);
        posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK |
                                 POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
        if (posix_spawn(&pid, path, &fa, &at, argv, envp) != 0)
            pid = -1;
        posix_spawnattr_destroy(&at);
    }
    posix_spawn_file_actions_destroy(&fa);
    return pid;
}

/* "flux a b c" for messages. */
static const char *cmd_text(char *const *argv)
{
    static char t[200];
    size_t n = 0;

    t[0] = '\0';
    for (size_t i = 0; argv[i] && n < sizeof t; i++)
        n += (size_t)snprintf(t + n, sizeof t - n, "%s%s", i ? " " : "",
                              argv[i]);
    return t;
}

/* Run `flux ARGS` (argv[0] "flux", found in envp's PATH, with envp) and
 * keep the first line it prints in buf (len bytes).  0, or -1 with err
 * naming the command and what it said. */
static int flux_query(char **envp, char *const *argv, char *buf, size_t len,
                      struct err *err)
{
    char path[4096];
    int fds[2], status = 0, late;
    pid_t pid;

    if (find_program("flux", alloc_getenv(envp, "PATH"), path,
                     sizeof path) < 0)
        return err_set(err, "'%s': flux is not on PATH", cmd_text(argv));
    if (pipe2(fds, O_CLOEXEC) < 0)
        return err_set(err, "'%s': pipe: %s", cmd_text(argv), strerror(errno));
    pid = spawn_flux(path, argv, envp, fds[1]);
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        return err_set(err, "cannot run '%s'", cmd_text(argv));
    }
    late = read_until(fds[0], buf, len, clock_ms() + FLUX_QUERY_MS);
    close(fds[0]);
    if (late)
        kill(-pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    buf[strcspn(buf, "\n")] = '\0';
    if (late)
        return err_set(err, "'%s' did not answer in %d s", cmd_text(argv),
                       FLUX_QUERY_MS / 1000);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return err_set(err, "'%s' failed: %s", cmd_text(argv),
                       *buf ? buf : "(no message)");
    return 0;
}

static int dupstr(char **dst, const char *src, struct err *err)
{
    *dst = strdup(src);
    return *dst ? 0 : err_set(err, "out of memory");
}

/* --- the task (flux run started this process) --- */

static int task_detect(const struct alloc_request *req, char **envp)
{
    (void)req;
    return alloc_getenv(envp, "FLUX_JOB_ID") != NULL;
}

/* The job's nodes from `flux job hostlist ID`, one slot each, checked
 * against FLUX_JOB_NNODES (nnodes). */
static int task_hosts(char **envp, const char *id, int nnodes,
                      struct alloc *a, struct err *err)
{
    char *argv[] = { "flux", "job", "hostlist", (char *)id, NULL };
    char list[8192];

    if (flux_query(envp, argv, list, sizeof list, err) < 0)
        return err_prefix(err, "FLUX_JOB_NNODES=%d: the job's nodes are "
                          "unknown (pass -H)", nnodes);
    if (alloc_add_hostlist(a, list, "flux job hostlist", NULL, NULL, -1, NULL,
                           err) < 0)
        return -1;
    if ((size_t)nnodes != a->nnodes)
        return err_set(err, "FLUX_JOB_NNODES=%d but 'flux job hostlist %s' "
                       "names %zu nodes: Flux's variables disagree; run dlrun "
                       "from a fresh flux run", nnodes, id, a->nnodes);
    return 0;
}

/* Node i's idset of "0-3;4-7" into task_node and its slots; the tasks
 * counted into *total. */
static int map_node(struct alloc *a, size_t i, const char *set, int size,
                    int *total, struct err *err)
{
    int *ids = NULL, n = ranges_parse(set, size, &ids, err);

    if (n < 0)
        return err_prefix(err, "'flux job taskmap --to=raw', node %zu", i);
    for (int k = 0; k < n; k++) {
        int t = ids[k], was = a->task_node[t];

        if (was >= 0) {
            free(ids);
            return err_set(err, "'flux job taskmap --to=raw' places task %d "
                           "on nodes %d and %zu: not a task map; run dlrun "
                           "from a fresh flux run", t, was, i);
        }
        a->task_node[t] = (int)i;
    }
    a->nodes[i].slots = n;
    *total += n;
    free(ids);
    return 0;
}

/* Which node runs each task, from the raw taskmap; it must place
 * FLUX_JOB_SIZE tasks on the hostlist's nodes. */
static int task_map(char **envp, const char *id, int size, struct alloc *a,
                    struct err *err)
{
    char *argv[] = { "flux", "job", "taskmap", "--to=raw", (char *)id, NULL };
    char map[8192], *save = NULL, *set;
    size_t i = 0;
    int total = 0;

    if (flux_query(envp, argv, map, sizeof map, err) < 0)
        return -1;
    if (!(a->task_node = calloc((size_t)size, sizeof *a->task_node)))
        return err_set(err, "out of memory");
    for (int t = 0; t < size; t++)
        a->task_node[t] = -1;
    for (set = strtok_r(map, ";", &save); set; set = strtok_r(NULL, ";", &save))
        if (i < a->nnodes && map_node(a, i, set, size, &total, err) < 0)
            return -1;
        else
            i++;
    if (i != a->nnodes || total != size)
        return err_set(err, "'flux job taskmap %s' places %d tasks on %zu "
                       "nodes but FLUX_JOB_SIZE=%d, FLUX_JOB_NNODES=%zu: "
                       "Flux's variables disagree; run dlrun from a fresh "
                       "flux run", id, total, i, size, a->nnodes);
    return 0;
}

/* One node: this host runs every task; no flux query needed. */
static int task_one_node(int size, struct alloc *a, struct err *err)
{
    char host[256];

    alloc_this_host(host, sizeof host);
    if (alloc_add_node(a, host, size, 0, err) < 0)
        return -1;
    if (!(a->task_node = calloc((size_t)size, sizeof *a->task_node)))
        return err_set(err, "out of memory");
    return 0;
}

/* FLUX_TASK_LOCAL_ID must be the task's place among its node's tasks
 * (in the map from, for the message). */
static int task_local(char **envp, const char *from, struct alloc *a,
                      struct err *err)
{
    struct alloc_task *t = &a->task;
    int local = 0;

    t->node_rank = a->task_node[t->rank];
    t->local_size = a->nodes[t->node_rank].slots;
    for (int r = 0; r < t->rank; r++)
        local += a->task_node[r] == t->node_rank;
    if (alloc_getint(envp, "FLUX_TASK_LOCAL_ID", 0, t->local_size - 1,
                     &t->local_rank, err) < 0)
        return -1;
    if (t->local_rank != local)
        return err_set(err, "FLUX_TASK_LOCAL_ID=%d but %s makes task %d "
                       "the %d%s on its node: Flux's variables disagree; run "
                       "dlrun from a fresh flux run", t->local_rank, from,
                       t->rank, local + 1,
                       local == 0 ? "st" : local == 1 ? "nd" :
                       local == 2 ? "rd" : "th");
    a->has_task = 1;
    return 0;
}

static int job_read(const struct alloc_request *req, char **envp,
                    struct alloc *a, struct err *err);
static const struct alloc_source job_source;

/* A job of one task (flux run -n1 dlrun -np 8) asked for more ranks:
 * the job's nodes, as Slurm's interactive step means its allocation. */
static int task_is_shell(const struct alloc_request *req, int size)
{
    return size == 1 && (req->want_ranks > 1 || req->want_nodes > 1 ||
                         req->want_per_node > 1);
}

static void task_names(struct alloc *a, const char *map)
{
    a->task.size_from = "FLUX_JOB_SIZE";
    a->task.rank_from = "FLUX_TASK_RANK";
    a->task.local_rank_from = "FLUX_TASK_LOCAL_ID";
    a->task.node_rank_from = map;
    a->task.local_size_from = map;
}

/* The job shell's PMI server (PMI_FD, unless the program keeps it: an MPI
 * program) says each task's node (PMI_process_mapping), checked against
 * Flux's variables: 1 when read, 0 when there is no server or no
 * mapping, -1 with err. */
static int task_pmi(const struct alloc_request *req, char **envp, int size,
                    int nnodes, int rank, struct alloc *a, struct err *err)
{
    struct alloc_task *t = &a->task;
    int n = 0, got;

    if (req->pmi_off || !pmic_server(envp) || !pmic_fd_open(envp))
        return 0;
    if ((got = alloc_pmi_layout(envp, a, &n, err)) <= 0)
        return got;
    if (t->rank != rank || t->size != size || n != nnodes)
        return err_set(err, "FLUX_TASK_RANK=%d, FLUX_JOB_SIZE=%d and "
                       "FLUX_JOB_NNODES=%d but the job shell's PMI says "
                       "rank %d of %d on %d node%s: they disagree; run dlrun "
                       "from a fresh flux run", rank, size, nnodes, t->rank,
                       t->size, n, n == 1 ? "" : "s");
    return 1;
}

/* Several nodes: their names from flux job hostlist, each task's node
 * from the PMI mapping (a->pmi_node) or flux job taskmap. */
static int task_nodes(char **envp, const char *id, int size, int nnodes,
                      struct alloc *a, struct err *err)
{
    if (task_hosts(envp, id, nnodes, a, err) < 0)
        return -1;
    if (!a->pmi_node)
        return task_map(envp, id, size, a, err);
    if (!(a->task_node = calloc((size_t)size, sizeof *a->task_node)))
        return err_set(err, "out of memory");
    memcpy(a->task_node, a->pmi_node, (size_t)size * sizeof *a->task_node);
    for (size_t i = 0; i < a->nnodes; i++)
        a->nodes[i].slots = 0;
    for (int r = 0; r < size; r++)
        a->nodes[a->task_node[r]].slots++;
    return 0;
}

static int task_read(const struct alloc_request *req, char **envp,
                     struct alloc *a, struct err *err)
{
    const char *id = alloc_getenv(envp, "FLUX_JOB_ID");
    int size, nnodes, rank, pmi;

    if (!id || !alloc_getenv(envp, "FLUX_TASK_RANK"))
        return err_set(err, "FLUX_JOB_ID is set but FLUX_TASK_RANK is not: "
                       "not a task of a Flux job (use --alloc local or -H "
                       "to say where to run)");
    if (alloc_getint(envp, "FLUX_JOB_SIZE", 1, 1 << 24, &size, err) < 0 ||
        alloc_getint(envp, "FLUX_JOB_NNODES", 1, size, &nnodes, err) < 0 ||
        alloc_getint(envp, "FLUX_TASK_RANK", 0, size - 1, &rank, err) < 0)
        return -1;
    if (task_is_shell(req, size)) {
        a->source = job_source.name;
        a->kind = job_source.kind;
        return job_read(req, envp, a, err);
    }
    if ((pmi = task_pmi(req, envp, size, nnodes, rank, a, err)) < 0)
        return -1;
    a->task.rank = rank;
    a->task.size = size;
    task_names(a, pmi ? "PMI_process_mapping" : "flux job taskmap");
    if (nnodes == 1 ? task_one_node(size, a, err) < 0 :
        task_nodes(envp, id, size, nnodes, a, err) < 0)
        return -1;
    if (task_local(envp, pmi ? "the job shell's PMI_process_mapping" :
                   "'flux job taskmap'", a, err) < 0)
        return -1;
    snprintf(a->why, sizeof a->why, "FLUX_JOB_ID=%.60s and FLUX_TASK_RANK=%d "
             "(started by flux run)%s", id, a->task.rank, pmi ? "; each "
             "task's node from its PMI_process_mapping" : "");
    return dupstr(&a->jobid, id, err);
}

static const struct alloc_source task_source = {
    .name = "flux-task", .kind = ALLOC_STEP,
    .detect = task_detect, .read = task_read,
};

/* --- the allocation (flux batch script, flux alloc shell) --- */

/* FLUX_URI without a job's task variables, and no other launcher's task
 * (an mpiexec in the script sets PMI_RANK; Flux unsets PMI_* for the
 * script itself). */
static int job_detect(const struct alloc_request *req, char **envp)
{
    (void)req;
    return alloc_getenv(envp, "FLUX_URI") &&
           !alloc_getenv(envp, "FLUX_JOB_ID") &&
           !alloc_getenv(envp, "PMI_RANK") && !alloc_getenv(envp, "PMIX_RANK");
}

static int job_read(const struct alloc_request *req, char **envp,
                    struct alloc *a, struct err *err)
{
    char *idq[] = { "flux", "getattr", "jobid", NULL };
    char *hostq[] = { "flux", "getattr", "hostlist", NULL };
    char id[128], list[8192];

    (void)req;
    if (flux_query(envp, idq, id, sizeof id, err) < 0)
        return err_prefix(err, "FLUX_URI is set but names no Flux job's "
                          "instance (dlrun runs in a flux batch script or a "
                          "flux alloc shell; use --alloc local or -H)");
    if (flux_query(envp, hostq, list, sizeof list, err) < 0 ||
        alloc_add_hostlist(a, list, "flux getattr hostlist", NULL, NULL, -1,
                           NULL, err) < 0)
        return -1;
    a->spread_ok = 1;
    snprintf(a->why, sizeof a->why, "FLUX_URI without FLUX_JOB_ID (flux "
             "batch script or flux alloc shell of job %.60s)", id);
    return dupstr(&a->jobid, id, err);
}

static const struct alloc_source job_source = {
    .name = "flux-job", .kind = ALLOC_JOB,
    .detect = job_detect, .read = job_read,
};

/* --- the row --- */

/* A task is told from an instance's script first. */
static const struct alloc_source *const sources[] = {
    &task_source, &job_source, NULL,
};

static const char *const rank[] = { "FLUX_TASK_RANK", NULL };
static const char *const local[] = { "FLUX_TASK_LOCAL_ID", NULL };
static const char *const size[] = { "FLUX_JOB_SIZE", NULL };
static const struct sched_task_vars task_vars = {
    rank, local, NULL, size, NULL,
};

static const char *const submit[] = { "flux", "batch", NULL };

const struct sched sched_flux = {
    .name = "flux", .title = "Flux", .sources = sources,
    .probe = SCHED_PROBE_TASKS + 1,
    .starts_tasks = 1, .job_var = "FLUX_URI",
    .task_vars = &task_vars,
    .launcher = "flux",
    .template_file = "flux.sh.in", .directive = "#flux:",
    /* the job id alone: "ƒ2RSrTuXh" (F58; "f2RSrTuXh" with
     * FLUX_F58_FORCE_ASCII) */
    .submit = submit, .id_end = " \t\n",
    .requeue_signal = "USR1@90",
    .no_requeue = "no Flux command puts a running job back in its queue "
                  "(submit the next run with flux batch --dependency="
                  "afterany:JOBID instead)",
};
