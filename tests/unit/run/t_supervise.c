/* t_supervise.c - the supervisor with real children (sh), each in its own
 * process group as proc_spawn starts ranks: all good is 0; the first
 * failure stops the others (SIGTERM, then SIGKILL at the kill timeout for
 * one that ignores it) and its code is dlrun's; keep_going lets the rest
 * finish; a signal to dlrun reaches every rank and its code comes back;
 * SIGINT as SIGTERM; the forward hook (a second SIGINT becomes SIGKILL);
 * supervise_exit_code.  Ordering comes from pipes and the extra hook,
 * never from sleeping; alarm() is only a hang guard. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run/supervise.h"
#include "tap.h"

#define MAXR 4

/* Start sh -c script in a group of its own with the parent's signals
 * unblocked, as a rank; stdout to out_fd when >= 0. */
static pid_t spawn(const char *script, int out_fd, int in_fd)
{
    pid_t pid = fork();

    if (pid == 0) {
        sigset_t none;
        setpgid(0, 0);
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        if (out_fd >= 0)
            dup2(out_fd, 1);
        if (in_fd >= 0)
            dup2(in_fd, 0);
        execl("/bin/sh", "sh", "-c", script, (char *)NULL);
        _exit(127);
    }
    if (pid > 0)
        setpgid(pid, pid);
    return pid;
}

/* Rank i running script. */
static void rank(struct sv_rank *r, int i, const char *script)
{
    *r = (struct sv_rank){ .rank = i, .running = 1,
                           .pid = spawn(script, -1, -1) };
}

/* A rank that prints "ready" once its traps are set: read before going on,
 * so that no signal can come before them. */
static void rank_ready(struct sv_rank *r, int i, const char *script)
{
    int p[2];
    char buf[8] = "";

    if (pipe(p) < 0)
        return;
    *r = (struct sv_rank){ .rank = i, .running = 1,
                           .pid = spawn(script, p[1], -1) };
    close(p[1]);
    if (read(p[0], buf, 5) != 5 || memcmp(buf, "ready", 5) != 0)
        printf("# rank %d did not get ready\n", i);
    close(p[0]);
}

static struct supervise sv_of(struct sv_rank *r, int n)
{
    return (struct supervise){ .ranks = r, .n = n, .kill_timeout_ms = 60000,
                               .extra_fd = -1 };
}

static int term_by(const struct sv_rank *r, int sig)
{
    return !r->running && WIFSIGNALED(r->status) && WTERMSIG(r->status) == sig;
}

static int exited(const struct sv_rank *r, int code)
{
    return !r->running && WIFEXITED(r->status) && WEXITSTATUS(r->status) == code;
}

static void all_good(void)
{
    struct sv_rank r[3];
    struct supervise sv;

    for (int i = 0; i < 3; i++)
        rank(&r[i], i, "exit 0");
    sv = sv_of(r, 3);
    is_int(supervise_run(&sv), 0, "all ranks exit 0: 0");
    is_int(sv.failed, -1, "no failure");
    ok(exited(&r[0], 0) && exited(&r[1], 0) && exited(&r[2], 0),
       "every rank reaped with its status");
    ok(r[0].end > 0 && r[2].end > 0, "end times set");
}

static void fail_fast(void)
{
    struct sv_rank r[3];
    struct supervise sv;

    rank(&r[0], 0, "exec sleep 600");
    rank(&r[1], 1, "exec sleep 600");
    rank(&r[2], 2, "exit 3");
    sv = sv_of(r, 3);
    is_int(supervise_run(&sv), 3, "a rank exits 3: dlrun's code is 3");
    is_int(sv.failed, 2, "failed names the rank");
    is_int(sv.stopped, 2, "the two still running were stopped");
    ok(term_by(&r[0], SIGTERM) && term_by(&r[1], SIGTERM),
       "the others ended by SIGTERM");
    is_int(sv.signal_received, 0, "no signal was received");
}

/* An idle helper (a spare node's agent) fails nothing when it ends and
 * holds nothing up while it runs. */
