/* t_jobscan.c - `dlrun status`'s reading of the runtime folder
 * (lib/observe/jobscan.c): a running job's header and rank lines, the file
 * of a dlrun that is gone removed, other files left alone, bad rank lines
 * noted, a folder that cannot be read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "observe/jobscan.h"
#include "tap.h"

struct seen {
    int n;
    struct js_job job;      /* the last one, its ranks copied */
    struct js_rank r[2];
};

static void keep(void *ctx, const struct js_job *job)
{
    struct seen *s = ctx;

    s->n++;
    s->job = *job;
    memcpy(s->r, job->r, (size_t)(job->n < 2 ? job->n : 2) * sizeof *s->r);
    s->job.r = NULL;
}

static void put(const char *dir, const char *name, const char *text)
{
    char path[512];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* A pid that no process has now. */
static int dead_pid(void)
{
    pid_t p = fork();

    if (p == 0)
        _exit(0);
    waitpid(p, NULL, 0);
    return (int)p;
}

static void header(void)
{
    struct js_job j = { 0 };
    const char text[] = "dlrun-status 1\npid 42\nstarted 100.5\nnodes 2\n"
                        "ranks 8\nrestarts 1\ncmd dlrun -np 8 a b\n"
                        "broker 10.0.0.1:5000\ntoken ab12\n0 h 1 R";
    size_t at = jobscan_header(text, sizeof text - 1, &j);

    ok(j.pid == 42 && j.nodes == 2 && j.ranks == 8 && j.restarts == 1 &&
       j.started == 100.5, "the header's numbers");
    is_str(j.cmd, "dlrun -np 8 a b", "its command");
    is_str(j.broker, "10.0.0.1:5000", "its broker");
    is_str(j.token, "ab12", "its token");
    is_str(text + at, "0 h 1 R", "the rank lines begin after it");
}

/* The step rates (job/steprate.c writes them after the header). */
static void steps(void)
{
    struct js_job j = { 0 };
    const char text[] = "dlrun-status 1\npid 42\ncmd dlrun a\n"
                        "stepmedian 5.000 node\n"
                        "steps n3 2.100 2.381 8-11\nsteps n1 5.000 1.000 0-3\n"
                        "steps bad\n0 h 1 R";
    size_t at = jobscan_header(text, sizeof text - 1, &j);

    is_int(j.nsteps, 2, "two step-rate rows (a bad one skipped)");
    ok(j.step_median == 5.0, "the median");
    is_str(j.step_unit, "node", "per node");
    is_str(j.steps[0].host, "n3", "the slowest first: its host");
    is_str(j.steps[0].ranks, "8-11", "  its ranks");
    ok(j.steps[0].rate == 2.1 && j.steps[0].ratio == 2.381, "  its rate and ratio");
    is_str(text + at, "0 h 1 R", "the rank lines begin after them");
}

/* A head's --spares lines (job/status.c writes them after the header). */
static void spares(void)
{
    struct js_job j = { 0 };
    const char text[] = "dlrun-status 1\npid 42\ncmd dlrun a\nspares n5,n6\n"
                        "excluded 1 100.500 n2 n4 no heartbeat for 10 s "
                        "(link down?)\nexcluded 2 130.250 n3 - rank 0 was "
                        "killed by signal 9 (Killed)\nexcluded x\n"
                        "broker 10.0.0.1:5000\n0 h 1 R";
    struct js_job none = { 0 };
    const char text2[] = "pid 42\nspares -\n";
    size_t at = jobscan_header(text, sizeof text - 1, &j);

    ok(j.spares, "a job with --spares");
    is_str(j.spares_held, "n5,n6", "  the spares held");
    is_int(j.nexcl, 2, "  two nodes excluded (a bad line skipped)");
    is_str(j.excl[0].host, "n2", "  the first: its host");
    is_str(j.excl[0].spare, "n4", "    the spare in its place");
    ok(j.excl[0].attempt == 1 && j.excl[0].time == 100.5, "    attempt, time");
    is_str(j.excl[0].reason, "no heartbeat for 10 s (link down?)",
           "    its reason, whole");
    is_str(j.excl[1].spare, "", "  the second: no spare took its place");
    is_str(j.excl[1].reason, "rank 0 was killed by signal 9 (Killed)",
           "    its reason");
    is_str(j.broker, "10.0.0.1:5000", "  the lines after them read");
    is_str(text + at, "0 h 1 R", "  the rank lines begin after them");
    jobscan_header(text2, sizeof text2 - 1, &none);
    ok(none.spares && none.spares_held[0] == '\0' && none.nexcl == 0,
       "\"spares -\": none held");
}

int main(void)
{
    char dir[] = "/tmp/t_jobscan.XXXXXX", text[512], *line = NULL;
    struct seen s = { 0 };
    struct js_rank r = { .rank = 3, .pid = 77, .state = 'S', .cpu_pct = 1.5,
                         .rss_kb = 4096, .out_age_s = 2 };
    struct err err = { "" };
    size_t len = 0;
    FILE *m;
    int n = -1;

    header();
    steps();
    spares();
    if (!mkdtemp(dir))
        return ok(0, "mkdtemp"), tap_done();
    snprintf(r.host, JS_HOST, "node1");
    m = open_memstream(&line, &len);
    js_put_rank(m, &r);
    fclose(m);
    snprintf(text, sizeof text, "pid %d\nstarted 1\nnodes 1\nranks 1\n"
             "cmd ./train\n%s", (int)getpid(), line);
    put(dir, "job-1", text);
    snprintf(text, sizeof text, "pid %d\nnodes 1\n", dead_pid());
    put(dir, "job-2", text);
    put(dir, "other", "pid 1\n");
    is_int(jobscan_each(dir, keep, &s, &n, &err), 0, "the folder is read");
    is_int(n, 1, "one running job");
    is_int(s.n, 1, "shown once");
    is_str(s.job.cmd, "./train", "with its command");
    ok(s.job.n == 1 && s.r[0].rank == 3 && s.r[0].pid == 77 &&
       strcmp(s.r[0].host, "node1") == 0, "and its rank line");
    is_str(s.job.note, "", "nothing unread");
    snprintf(text, sizeof text, "%s/job-2", dir);
    ok(access(text, F_OK) != 0, "a gone dlrun's file is removed");
    snprintf(text, sizeof text, "%s/other", dir);
    ok(access(text, F_OK) == 0, "another file is left alone");
    snprintf(text, sizeof text, "pid %d\nnodes 1\nnot a rank line\n",
             (int)getpid());
    put(dir, "job-1", text);
    s.n = 0;
    jobscan_each(dir, keep, &s, &n, &err);
    ok(s.n == 1 && s.job.n == 0 && strstr(s.job.note, "job-1: "),
       "a bad rank line is noted, with the file's name");
    snprintf(text, sizeof text, "rm -rf %s", dir);
    if (system(text) != 0)
        ok(0, "cleanup");
    is_int(jobscan_each(dir, keep, &s, &n, &err), -1, "no folder: -1");
    ok(strstr(err.msg, "cannot read") != NULL, "saying it cannot read it");
    free(line);
    return tap_done();
}
