/* launch.c - dlrun starts the ranks itself (not per-task mode): compute
 * every rank's environment, start them through the chosen launcher,
 * supervise, and exit with the code of the rank that failed first. */
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rendezvous/broker.h"
#include "run/engine.h"
#include "place/envout.h"
#include "run/guard.h"
#include "run/hostroom.h"
#include "job/head.h"
#include "job/horovod.h"
#include "job/job.h"
#include "launchers/launcher.h"
#include "util/say.h"
#include "run/output.h"
#include "run/proc.h"
#include "job/progress.h"
#include "job/status.h"
#include "rendezvous/token.h"

extern char **environ;

static void free_envps(char ***envps, int n)
{
    for (int i = 0; envps && i < n; i++)
        envset_free_envp(envps[i]);
    free(envps);
}

/* On one node dlrun serves the ranks' broker itself (dlrun kv,
 * dlrun_nccl_unique_id) from the supervisor's loop: no thread, one
 * socket, a Unix one in a 0700 folder (other local users cannot even
 * connect; loopback TCP if that fails).  A new one (new token, no keys)
 * per attempt, unless the environment already names one. */
struct local_broker {
    struct broker *b;
    char addr[160];
    char token[TOKEN_HEX_LEN + 1];
};

/* dir: the job's private folder for the socket (NULL or too long a path:
 * the broker makes one of its own). */
static int local_broker_start(struct local_broker *lb, const char *dir,
                              struct err *err)
{
    uint8_t tok[TOKEN_BYTES];
    char bind[120] = "unix:";

    /* every rank's connection is a file, as in `dlrun broker` */
    broker_raise_nofile();
    if (token_new(tok, err) < 0)
        return -1;
    if (dir && snprintf(bind, sizeof bind, "unix:%s/broker.sock", dir) >=
               (int)sizeof bind)
        snprintf(bind, sizeof bind, "unix:");
    lb->b = broker_create(bind, 0, tok, NULL, err);
    if (!lb->b && !(lb->b = broker_create("127.0.0.1", 0, tok, NULL, err)))
        return -1;
    token_to_hex(tok, lb->token);
    if (broker_port(lb->b))
        snprintf(lb->addr, sizeof lb->addr, "127.0.0.1:%d",
                 broker_port(lb->b));
    else
        snprintf(lb->addr, sizeof lb->addr, "%s", broker_addr(lb->b));
    return 0;
}

static int local_broker_serve(void *ctx, int readable)
{
    struct local_broker *lb = ctx;
    struct err err = { "" };

    (void)readable;     /* deadlines are due too: always run it */
    broker_run_once(lb->b, 0, &err);
    return broker_timeout_ms(lb->b);
}

static int add_broker_env(const struct local_broker *lb, struct envset *s)
{
    struct err err = { "" };

    return lb && lb->b &&
           (envset_set(s, "DLRUN_BROKER", lb->addr, &err,
                       "dlrun's broker on this host") < 0 ||
            envset_set(s, "DLRUN_TOKEN", lb->token, &err,
                       "the broker's per-job token") < 0) ? -1 : 0;
}

/* The guard's mark (lib/run/guard.h): what the ranks start carries it. */
static int add_guard_env(struct envset *s)
{
    struct err err = { "" };

    return guard_mark_name() &&
           envset_set(s, guard_mark_name(), guard_mark_value(), &err,
                      "dlrun's guard: ends the job's processes") < 0 ? -1 : 0;
}

/* environ-style arrays for the ranks started here (indexed by rank, NULL
 * for the others); NULL after printing the error. */
static char ***rank_envps(const struct job *j, const int *ranks, int n,
                          const struct local_broker *lb)
{
    char ***envps = calloc((size_t)j->plan.nranks, sizeof *envps);

    for (int i = 0; envps && i < n; i++) {
        struct envset s = { .no_from = 1 };
        int r = ranks[i];
        if (job_rank_env(j, r, &s) != 0 || add_broker_env(lb, &s) < 0 ||
            add_guard_env(&s) < 0) {
            free_envps(envps, j->plan.nranks);
            return NULL;
        }
        envps[r] = envset_envp(&s, environ);
        envset_free(&s);
        if (!envps[r]) {
            free_envps(envps, j->plan.nranks);
            envps = NULL;
        }
    }
    if (!envps)
        say_fail(EXIT_FAIL, "out of memory");
    return envps;
}

