/* t_launch.c - the attempts of this host's ranks (run_launch) driven
 * in-process.  A fake launcher, handed over through struct job's launcher
 * hook, records its start, signal and destroy calls and starts each rank
 * as a forked copy of this test that does what the test's script says:
 * exit with a code after a while, run until a signal ends it, note
 * SIGTERM and go on, or exit with a code of its own on SIGTERM.  A fake
 * clock lets the kill timeout pass the moment a rank has shrugged off
 * SIGTERM.  Checked: --max-restarts N gives N+1 attempts, each rank's
 * TORCHELASTIC_RESTART_COUNT is its attempt's, a success ends the
 * restarts; the first failing rank's code is the job's, the others get
 * SIGTERM and, after the kill timeout, SIGKILL; when two ranks fail, the
 * first in time counts and an exit during the teardown does not; a stop
 * signal goes through the launcher's signal() and is not restarted; a
 * rank number outside the plan neither crashes the report nor is kept;
 * a job the host's limits cannot hold starts nothing. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "job/job.h"
#include "launchers/launcher.h"
#include "run/output.h"
#include "util/clock.h"
#include "util/say.h"
#include "where/hostfile.h"
#include "tap.h"

#define MAXR 3          /* ranks in a test job at most */
#define MAXA 6          /* attempts recorded */
#define RUN (-1)        /* after_ms: run until a signal ends it */
#define TERM_NOTED (-1) /* on_term: note SIGTERM (the clock jumps) and go on */

/* What one rank does in one attempt. */
struct act {
    int code;           /* exit code after after_ms */
    int after_ms;       /* RUN: never by itself */
    int on_term;        /* 0: SIGTERM kills it; TERM_NOTED; N > 0: exit N */
    int tell;           /* a signal it sends dlrun first, or 0 */
};

/* The launcher's functions take no context: one fake, of the file. */
static struct {
    const struct act (*acts)[MAXR];     /* per attempt; the last repeats */
    int nacts;
    int bad_rank;       /* >= 0: rank 1's process is handed back as this */
    int starts, destroys, nsigs;
    int sigs[8];                        /* what signal() was asked */
    char restart_count[MAXA][MAXR][8];  /* TORCHELASTIC_RESTART_COUNT */
    struct sv_rank ended[MAXA][MAXR];   /* how each rank ended (destroy) */
    int term_pipe[2];   /* TERM_NOTED ranks write 'T' here */
    long offset, jump, jump_ms, term_at;    /* the fake clock */
} F;

/* --- the ranks (forked: async-signal-safe calls only) --- */

static void on_term_note(int sig)
{
    char c = 'T';

    (void)sig;
    if (write(F.term_pipe[1], &c, 1) < 0)
        _exit(99);
}

static int term_code;

static void on_term_exit(int sig)
{
    (void)sig;
    _exit(term_code);
}

static void rank_main(const struct act *a, const sigset_t *mask)
{
    struct timespec ts = { a->after_ms / 1000,
                           (a->after_ms % 1000) * 1000000L };
    struct sigaction sa = { .sa_handler = on_term_note };

    setpgid(0, 0);
    if (a->on_term) {
        term_code = a->on_term;
        if (a->on_term > 0)
            sa.sa_handler = on_term_exit;
        sigaction(SIGTERM, &sa, NULL);
    }
    sigprocmask(SIG_SETMASK, mask, NULL);
    if (a->tell)
        kill(getppid(), a->tell);
    if (a->after_ms == RUN)
        for (;;)
            pause();
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
    _exit(a->code);
}

/* --- the fake launcher --- */

static const char *env_value(char **envp, const char *name)
{
    size_t n = strlen(name);

    for (; envp && *envp; envp++)
        if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
            return *envp + n + 1;
    return "(none)";
}

static int fake_start(const struct launch_req *req, struct launched *run,
                      struct err *err)
{
    const struct launch_job *lj = req->ranks;
    int at = F.starts < F.nacts ? F.starts : F.nacts - 1;
    int rec = F.starts < MAXA ? F.starts : MAXA - 1;

