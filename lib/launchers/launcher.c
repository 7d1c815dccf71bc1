/* launcher.c - choosing a backend, and the clean-up they share. */
#include "launchers/launcher.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>

#include "run/proc.h"
#include "util/clock.h"
#include "where/sched.h"

static const struct launcher *const launchers[] = {
    &launcher_local, &launcher_srun, &launcher_ssh, &launcher_flux,
};
#define NLAUNCHERS (sizeof launchers / sizeof launchers[0])

const struct launcher *launcher_find(const char *name)
{
    /* Hydra's -launcher/-bootstrap names: a scheduler that starts the
     * tasks itself ("slurm") means its launcher */
    const struct sched *s = sched_find(name);

    if (s && s->starts_tasks)
        name = s->launcher;
    else if (strcmp(name, "fork") == 0)
        name = "local";
    for (size_t i = 0; i < NLAUNCHERS; i++)
        if (strcmp(name, launchers[i]->name) == 0)
            return launchers[i];
    return NULL;
}

const struct launcher *launcher_with(unsigned caps)
{
    for (size_t i = 0; i < NLAUNCHERS; i++)
        if ((launchers[i]->caps & caps) == caps)
            return launchers[i];
    return NULL;
}

const char *launcher_names(void)
{
    static char names[128];

    if (!names[0]) {    /* "a, b or c", from the table */
        size_t len = 0;
        for (size_t i = 0; i < NLAUNCHERS && len < sizeof names; i++)
            len += (size_t)snprintf(names + len, sizeof names - len, "%s%s",
                                    i == 0 ? "" : i + 1 < NLAUNCHERS ? ", "
                                                                     : " or ",
                                    launchers[i]->name);
    }
    return names;
}

/* The named backend, when it has the caps and fits the plan. */
static const struct launcher *select_named(const struct plan *p,
                                           const struct alloc *a,
                                           unsigned need, const char *name,
                                           struct err *err)
{
    const struct launcher *l = launcher_find(name);

    if (!l) {
        err_set(err, "--launcher %s: no such launcher; expected %s", name,
                launcher_names());
        return NULL;
    }
    if ((l->caps & LAUNCHER_AGENTS) != need || l->detect(p, a) <= 0) {
        err_set(err, "--launcher %s cannot run this plan: it %s", name,
                l->needs);
        return NULL;
    }
    return l;
}

const struct launcher *launcher_select(const struct plan *p,
                                       const struct alloc *a,
                                       unsigned need, const char *name,
                                       struct err *err)
{
    const struct launcher *best = NULL;
    int best_prio = 0;

    if (name)
        return select_named(p, a, need, name, err);
    for (size_t i = 0; i < NLAUNCHERS; i++) {
        int prio;
        if ((launchers[i]->caps & LAUNCHER_AGENTS) != need)
            continue;
        prio = launchers[i]->detect(p, a);
        if (prio > best_prio) {
            best = launchers[i];
            best_prio = prio;
        }
    }
    if (!best)
        err_set(err, "no launcher can run this plan (%s)",
                need ? "srun needs a Slurm job, ssh a host list" :
                       "local starts ranks on this host only");
    return best;
}

void launcher_forward(void *ctx, int sig)
{
    struct launcher_fwd *f = ctx;

    for (int i = 0; i < 2; i++)
        if (f->run[i] && f->run[i]->n > 0)
            f->l[i]->signal(f->run[i], sig);
}

int agent_proc_node(int rank)
{
    return -1 - rank;
}

int launcher_signal_groups(struct launched *run, int sig)
{
    int n = 0;

    for (int i = 0; i < run->n; i++)
        if (run->procs[i].running && killpg(run->procs[i].pid, sig) == 0)
            n++;
    return n;
}

/* Reap procs[i] if it ended (or wait for it with block); 1 when reaped. */
static int reap_one(struct sv_rank *r, int block)
{
    int status;
    pid_t got;

    do
        got = waitpid(r->pid, &status, block ? 0 : WNOHANG);
    while (got < 0 && errno == EINTR);
    if (got == 0)
        return 0;
    /* ECHILD: someone else reaped it; it is gone either way */
    r->running = 0;
    if (got == r->pid) {
        r->status = status;
        r->end = clock_wall();
    }
    killpg(r->pid, SIGKILL);    /* what it left in its group ends with it */
    return 1;
}

/* Wait up to ms for the running processes to end; 1 when all have. */
static int reap_within(struct launched *run, int ms)
{
    struct timespec tick = { 0, 10 * 1000000L };

    for (int waited = 0;; waited += 10) {
        int left = 0;
        for (int i = 0; i < run->n; i++)
            if (run->procs[i].running && !reap_one(&run->procs[i], 0))
                left++;
        if (!left)
            return 1;
        if (waited >= ms)
            return 0;
        nanosleep(&tick, NULL);
    }
}

void launcher_end(struct launched *run, int first_sig, int grace_ms)
{
    if (first_sig != SIGKILL && launcher_signal_groups(run, first_sig) > 0 &&
        reap_within(run, grace_ms))
        return;
    launcher_signal_groups(run, SIGKILL);
    for (int i = 0; i < run->n; i++)
        if (run->procs[i].running)
            reap_one(&run->procs[i], 1);
}

int launcher_start_step(const struct agent_job *job, char **argv,
                        struct launched *run, struct err *err)
{
    struct sv_rank *procs = run->procs;
    struct proc_spec spec = { .argv = argv, .envp = job->envp,
                              .mask = job->child_mask, .out_fd = -1,
                              .err_fd = -1, .death_sig = SIGTERM };

    run->n = 0;
    if (proc_spawn(&spec, &procs[0].pid, &run->exec_errno, err) < 0) {
        err_prefix(err, "cannot start the agents");
        return -1;
    }
    procs[0].rank = INT_MIN;
    procs[0].running = 1;
    procs[0].start = clock_wall();
    run->n = 1;
    return 0;
}

int launcher_signal_step(struct launched *run, int sig)
{
    return launcher_signal_groups(run, sig == SIGINT ? SIGTERM : sig);
}

void launcher_end_step(struct launched *run)
{
    launcher_end(run, SIGTERM, 5000);
}

int launcher_sched_default(const struct alloc *a, const char *name)
{
    return a && a->kind == ALLOC_JOB && a->sched &&
           strcmp(a->sched->launcher, name) == 0 ? 20 : 1;
}