void job_report_failure(int rank, const char *host, int pid, int status,
                        const char *what_stopped)
{
    if (WIFSIGNALED(status))
        say("rank %d (host %s, pid %d) was killed by signal %d (%s); %s",
            rank, host, pid, WTERMSIG(status), strsignal(WTERMSIG(status)),
            what_stopped);
    else
        say("rank %d (host %s, pid %d) exited with code %d; %s", rank, host,
            pid, WEXITSTATUS(status), what_stopped);
}

/* Is r one of the plan's ranks?  What a launcher handed back is believed
 * only then. */
static int plan_rank(const struct plan *p, int r)
{
    return r >= 0 && r < p->nranks;
}

static void report_failure(const struct job *j, const struct supervise *sv)
{
    const struct sv_rank *r = &sv->ranks[sv->failed];
    char stopped[64];

    snprintf(stopped, sizeof stopped, "stopped %d other rank%s", sv->stopped,
             sv->stopped == 1 ? "" : "s");
    if (plan_rank(&j->plan, r->rank))
        job_report_failure(r->rank,
                           j->plan.nodes[j->plan.rank_node[r->rank]].host,
                           (int)r->pid, r->status, stopped);
    else
        say("process %d, which the launcher called rank %d (the job has %d), "
            "ended with code %d; %s", (int)r->pid, r->rank, j->plan.nranks,
            supervise_exit_code(r->status), stopped);
}

/* Descendants reparented to us (they escaped their process group) end
 * with the job; then reap them. */
static void end_leftovers(const struct supervise *sv)
{
    pid_t *keep = malloc((size_t)sv->n * sizeof *keep);

    for (int i = 0; keep && i < sv->n; i++)
        keep[i] = sv->ranks[i].pid;
    proc_kill_adopted(keep, keep ? sv->n : 0);
    guard_kill_job();
    proc_reap_ended();
    free(keep);
}

/* The output engine for the ranks started here; NULL after printing. */
static struct output *make_output(const struct job *j, const int *ranks, int n,
                                  struct stall_watch *stall)
{
    struct output_opts oo = {
        .tag = j->opt.tag_output, .timestamp = j->opt.timestamp_output,
        .dir = j->opt.output_dir,
        .show = j->opt.ranks_filter, .nshow = j->opt.nfilter,
        .console_out = STDOUT_FILENO, .console_err = STDERR_FILENO,
        .append = j->restart > 0,
        .hide = j->opt.output_dir ? j->opt.torch.redirects : 0,
    };
    struct err err = { "" };
    struct output *o;

    job_stall_output(stall, &oo);
    job_status_output(j->status, &oo);
    o = output_create(ranks, n, &oo, &err);

    if (!o)
        say_fail(EXIT_FAIL, "%s", err.msg);
    return o;
}

/* The ranks this process starts: all, or its node's in per-node mode.
 * Returns how many (caller frees *out), -1 when out of memory. */
static int ranks_here(const struct plan *p, int **out)
{
    int n = 0;

    *out = calloc((size_t)p->nranks, sizeof **out);
    if (!*out)
        return -1;
    for (int r = 0; r < p->nranks; r++)
        if (p->self_node < 0 || p->rank_node[r] == p->self_node)
            (*out)[n++] = r;
    return n;
}

/* The agents below an agent (--spawn): only a backend that starts a tree
 * gives one (ssh; srun starts every node at once). */
static const struct launcher *subtree_launcher(void)
{
    return launcher_with(LAUNCHER_AGENTS | LAUNCHER_TREE);
}

/* An agent with --spawn starts the agents below it first (the
 * rendezvous waits for every node), into sv->ranks after the ranks' slots.
 * 0, or -1 after printing the error. */
static int start_subtree(struct job *j, struct launch_job *lj,
                         struct supervise *sv, struct launched *sub)
{
    struct err err = { "" };

    j->subtree->child_mask = &lj->child_mask;
    sub->procs = sv->ranks + lj->nranks;
    if (subtree_launcher()->start(&(struct launch_req){ .agents = j->subtree },
                                  sub, &err) < 0)
        return say("%s", err.msg), -1;
    sv->n = lj->nranks + sub->n;
    return 0;
}

