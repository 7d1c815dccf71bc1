/* t_jobrun.c - a prepared job run the way its plan says: this host's
 * ranks (real ones: true and false through the local launcher; a failure
 * said with its rank and code), per-task mode becoming its rank (a
 * program that is not there: 127; --stall-timeout warned as unwatched),
 * and --wdir (entered, --output-dir and --summary kept where dlrun
 * started; a folder that is not there refused). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "job/job.h"
#include "util/say.h"
#include "where/hostfile.h"
#include "tap.h"

static struct {
    int n;
    char line[8][512];
} said;

static void keep(void *ctx, const char *line)
{
    (void)ctx;
    if (said.n < 8)
        snprintf(said.line[said.n++], sizeof said.line[0], "%s", line);
}

static int job_on(struct job *j, int n)
{
    struct err err = { "" };
    char hosts[32];

    memset(j, 0, sizeof *j);
    snprintf(hosts, sizeof hosts, "localhost:%d", n);
    j->opt.bind.bind = BIND_NONE;
    j->opt.bind.gpu = GPU_BIND_NONE;
    j->opt.mpi = MPI_NONE;
    j->opt.kill_timeout_ms = 10000;
    if (hosts_parse(hosts, &j->alloc, &err) == 0 &&
        plan_build(&j->alloc, &j->opt.plan, &j->plan, &err) == 0) {
        j->alloc.source = "hosts";
        return job_prepare_planned(j, 1);
    }
    printf("# %s\n", err.msg);
    return -1;
}

static void here(void)
{
    char *yes[] = { "true", NULL }, *no[] = { "false", NULL };
    sigset_t mask;
    struct job j;

    sigprocmask(SIG_SETMASK, NULL, &mask);
    if (!ok(job_on(&j, 2) == 0, "a job of 2 ranks here"))
        return;
    said.n = 0;
    is_int(job_run(&j, yes), 0, "true on this host: 0");
    is_int(said.n, 0, "  nothing said");
    job_free(&j);
    sigprocmask(SIG_SETMASK, &mask, NULL);  /* as dlrun's next run would */
    if (job_on(&j, 1) != 0)
        return;
    is_int(job_run(&j, no), 1, "false: 1");
    ok(said.n >= 1 && strncmp(said.line[0], "rank 0 (host localhost, pid ",
                              28) == 0 &&
       strstr(said.line[0], ") exited with code 1; stopped 0 other ranks"),
       "  said, with its rank and code");
    job_free(&j);
    sigprocmask(SIG_SETMASK, &mask, NULL);
}

static void per_task(void)
{
    char *prog[] = { "/nonexistent/dlrun-test-prog", NULL };
    struct job j;

    if (job_on(&j, 2) != 0)
        return;
    j.plan.per_task = 1;
    j.plan.self = 0;
    j.opt.stall_timeout_ms = 1000;
    said.n = 0;
    is_int(job_run(&j, prog), EXIT_NOTFOUND, "per-task, no such program: 127");
    ok(said.n == 2 && strncmp(said.line[0], "warning: --stall-timeout is not "
                              "watched", 39) == 0 &&
       strncmp(said.line[1], "rank 0: ", 8) == 0,
       "  --stall-timeout warned, then the rank's failure");
    job_free(&j);
}

static void wdir(const char *dir)
{
    char start[4096], now[4096], want[4200];
    struct job j = { 0 };

    if (!getcwd(start, sizeof start))
        return;
    is_int(job_enter_wdir(&j), 0, "no --wdir: 0");
    j.opt.wdir = dir;
    j.opt.output_dir = "out";
    j.opt.summary = "/abs/s.json";
    is_int(job_enter_wdir(&j), 0, "--wdir DIR: 0");
    ok(getcwd(now, sizeof now) && strcmp(now, dir) == 0, "  entered");
    snprintf(want, sizeof want, "%s/out", start);
    is_str(j.opt.output_dir, want, "  --output-dir kept where dlrun started");
    is_str(j.opt.summary, "/abs/s.json", "  an absolute --summary as given");
    j.opt.wdir = "/nonexistent/w";
    said.n = 0;
    is_int(job_enter_wdir(&j), EXIT_USAGE, "a --wdir that is not there: 2");
    is_str(said.line[0], "--wdir /nonexistent/w: cannot enter it: No such "
           "file or directory", "  said");
    options_free(&j.opt);
    if (chdir(start) < 0)
        printf("# cannot go back to %s\n", start);
}

int main(void)
{
    char dir[] = "/tmp/t_jobrun.XXXXXX", sub[64];

    say_set_sink(keep, NULL);
    if (!ok(mkdtemp(dir) && setenv("XDG_RUNTIME_DIR", dir, 1) == 0,
            "a runtime folder"))
        return tap_done();
    unsetenv("DLRUN_BROKER");
    here();
    per_task();
    wdir(dir);
    snprintf(sub, sizeof sub, "%s/dlrun", dir);
    rmdir(sub);
    rmdir(dir);
    return tap_done();
}
