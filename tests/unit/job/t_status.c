/* t_status.c - what a running job keeps for `dlrun status`, on a fake
 * clock in a runtime folder of the test's: no watch for per-task ranks;
 * a one-node dlrun's file appears 300 ms after the start (a job of a few
 * milliseconds costs none), then once a second, with the header, each
 * rank's line and the age of its last output line; it goes with the
 * watch.  The head's file names its broker and token until it ends, and
 * with --spares the spares held and the nodes excluded. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "job/status.h"
#include "place/nodeset.h"
#include "observe/jobstatus.h"
#include "run/output.h"
#include "run/supervise.h"
#include "util/clock.h"
#include "where/hostfile.h"
#include "tap.h"

static long now_ms;

static long fake_now(void *ctx)
{
    (void)ctx;
    return now_ms;
}

static const char *slurp(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, len - 1, f) : 0;

    buf[n] = '\0';
    if (f)
        fclose(f);
    return buf;
}

/* The rank lines of a status file: after its "cmd" line. */
static int rank_lines(const char *text, struct js_rank *r)
{
    const char *cmd = strstr(text, "\ncmd ");
    const char *p = cmd ? strchr(cmd + 1, '\n') : NULL;
    struct err err = { "" };
    int n = 0;

    if (!p || js_parse_ranks(p + 1, strlen(p + 1), r, 4, &n, &err) < 0)
        return -1;
    return n;
}

static void one_node(struct job *j, const char *file)
{
    int ranks[1] = { 0 };
    struct sv_rank sr = { .rank = 0, .pid = getpid(), .running = 1 };
    struct supervise sv = { .ranks = &sr, .n = 1 };
    struct output_opts oo = { 0 };
    struct status_watch *w;
    struct js_rank r[4];
    char buf[4096], head[128];

    j->plan.per_task = 1;
    ok(!job_status_create(j, ranks, 1), "per-task ranks: no watch");
    j->plan.per_task = 0;
    now_ms = 1000;
    w = job_status_create(j, ranks, 1);
    if (!ok(w != NULL, "a one-node dlrun: a watch"))
        return;
    job_status_output(w, &oo);
    oo.tap(oo.tap_ctx, 0, 1, "hi\n", 3);
    job_status_watch(w, &sv, NULL);
    now_ms = 1200;
    is_int(sv.extra(sv.extra_ctx, 0), 100, "at 200 ms: the first sample due in 100");
    ok(access(file, F_OK) < 0, "  no file yet");
    now_ms = 1300;
    is_int(sv.extra(sv.extra_ctx, 0), 1000, "at 300 ms: sampled, the next in 1 s");
    snprintf(head, sizeof head, "dlrun-status 1\npid %d\nstarted 1.000\n"
             "nodes 1\nranks 1\nrestarts 1\ncmd ", (int)getpid());
    ok(strncmp(slurp(file, buf, sizeof buf), head, strlen(head)) == 0,
       "  the file's header");
    ok(rank_lines(buf, r) == 1 && r[0].rank == 0 && r[0].pid == getpid() &&
       r[0].restarts == 1 && r[0].out_age_s > 0.29 && r[0].out_age_s < 0.31 &&
       strcmp(r[0].host, "localhost") == 0,
       "  the rank's line: host, pid, restarts, output 0.3 s ago");
    job_status_free(w);
    ok(access(file, F_OK) < 0, "the file goes with the watch");
}

static void head(struct job *j, const char *file)
{
    char buf[4096];

    status_head_begin(j, "10.0.0.1:4000", "abcd");
    ok(strstr(slurp(file, buf, sizeof buf), "\nbroker 10.0.0.1:4000\n"
              "token abcd\n") != NULL, "the head's file: its broker, token");
    status_head_steps(NULL);    /* no rates yet: the same file again */
    ok(strstr(slurp(file, buf, sizeof buf), "\nbroker 10.0.0.1:4000\n"
              "token abcd\n") != NULL, "  written again with the step rates");
    status_head_end();
    ok(access(file, F_OK) < 0, "  gone at its end");
    status_head_steps(NULL);
    ok(access(file, F_OK) < 0, "  and not written again after it");
}

/* --spares: n3 held, then n2 excluded and n3 in its place. */
static void head_spares(const char *file)
{
    struct job j = { 0 };
    struct nodeset ns;
    struct err err = { "" };
    const char *spare = NULL;
    char buf[4096];

    if (!ok(hosts_parse("n1:1,n2:1,n3:1", &j.alloc, &err) == 0 &&
            nodeset_init(&ns, &j.alloc, 1, &err) == 0 &&
            plan_build(&j.alloc, &j.opt.plan, &j.plan, &err) == 0,
            "a job of n1, n2 with n3 held"))
        return;
    j.nodeset = &ns;
    status_head_begin(&j, "10.0.0.1:4000", "abcd");
    ok(strstr(slurp(file, buf, sizeof buf), "\nspares n3\nbroker ") != NULL,
       "--spares: the spare held");
    ok(!strstr(buf, "excluded"), "  nothing excluded yet");
    status_head_end();
    nodeset_exclude(&ns, "n2", "no heartbeat for 10 s (link down?)", 1,
                    100.5, &spare, &err);
    status_head_begin(&j, "10.0.0.1:4001", "abcd");
    ok(strstr(slurp(file, buf, sizeof buf), "\nspares -\nexcluded 1 100.500 "
              "n2 n3 no heartbeat for 10 s (link down?)\nbroker ") != NULL,
       "  the next attempt's: none held, n2 excluded, n3 in its place");
    status_head_end();
    plan_free(&j.plan);
    nodeset_free(&ns);
    alloc_free(&j.alloc);
}

int main(void)
{
    char dir[] = "/tmp/t_status.XXXXXX", file[200], sub[64];
    struct job j = { 0 };
    struct err err = { "" };

    clock_fake(fake_now, NULL);
    if (!ok(mkdtemp(dir) && setenv("XDG_RUNTIME_DIR", dir, 1) == 0 &&
            hosts_parse("localhost:1", &j.alloc, &err) == 0 &&
            plan_build(&j.alloc, &j.opt.plan, &j.plan, &err) == 0,
            "a runtime folder, a plan of one rank"))
        return tap_done();
    j.restart = 1;
    snprintf(sub, sizeof sub, "%s/dlrun", dir);
    snprintf(file, sizeof file, "%s/job-%d", sub, (int)getpid());
    one_node(&j, file);
    head(&j, file);
    head_spares(file);
    plan_free(&j.plan);
    alloc_free(&j.alloc);
    rmdir(sub);
    rmdir(dir);
    clock_fake(NULL, NULL);
    return tap_done();
}