/* The agents below this one, when the ranks could not start: their relays
 * close their lifelines on SIGTERM. */
static void end_subtree(struct supervise *sv, int nranks, struct launched *sub)
{
    subtree_launcher()->destroy(sub);
    sv->n = nranks;
}

/* What an attempt sets up before its ranks start: the one-node broker,
 * PMIx, Horovod, the stall and status watches, the ranks' environments
 * and output.  0, or -1 after printing (run_attempt frees what was made). */
static int attempt_prepare(struct job *j, struct launch_job *lj,
                           struct local_broker *lb, struct stall_watch **stall)
{
    struct err err = { "" };

    /* a broker the caller set up (DLRUN_BROKER) stays the ranks' */
    if (!j->agent && !getenv("DLRUN_BROKER") &&
        local_broker_start(lb, j->errdir, &err) < 0)
        return say_fail(EXIT_FAIL, "cannot start the broker: %s", err.msg), -1;
    if (job_pmix_begin(j) != 0 || job_pmi_begin(j) != 0 ||
        horovod_begin(j) != 0)
        return -1;
    lj->pmi = j->pmi;
    *stall = job_stall_create(j, lj->ranks, lj->nranks);
    j->status = job_status_create(j, lj->ranks, lj->nranks);
    lj->rank_envp = rank_envps(j, lj->ranks, lj->nranks, lb);
    if (!lj->rank_envp)
        return -1;
    lj->out = make_output(j, lj->ranks, lj->nranks, *stall);
    return lj->out ? 0 : -1;
}

/* Supervise the started ranks with the attempt's watches; one line for
 * how they ended (the head's for an agent, the group's for a node by
 * hand); dlrun's exit code. */
static int attempt_watch(struct job *j, struct supervise *sv,
                         struct local_broker *lb, struct stall_watch *stall)
{
    struct mpi_guard guard = { 0 };
    struct pmi_hook pmi;
    int rc;

    if (lb->b) {
        sv->extra = local_broker_serve;
        sv->extra_fd = broker_fd(lb->b);
        sv->extra_ctx = lb;
    }
    if ((rc = job_pmi_watch(j, sv, &pmi)) != 0)
        return rc;
    job_mpi_guard(j, sv, &guard);
    job_stall_watch(stall, sv, lb->b);
    job_status_watch(j->status, sv, lb->b);
    rc = supervise_run(sv);
    job_pmi_unwatch(&pmi);
    if (rc < 0)
        rc = say_fail(EXIT_FAIL, "cannot watch the ranks (signalfd failed)");
    if (guard.tripped)          /* its line said why */
        rc = EXIT_USAGE;
    else if (pmi.abort_code)    /* MPI_Abort: its line said which rank */
        rc = pmi.abort_code;
    else if (job_stall_finish(stall))   /* its lines said why */
        rc = EXIT_STALL;
    else if (sv->failed >= 0 && sv->ranks[sv->failed].rank >= 0 &&
             !j->agent && !j->one_attempt)
        report_failure(j, sv);
    else if (!j->agent && !j->one_attempt)
        job_report_interrupt(j, sv, rc, 0);
    end_leftovers(sv);
    return rc;
}

/* One run of the whole group; sv gets the outcome.  Returns dlrun's exit
 * code for it. */
