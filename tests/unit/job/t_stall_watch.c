/* t_stall_watch.c - a stall verdict driven in-process with a fake clock:
 * two real processes that do nothing (no CPU, no output, no progress) for
 * the --stall-timeout window are reported, ended and named in the last
 * line (EXIT_STALL); ranks whose output goes on are not; SIGPWR's report
 * ends nothing. */
#include "job/stall_watch.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "job/job.h"
#include "run/output.h"
#include "util/clock.h"
#include "util/say.h"
#include "tap.h"

#define NR 2

struct said {
    int n, stall_lines;
    char last[4096], first[4096], all[65536];
};

static void keep(void *ctx, const char *line)
{
    struct said *s = ctx;

    if (s->n++ == 0)
        snprintf(s->first, sizeof s->first, "%s", line);
    snprintf(s->last, sizeof s->last, "%s", line);
    if (strlen(s->all) + strlen(line) + 2 < sizeof s->all) {
        strcat(s->all, line);
        strcat(s->all, "\n");
    }
    s->stall_lines += strncmp(line, "stalled ", 8) == 0;
}

static long fake_now(void *ctx)
{
    return *(long *)ctx;
}

/* A rank: a process of its own group that waits for a signal. */
static pid_t idle_rank(void)
{
    pid_t pid = fork();

    if (pid == 0) {
        setpgid(0, 0);
        for (;;)
            pause();
    }
    if (pid > 0)
        setpgid(pid, pid);
    return pid;
}

struct fixture {
    struct job j;
    struct plan_node nodes[1];
    int rank_node[NR], ranks[NR];
    struct sv_rank r[NR];
    struct supervise sv;
};

static void setup(struct fixture *f, long timeout_ms)
{
    memset(f, 0, sizeof *f);
    f->j.opt.stall_timeout_ms = timeout_ms;
    f->nodes[0].host = "node1";
    f->nodes[0].nranks = NR;
    f->j.plan = (struct plan){ .nranks = NR, .nodes = f->nodes, .nnodes = 1,
                               .rank_node = f->rank_node };
    for (int i = 0; i < NR; i++) {
        f->ranks[i] = i;
        f->r[i] = (struct sv_rank){ .rank = i, .pid = idle_rank(),
                                    .running = 1 };
    }
    f->sv = (struct supervise){ .ranks = f->r, .n = NR, .failed = -1,
                                .kill_timeout_ms = 1000, .extra_fd = -1 };
}

/* The ranks still running are ended and reaped. */
static void reap(struct fixture *f)
{
    for (int i = 0; i < NR; i++) {
        if (!f->r[i].running)
            continue;
        kill(f->r[i].pid, SIGKILL);
        waitpid(f->r[i].pid, &f->r[i].status, 0);
        f->r[i].running = 0;
    }
}

/* Run sv's hook every half second of fake time from *now to until;
 * stops early when a rank ended (reaped, as supervise_run would). */
static void drive(struct fixture *f, long *now, long until)
{
    for (; *now <= until; *now += 500) {
        f->sv.extra(f->sv.extra_ctx, 0);
        usleep(20000);      /* real time for a signalled rank to end */
        for (int i = 0; i < NR; i++)
            if (f->r[i].running &&
                waitpid(f->r[i].pid, &f->r[i].status, WNOHANG) > 0)
                f->r[i].running = 0;
    }
}

static void stalls(struct said *s, long *now)
{
    struct fixture f;
    struct stall_watch *w;
    int killed = 0;

    setup(&f, 10000);
    w = job_stall_create(&f.j, f.ranks, NR);
    ok(w != NULL, "a watch when --stall-timeout is on");
    job_stall_watch(w, &f.sv, NULL);
    ok(f.sv.extra != NULL, "in sv's periodic hook");
    drive(&f, now, 109500);
    is_int(s->n, 0, "quiet for 9.5 s of a 10 s window: nothing said");
    ok(f.r[0].running && f.r[1].running, "and nothing ended");
    drive(&f, now, 112000);
    ok(strstr(s->first, "no rank wrote output, used CPU or reported progress "
              "for 10 s (--stall-timeout); the ranks:") == s->first,
       "10 s quiet: the report begins");
    is_int(f.sv.failed, 0, "the job counts as failed");
    for (int i = 0; i < NR; i++)
        killed += !f.r[i].running && WIFSIGNALED(f.r[i].status) &&
                  WTERMSIG(f.r[i].status) == SIGTERM;
    is_int(killed, NR, "both ranks ended with SIGTERM");
    reap(&f);
    is_int(job_stall_finish(w), EXIT_STALL, "the outcome is EXIT_STALL");
    is_int(s->stall_lines, 1, "one stall line");
    ok(strncmp(s->last, "stalled 10 s: ranks 0, 1 (node1) in ", 36) == 0,
       "the last line names the ranks, their host and where they waited");
    job_stall_free(w);
}

static void progresses(struct said *s, long *now)
{
    struct fixture f;
    struct output_opts oo = { 0 };
    struct stall_watch *w;

    setup(&f, 10000);
    w = job_stall_create(&f.j, f.ranks, NR);
    job_stall_output(w, &oo);
    ok(oo.tap != NULL, "its tap in the output engine's options");
    job_stall_watch(w, &f.sv, NULL);
    for (long end = *now + 30000; *now <= end; *now += 500) {
        if (*now % 2000 == 0)
            oo.tap(oo.tap_ctx, 1, 1, "step\n", 5);
        f.sv.extra(f.sv.extra_ctx, 0);
    }
    is_int(s->n, 0, "a rank that writes a line every 2 s: nothing said");
    ok(f.r[0].running && f.r[1].running, "in 30 s nothing ended");
    kill(getpid(), SIGPWR);
    *now += 500;
    f.sv.extra(f.sv.extra_ctx, 0);
    ok(strstr(s->first, "report asked for (SIGPWR): ranks quiet for ") ==
       s->first, "SIGPWR: a report on demand");
    ok(strstr(s->all, "  rank 1 (host node1, pid ") &&
       strstr(s->all, " s ago: \"step\"\n"),
       "with each rank's line: rank 1's last output");
    ok(f.r[0].running && f.r[1].running, "that ends nothing");
    reap(&f);
    s->n = 0;
    is_int(job_stall_finish(w), 0, "no stall: 0");
    is_int(s->n, 0, "and no line");
    job_stall_free(w);
}

int main(void)
{
    struct said s = { 0 };
    long now = 100000;
    struct job off = { 0 };
    sigset_t set;

    sigemptyset(&set);
    job_stall_block(&off, &set);
    ok(!sigismember(&set, SIGPWR), "off: SIGPWR not blocked");
    ok(job_stall_create(&off, (int[]){ 0 }, 1) == NULL, "off: no watch");
    off.opt.stall_timeout_ms = 1000;
    job_stall_block(&off, &set);
    ok(sigismember(&set, SIGPWR), "on: SIGPWR blocked (a report on demand)");
    sigprocmask(SIG_BLOCK, &set, NULL);
    /* no debugger: a native rank's stacks are the kernel's, at once */
    setenv("PATH", "/nonexistent", 1);
    say_set_sink(keep, &s);
    clock_fake(fake_now, &now);
    stalls(&s, &now);
    memset(&s, 0, sizeof s);
    progresses(&s, &now);
    clock_fake(NULL, NULL);
    ok(job_stall_finish(NULL) == 0, "NULL: no stall");
    job_stall_free(NULL);
    return tap_done();
}