static void idle_helpers(void)
{
    struct sv_rank r[3];
    struct supervise sv;

    rank(&r[0], 0, "sleep 0.2; exit 0");
    rank(&r[1], -5, "exit 7");
    rank(&r[2], -6, "exec sleep 600");
    r[1].idle = r[2].idle = 1;
    sv = sv_of(r, 3);
    is_int(supervise_run(&sv), 0, "an idle helper's exit 7: the job's 0");
    is_int(sv.failed, -1, "  no failure");
    ok(exited(&r[1], 7), "  its end is kept");
    ok(r[2].running, "  one still running is not waited for");
    kill(r[2].pid, SIGKILL);
    waitpid(r[2].pid, NULL, 0);
}

static void kill_timeout(void)
{
    struct sv_rank r[2];
    struct supervise sv;

    rank_ready(&r[0], 0, "trap '' TERM; echo ready; exec sleep 600");
    rank(&r[1], 1, "kill -SEGV $$");
    sv = sv_of(r, 2);
    sv.kill_timeout_ms = 100;
    is_int(supervise_run(&sv), 128 + SIGSEGV,
           "a rank killed by SIGSEGV: 128+11");
    ok(term_by(&r[0], SIGKILL), "one that ignores SIGTERM: SIGKILL at the timeout");
}

/* keep_going's gate: rank 1 ends (EOF on its stdin) only once rank 0 was
 * reaped, so rank 0 is the first failure whatever the scheduler does. */
struct gate {
    struct sv_rank *r;
    int fd;
};

static int open_gate(void *ctx, int readable)
{
    struct gate *g = ctx;

    (void)readable;
    if (g->fd >= 0 && !g->r[0].running) {
        close(g->fd);
        g->fd = -1;
    }
    return g->fd >= 0 ? 10 : -1;
}

static void keep_going(void)
{
    int p[2];
    struct sv_rank r[3];
    struct supervise sv;
    struct gate g = { r, -1 };

    if (pipe2(p, O_CLOEXEC) < 0)    /* only rank 1's stdin stays open */
        return;
    rank(&r[0], 0, "exit 3");
    r[1] = (struct sv_rank){ .rank = 1, .running = 1,
                             .pid = spawn("read x; exit 4", -1, p[0]) };
    close(p[0]);
    g.fd = p[1];
    rank(&r[2], 2, "exit 0");
    sv = sv_of(r, 3);
    sv.keep_going = 1;
    sv.extra = open_gate;
    sv.extra_ctx = &g;
    is_int(supervise_run(&sv), 3, "keep_going: the first failure's code");
    is_int(sv.failed, 0, "the first failure");
    is_int(sv.stopped, 0, "nobody stopped");
    ok(exited(&r[1], 4) && exited(&r[2], 0), "the others ran to their own end");
}

static void signals(void)
{
    struct sv_rank r[2];
    struct supervise sv;

    rank_ready(&r[0], 0, "trap 'exit 9' TERM; echo ready; while :; do sleep 1; done");
    rank(&r[1], 1, "exec sleep 600");
    sv = sv_of(r, 2);
    kill(getpid(), SIGTERM);        /* blocked: waits for the loop's signalfd */
    is_int(supervise_run(&sv), 9, "SIGTERM to dlrun: the first non-zero code");
    is_int(sv.signal_received, SIGTERM, "signal_received");
    ok(exited(&r[0], 9), "the rank's trap ran");
    ok(term_by(&r[1], SIGTERM), "the other rank got SIGTERM");
}

/* The forward hook's record, and the extra hook that raises the signals
 * one wait after another. */
struct script {
    int sigs[8], nsig, step;
    struct sv_rank *r;
};

static void forward(void *ctx, int sig)
{
    struct script *s = ctx;

    if (s->nsig < 8)
        s->sigs[s->nsig++] = sig;
    if (sig == SIGKILL)         /* what the head's agents would do */
        killpg(s->r->pid, SIGKILL);
}