static int run_attempt(struct job *j, struct launch_job *lj,
                       const struct launcher *l, struct supervise *sv)
{
    struct err err = { "" };
    struct local_broker lb = { 0 };
    struct stall_watch *stall = NULL;
    struct launched run = { .procs = sv->ranks }, sub = { 0 };
    /* the signals dlrun receives: to the ranks, and to the relays of the
     * agents below, which pass on only the stop signals (those agents get
     * the others from the head's broker, as this one did) */
    struct launcher_fwd fwd = { { l, subtree_launcher() }, { &run, &sub } };
    int rc = EXIT_FAIL, watched = 0;

    if (j->subtree && start_subtree(j, lj, sv, &sub) < 0)
        goto out;
    if (j->agent && (rc = agent_agree_rdv(j)) != 0)
        goto out;
    rc = EXIT_FAIL;
    if (attempt_prepare(j, lj, &lb, &stall) < 0)
        goto out;
    fflush(NULL);
    if (l->start(&(struct launch_req){ .ranks = lj }, &run, &err) < 0) {
        rc = say_fail(run.exec_errno ? proc_exec_code(run.exec_errno)
                                     : EXIT_FAIL, "%s", err.msg);
        goto out;
    }
    /* the environments were for the exec only: what a job of many ranks
     * keeps for hours is the rest (bench/README.md, "RSS per local rank") */
    free_envps(lj->rank_envp, j->plan.nranks);
    lj->rank_envp = NULL;
    malloc_trim(0);
    job_pmi_started(j);
    sv->out = lj->out;
    if (!j->agent)
        progress_step("%d rank%s started", lj->nranks, lj->nranks == 1 ? "" :
                      "s");
    sv->forward = launcher_forward;
    sv->forward_ctx = &fwd;
    watched = 1;
    rc = attempt_watch(j, sv, &lb, stall);
out:
    if (!watched && sv->n > lj->nranks)
        end_subtree(sv, lj->nranks, &sub);
    l->destroy(&run);   /* supervised to the end: only the state is left */
    job_pmix_end(j);
    job_pmi_end(j);
    job_stall_free(stall);
    job_status_free(j->status);
    j->status = NULL;
    sv->extra = NULL;
    sv->forward = NULL;
    broker_destroy(lb.b);
    output_destroy(lj->out);
    lj->out = NULL;
    free_envps(lj->rank_envp, j->plan.nranks);
    lj->rank_envp = NULL;
    return rc;
}

/* How the attempt ended, for run_nodes. */
static void keep_last(struct job *j, const struct supervise *sv)
{
    const struct sv_rank *r = sv->failed >= 0 ? &sv->ranks[sv->failed] : NULL;

    j->last.rank = r && plan_rank(&j->plan, r->rank) ? r->rank : -1;
    j->last.status = r ? r->status : 0;
    j->last.pid = r ? (int)r->pid : 0;
    j->last.signal = sv->signal_received;
}

/* The attempts of run_launch (lib/run/engine.h): the job, its ranks'
 * launcher and slots, the last attempt's supervisor. */
struct launch_run {
    struct job *j;
    struct launch_job *lj;
    const struct launcher *l;
    struct sv_rank *ranks;
    struct supervise sv;
};

static void launch_attempt(void *ctx, const struct engine *e,
                           struct engine_end *end)
{
    struct launch_run *lr = ctx;
    struct job *j = lr->j;

    (void)e;
    lr->sv = (struct supervise){
        .ranks = lr->ranks, .n = lr->lj->nranks,
        .kill_timeout_ms = j->opt.kill_timeout_ms,
    };
    memset(lr->ranks, 0, (size_t)lr->lj->nranks * sizeof *lr->ranks);
    /* the agents below this one (--spawn) follow the ranks */
    end->rc = run_attempt(j, lr->lj, lr->l, &lr->sv);
    end->failed = lr->sv.failed >= 0;
    end->signal = lr->sv.signal_received;
    if (j->agent && lr->sv.failed >= 0)
        agent_report_failure(j, &lr->sv);
    if (j->agent) { /* the head restarts and summarizes every node */
        agent_report_ranks(j, &lr->sv);
        agent_report_end(j);
    }
    else if (j->one_attempt)
        keep_last(j, &lr->sv);
}

static void launch_restarting(void *ctx, const struct engine *e)
{
    (void)ctx;
    say("restarting the job (restart %d of %d)", *e->restart,
        e->max_restarts);
}

static int launch_loop(struct job *j, struct launch_job *lj,
                       const struct launcher *l, struct sv_rank *ranks)
{
    struct launch_run lr = { .j = j, .lj = lj, .l = l, .ranks = ranks };
    /* an agent's and a node's by hand restarts are their group's */
    int alone = !j->agent && !j->one_attempt;
    struct engine e = { .max_restarts = alone ? j->opt.max_restarts : 0,
                        .restart = &j->restart, .attempt = launch_attempt,
                        .restarting = launch_restarting, .ctx = &lr };
    int rc = engine_run(&e, NULL);

    if (alone && j->opt.summary && summary_write(j, &lr.sv, rc) < 0)
        rc = rc ? rc : EXIT_FAIL;
    return rc;
}

/* Before the first attempt: what the job's processes need around them,
 * and the signals blocked for the supervisor (lj->child_mask: the mask
 * the ranks get). */