    for (int i = 0; i < lj->nranks; i++) {
        int r = lj->ranks[i];
        pid_t pid;
        snprintf(F.restart_count[rec][r], sizeof F.restart_count[rec][r],
                 "%s", env_value(lj->rank_envp[r],
                                 "TORCHELASTIC_RESTART_COUNT"));
        if ((pid = fork()) < 0)
            return err_set(err, "fork failed");
        if (pid == 0)
            rank_main(&F.acts[at][r], &lj->child_mask);
        setpgid(pid, pid);
        if (lj->out)
            output_close_child_ends(lj->out, i);
        run->procs[i] = (struct sv_rank){
            .rank = r == 1 && F.bad_rank >= 0 ? F.bad_rank : r,
            .pid = pid, .running = 1, .start = clock_wall() };
        run->n++;
    }
    F.starts++;
    return 0;
}

static int fake_signal(struct launched *run, int sig)
{
    if (F.nsigs < 8)
        F.sigs[F.nsigs++] = sig;
    return launcher_signal_groups(run, sig);
}

static void fake_destroy(struct launched *run)
{
    int rec = F.destroys < MAXA ? F.destroys : MAXA - 1;

    for (int i = 0; i < run->n && i < MAXR; i++)
        F.ended[rec][i] = run->procs[i];
    launcher_end(run, SIGKILL, 0);
    F.destroys++;
}

static const struct launcher fake = {
    .name = "fake", .caps = LAUNCHER_SIGNALS,
    .start = fake_start, .signal = fake_signal, .destroy = fake_destroy,
};

/* --- the fake clock: real time, plus the kill timeout once a rank
 * noted SIGTERM (term_at: when the note was seen; the time jumps at the
 * next reading) --- */

static long fake_now(void *ctx)
{
    struct timespec ts;
    long now;
    char c;

    (void)ctx;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    /* the jump after the reading that saw the note: that one may be the
     * reading the kill deadline is taken from */
    F.offset += F.jump;
    F.jump = 0;
    now = ts.tv_sec * 1000L + ts.tv_nsec / 1000000L + F.offset;
    if (read(F.term_pipe[0], &c, 1) == 1) {
        F.term_at = now;
        F.jump = F.jump_ms;
    }
    return now;
}

static long real_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* --- what dlrun said --- */

static struct {
    int n;
    char line[16][512];
} said;

static void keep(void *ctx, const char *line)
{
    (void)ctx;
    if (said.n < 16)
        snprintf(said.line[said.n++], sizeof said.line[0], "%s", line);
}

/* The first line said that starts with prefix, or "". */
static const char *said_line(const char *prefix)
{
    for (int i = 0; i < said.n; i++)
        if (strncmp(said.line[i], prefix, strlen(prefix)) == 0)
            return said.line[i];
    return "";
}

/* --- one job of n ranks on this host, run with the script --- */

static sigset_t test_mask;

static int job_init(struct job *j, int n)
{
    struct err err = { "" };
    char hosts[32];

    memset(j, 0, sizeof *j);
    snprintf(hosts, sizeof hosts, "localhost:%d", n);
    j->opt.bind.bind = BIND_NONE;
    j->opt.bind.gpu = GPU_BIND_NONE;
    j->opt.kill_timeout_ms = 10000;
    j->opt.mpi = MPI_NONE;
    j->launcher = &fake;
    if (hosts_parse(hosts, &j->alloc, &err) == 0 &&
        plan_build(&j->alloc, &j->opt.plan, &j->plan, &err) == 0) {
        j->alloc.source = "hosts";
        if (job_prepare_planned(j, 1) == 0)
            return 0;
    }
    printf("# %s\n", err.msg);
    return -1;
}

/* run_launch with the script (nacts attempts' acts); the launcher hands
 * rank 1's process back as bad when it is >= 0. */
static int run_script(struct job *j, const struct act (*acts)[MAXR], int nacts,
                      int bad)
{
    char *prog[] = { "rank", NULL };
    char c;
    int rc;

    F.acts = acts;
    F.nacts = nacts;
    F.starts = F.destroys = F.nsigs = 0;
    F.bad_rank = bad;
    F.term_at = F.jump = 0;
    F.jump_ms = j->opt.kill_timeout_ms;
    memset(F.ended, 0, sizeof F.ended);
    while (read(F.term_pipe[0], &c, 1) == 1)
        ;
    said.n = 0;
    rc = run_launch(j, prog);
    /* dlrun exits after run_launch, its signals still blocked: the next
     * job of this test starts from the mask the test began with */
    sigprocmask(SIG_SETMASK, &test_mask, NULL);
    return rc;
}