static int extra(void *ctx, int readable)
{
    static const int raise_at[] = { SIGUSR1, SIGINT, SIGINT };
    struct script *s = ctx;

    (void)readable;
    /* the next signal once the last one was forwarded */
    if (s->step < 3 && s->nsig == s->step)
        kill(getpid(), raise_at[s->step++]);
    return s->step < 3 ? 0 : -1;
}

static void forward_hook(void)
{
    struct sv_rank r;
    struct supervise sv;
    struct script s = { .r = &r };

    rank(&r, 0, "exec sleep 600");
    sv = sv_of(&r, 1);
    sv.forward = forward;
    sv.forward_ctx = &s;
    sv.extra = extra;
    sv.extra_ctx = &s;
    is_int(supervise_run(&sv), 128 + SIGKILL, "forwarded kill: 137");
    is_int(s.nsig, 3, "three signals forwarded");
    ok(s.sigs[0] == SIGUSR1 && s.sigs[1] == SIGINT && s.sigs[2] == SIGKILL,
       "USR1, INT, then a second INT within a second as KILL");
    ok(term_by(&r, SIGKILL), "the rank saw none of them itself but the kill");
}

static void exit_codes(void)
{
    is_int(supervise_exit_code(0), 0, "status 0: 0");
    is_int(supervise_exit_code(3 << 8), 3, "exit 3: 3");
    is_int(supervise_exit_code(255 << 8), 255, "exit 255: 255");
    is_int(supervise_exit_code(SIGKILL), 137, "SIGKILL: 137");
    is_int(supervise_exit_code(SIGTERM | 0x80), 143, "SIGTERM with core: 143");
}

/* Two hooks chained with supervise_hook: the last put runs, calls the
 * one it displaced first, and the sooner of both waits is supervise's. */
struct hook_log {
    char order[8];
    int wait;
    struct sv_hook prev;
};

static int hook_a(void *ctx, int readable)
{
    struct hook_log *h = ctx;

    (void)readable;
    strcat(h->order, "a");
    return h->wait;
}

static int hook_b(void *ctx, int readable)
{
    struct hook_log *h = ctx;
    int inner = supervise_hook_call(&h->prev, readable);

    strcat(((struct hook_log *)h->prev.ctx)->order, "b");
    return supervise_sooner(inner, h->wait);
}

static void hooks(void)
{
    struct supervise sv = { .extra_fd = 7 };
    struct hook_log a = { .wait = 40 }, b = { .wait = 25 };

    supervise_hook(&sv, hook_a, &a, &a.prev);
    ok(sv.extra == hook_a && sv.extra_ctx == &a && !a.prev.fn,
       "hook: the first one, nothing displaced");
    is_int(sv.extra_fd, -1, "  no broker's fd: a timer alone");
    supervise_hook(&sv, hook_b, &b, &b.prev);
    ok(sv.extra == hook_b && b.prev.fn == hook_a, "  the second displaces it");
    is_int(sv.extra(sv.extra_ctx, 0), 25, "the sooner wait of both");
    is_str(a.order, "ab", "  the displaced hook runs first");
    is_int(supervise_hook_call(&a.prev, 0), -1, "no hook: -1");
    is_int(supervise_sooner(-1, 30), 30, "sooner: none and 30: 30");
    is_int(supervise_sooner(20, -1), 20, "  20 and none: 20");
    is_int(supervise_sooner(-1, -1), -1, "  none and none: none");
    is_int(supervise_sooner(0, 5), 0, "  0 (now) and 5: 0");
}

int main(void)
{
    sigset_t set;

    alarm(300);         /* a hang guard, far above the few ms this takes */
    supervise_signals(&set);
    ok(sigismember(&set, SIGCHLD) && sigismember(&set, SIGTERM) &&
       sigismember(&set, SIGINT) && sigismember(&set, SIGUSR1) &&
       !sigismember(&set, SIGKILL), "the forwarded signals and SIGCHLD");
    sigprocmask(SIG_BLOCK, &set, NULL);
    exit_codes();
    all_good();
    fail_fast();
    idle_helpers();
    kill_timeout();
    keep_going();
    signals();
    forward_hook();
    hooks();
    return tap_done();
}