static void launch_setup(const struct job *j, struct launch_job *lj)
{
    sigset_t block;

    /* descendants that escape their group are reparented to us, found, ended */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    /* ... and when dlrun is killed, the guard ends them (with the job's
     * cgroup where one can be made); without a guard the job runs as
     * before */
    job_guard_start(j);
    supervise_signals(&block);
    job_stall_block(j, &block);
    sigprocmask(SIG_BLOCK, &block, &lj->child_mask);
    if (j->child_mask)
        lj->child_mask = *j->child_mask;
}

/* dlrun's own memory per rank beside the rank's environment: its output
 * streams, supervisor slot, poll entries and what malloc rounds them to
 * (bench/README.md, "RSS per local rank"). */
#define RANK_OWN_BYTES (2 * 1024)

/* What one rank's environment costs dlrun: this process's, which it
 * inherits, and dlrun's ~70 variables. */
static long long rank_env_bytes(void)
{
    long long n = 4096;

    for (char **e = environ; *e; e++)
        n += (long long)strlen(*e) + 1 + (long long)sizeof *e;
    return n;
}

int job_check_room(const struct job *j)
{
    const struct plan *p = &j->plan;
    int here = p->self_node >= 0 ? p->nodes[p->self_node].nranks : p->nranks;
    int node = p->self_node >= 0 ? p->self_node : p->nranks > 0 ?
               p->rank_node[0] : 0;
    long long procs = here + (j->subtree ? j->subtree->nnodes : 0);
    int fds = HOSTROOM_FDS_PER_RANK +
              (j->opt.output_dir ? HOSTROOM_FDS_PER_RANK_FILES : 0);
    char who[320];
    struct hostroom_need need = {
        .who = who, .procs = procs,
        .fds = procs * fds + HOSTROOM_FDS_FIXED,
        .bytes = here * (rank_env_bytes() + RANK_OWN_BYTES +
                         HOSTROOM_PROC_BYTES),
    };
    struct hostroom h;
    struct err err = { "" };

    if (p->nnodes < 1)
        return 0;
    snprintf(who, sizeof who, "%d rank%s%s on %s", here, here == 1 ? "" : "s",
             j->subtree ? " and the agents below" : "", p->nodes[node].host);
    hostroom_raise_nofile();
    hostroom_read(&h, "", procs);
    if (hostroom_check(&h, &need, &err) < 0)
        return say_fail(EXIT_USAGE, "%s", err.msg);
    return 0;
}

int run_launch(struct job *j, char **prog)
{
    struct launch_job lj = { .plan = &j->plan, .argv = prog };
    struct sv_rank *ranks = NULL;
    struct err err = { "" };
    const struct launcher *l = NULL;
    int *which = NULL;
    int rc = EXIT_FAIL;

    lj.nranks = ranks_here(&j->plan, &which);
    lj.ranks = which;
    if (lj.nranks < 0)
        return say_fail(EXIT_FAIL, "out of memory");
    if (lj.nranks == 0 && !j->subtree) {   /* a node the plan left out */
        rc = EXIT_OK;
        goto out;
    }
    l = j->launcher ? j->launcher
                    : launcher_select(&j->plan, &j->alloc, 0, NULL, &err);
    if (!l) {
        rc = say_fail(EXIT_USAGE, "%s", err.msg);
        goto out;
    }
    if (!j->room_checked && (rc = job_check_room(j)) != 0)
        goto out;
    rc = EXIT_FAIL;
    ranks = calloc((size_t)lj.nranks + (j->subtree ? (size_t)j->subtree->nnodes
                                                   : 0), sizeof *ranks);
    if (!ranks)
        goto out;
    lj.bind = j->bind;
    if (j->opt.report_bindings)
        job_report_bindings(j, which, lj.nranks);
    launch_setup(j, &lj);
    /* after the mask: libpmix's thread must not take dlrun's signals */
    rc = job_pmix_start(j, which, lj.nranks);
    if (rc == 0)
        rc = job_pmi_start(j, which, lj.nranks);
    if (rc == 0)
        rc = launch_loop(j, &lj, l, ranks);
    job_pmi_stop(j);
    job_pmix_stop(j);
    guard_stop();
out:
    free(which);
    free(ranks);
    return rc;
}