static int exited(const struct sv_rank *r, int code)
{
    return WIFEXITED(r->status) && WEXITSTATUS(r->status) == code;
}

static int killed(const struct sv_rank *r, int sig)
{
    return WIFSIGNALED(r->status) && WTERMSIG(r->status) == sig;
}

/* --max-restarts 2, rank 0 fails every time: 3 attempts, each told. */
static void restarts(void)
{
    static const struct act fail[][MAXR] = {
        { { 1, 0, 0, 0 }, { 0, RUN, 0, 0 } } };
    static const struct act fail_ok[][MAXR] = {
        { { 1, 0, 0, 0 }, { 0, RUN, 0, 0 } },
        { { 0, 0, 0, 0 }, { 0, 0, 0, 0 } } };
    struct job j;

    if (job_init(&j, 2) != 0)
        return;
    j.opt.max_restarts = 2;
    is_int(run_script(&j, fail, 1, -1), 1,
           "--max-restarts 2, failing: rank 0's code");
    is_int(F.starts, 3, "  3 attempts started");
    is_int(F.destroys, 3, "  and each destroyed");
    is_int(j.restart, 2, "  2 restarts counted");
    ok(strcmp(F.restart_count[0][0], "0") == 0 &&
       strcmp(F.restart_count[1][1], "1") == 0 &&
       strcmp(F.restart_count[2][0], "2") == 0 &&
       strcmp(F.restart_count[2][1], "2") == 0,
       "  TORCHELASTIC_RESTART_COUNT: the attempt's, for every rank");
    ok(said_line("restarting the job (restart 1 of 2)")[0] &&
       said_line("restarting the job (restart 2 of 2)")[0] &&
       !said_line("restarting the job (restart 3")[0], "  each restart said");
    ok(strstr(said_line("rank 0 (host localhost, pid "),
              ") exited with code 1; stopped 1 other rank") != NULL,
       "  each failure said");
    ok(killed(&F.ended[2][1], SIGTERM), "  the other rank got SIGTERM");
    j.restart = 0;
    j.opt.max_restarts = 3;
    is_int(run_script(&j, fail_ok, 2, -1), 0, "a failure, then a success: 0");
    is_int(F.starts, 2, "  no attempt after the success");
    ok(said_line("restarting the job (restart 1 of 3)")[0] &&
       !said_line("restarting the job (restart 2")[0], "  one restart said");
    ok(exited(&F.ended[1][0], 0) && exited(&F.ended[1][1], 0),
       "  both ranks ended well");
    job_free(&j);
}

/* Rank 1 fails at once; rank 0 dies of SIGTERM, rank 2 notes it and runs
 * on until SIGKILL, which comes only once the kill timeout passed. */
static void fail_fast(void)
{
    static const struct act acts[][MAXR] = {
        { { 0, RUN, 0, 0 }, { 3, 0, 0, 0 }, { 0, RUN, TERM_NOTED, 0 } } };
    struct job j;
    long t0 = real_ms();

    if (job_init(&j, 3) != 0)
        return;
    is_int(run_script(&j, acts, 1, -1), 3,
           "fail-fast: the failing rank's code");
    ok(exited(&F.ended[0][1], 3), "  rank 1 exited 3");
    ok(killed(&F.ended[0][0], SIGTERM), "  rank 0: SIGTERM");
    ok(killed(&F.ended[0][2], SIGKILL), "  rank 2, which went on: SIGKILL");
    ok(F.term_at > 0 && F.ended[0][2].end * 1000 - (double)F.term_at >= 9999,
       "  SIGKILL not before the kill timeout (10 s) on the clock");
    ok(real_ms() - t0 < 5000, "  which the fake clock let pass (no wait)");
    ok(strstr(said_line("rank 1 (host localhost, pid "),
              ") exited with code 3; stopped 2 other ranks") != NULL,
       "  the line names rank 1 and the 2 ranks stopped");
    is_int(F.starts, 1, "  --max-restarts 0: one attempt");
    job_free(&j);
}

/* Two failures: rank 2's at once, rank 0's 5 s later would be too,
 * but SIGTERM reaches it first and its exit 9 on SIGTERM is teardown. */
static void first_failure(void)
{
    static const struct act acts[][MAXR] = {
        { { 7, 5000, 9, 0 }, { 0, RUN, 9, 0 }, { 5, 0, 0, 0 } } };
    struct job j;

    if (job_init(&j, 3) != 0)
        return;
    is_int(run_script(&j, acts, 1, -1), 5,
           "two failures: the first in time counts");
    ok(exited(&F.ended[0][0], 9) && exited(&F.ended[0][1], 9),
       "  the others exited 9 on SIGTERM: not failures of their own");
    ok(said_line("rank 2 (host localhost, pid ")[0] &&
       !said_line("rank 0 (")[0], "  the line names rank 2 alone");
    job_free(&j);
}

/* Rank 0 tells dlrun to stop (SIGTERM to its parent): passed on through
 * the launcher, and no restart follows. */
static void stop_signal(void)
{
    static const struct act acts[][MAXR] = {
        { { 0, RUN, 0, SIGTERM }, { 0, RUN, 0, 0 } } };
    struct job j;

    if (job_init(&j, 2) != 0)
        return;
    j.opt.max_restarts = 3;
    is_int(run_script(&j, acts, 1, -1), 143, "told to stop: 128 + SIGTERM");
    ok(F.nsigs >= 1 && F.sigs[0] == SIGTERM, "  passed on through signal()");
    is_int(F.starts, 1, "  not restarted");
    is_str(said_line("SIGTERM"), "SIGTERM: passed it to the 2 ranks; exit 143",
           "  said");
    job_free(&j);
}

/* The launcher hands rank 1's process back as rank 99. */
static void bad_rank(void)
{
    static const struct act acts[][MAXR] = {
        { { 0, RUN, 0, 0 }, { 3, 0, 0, 0 } } };
    struct job j;
    char want[128];

    if (job_init(&j, 2) != 0)
        return;
    is_int(run_script(&j, acts, 1, 99), 3, "a failing rank 99 of 2: its code");
    snprintf(want, sizeof want, "process %d, which the launcher called rank "
             "99 (the job has 2), ended with code 3; stopped 1 other rank",
             (int)F.ended[0][1].pid);
    is_str(said_line("process "), want, "  said as a process, not looked up");
    j.one_attempt = 1;
    run_script(&j, acts, 1, 99);
    ok(j.last.rank == -1 && WEXITSTATUS(j.last.status) == 3,
       "  not kept as the failed rank");
    job_free(&j);
}

/* A job this host cannot hold (here: open files) is refused before the
 * launcher starts anything, in one line naming the limit.  Last: the
 * hard limit lowered cannot be raised again. */
static void too_big(void)
{
    struct rlimit rl = { 400, 400 };
    char *prog[] = { "rank", NULL };
    struct job j;

    if (job_init(&j, 300) != 0)
        return;
    F.starts = 0;
    said.n = 0;
    if (!ok(setrlimit(RLIMIT_NOFILE, &rl) == 0, "open files limited to 400"))
        return;
    is_int(run_launch(&j, prog), EXIT_USAGE, "300 ranks in 400 files: exit 2");
    is_int(F.starts, 0, "  the launcher started nothing");
    ok(strstr(said_line("300 ranks on localhost"), "need about 632 open files "
              "in dlrun; the limit is 400 (ulimit -n; hard limit 400)") != NULL,
       "  one line naming the limit");
    is_int(said.n, 1, "  and nothing else");
    job_free(&j);
}

int main(void)
{
    char dir[] = "/tmp/t_launch.XXXXXX", sub[64];

    if (!ok(pipe(F.term_pipe) == 0 && mkdtemp(dir) &&
            setenv("XDG_RUNTIME_DIR", dir, 1) == 0,
            "a pipe, a runtime folder"))
        return tap_done();
    fcntl(F.term_pipe[0], F_SETFL, O_NONBLOCK);
    sigprocmask(SIG_SETMASK, NULL, &test_mask);
    unsetenv("DLRUN_BROKER");
    clock_fake(fake_now, NULL);
    say_set_sink(keep, NULL);
    restarts();
    fail_fast();
    first_failure();
    stop_signal();
    bad_rank();
    too_big();
    clock_fake(NULL, NULL);
    snprintf(sub, sizeof sub, "%s/dlrun", dir);
    rmdir(sub);
    rmdir(dir);
    return tap_done();
}
