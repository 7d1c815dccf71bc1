/* t_jobstatus.c - `dlrun status`'s pieces (lib/observe/jobstatus.c): rank lines
 * out and back, what the decoder refuses, the runtime folder's checks,
 * the atomic file and a sample of a real process. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "observe/jobstatus.h"
#include "util/safefile.h"
#include "tap.h"

static void lines(void)
{
    struct js_rank r = { .rank = 7, .pid = 1234, .state = 'R',
                         .cpu_pct = 99.5, .rss_kb = 2048, .restarts = 1,
                         .out_age_s = 3.5 }, d[2];
    struct err err = { "" };
    char *text = NULL;
    size_t len = 0;
    int n = 0;
    FILE *m = open_memstream(&text, &len);

    snprintf(r.host, JS_HOST, "node2");
    js_put_rank(m, &r);
    r.rank = 8;
    r.cpu_pct = -1;
    r.out_age_s = -1;
    js_put_rank(m, &r);
    fclose(m);
    is_str(text, "7 node2 1234 R 99.5 2048 1 3.5\n8 node2 1234 R -1.0 2048 1 -1.0\n",
           "two rank lines");
    ok(js_parse_ranks(text, len, d, 2, &n, &err) == 0 && n == 2, "read back");
    is_int(d[0].rank, 7, "  rank");
    is_str(d[0].host, "node2", "  host");
    is_int(d[0].pid, 1234, "  pid");
    ok(d[0].state == 'R' && d[0].cpu_pct == 99.5 && d[0].rss_kb == 2048 &&
       d[0].restarts == 1 && d[0].out_age_s == 3.5, "  the numbers");
    ok(d[1].cpu_pct == -1 && d[1].out_age_s == -1, "  unknown stays -1");
    ok(js_parse_ranks(text, len, d, 1, &n, &err) < 0 &&
       strstr(err.msg, "more than 1"), "more lines than room: refused");
    free(text);
}

/* GPU use: two more fields, only for a rank whose GPUs NVML read */
static void gpu_lines(void)
{
    struct js_rank r = { .rank = 1, .pid = 9, .state = 'S', .cpu_pct = 1,
                         .rss_kb = 4, .out_age_s = -1, .has_gpu = 1,
                         .gpu_pct = 81, .gpu_mem_kb = 3072000 }, d[1];
    struct err err = { "" };
    char *text = NULL;
    size_t len = 0;
    int n = 0;
    FILE *m = open_memstream(&text, &len);

    snprintf(r.host, JS_HOST, "n1");
    js_put_rank(m, &r);
    fclose(m);
    is_str(text, "1 n1 9 S 1.0 4 0 -1.0 81.0 3072000\n", "a rank line with GPU use");
    ok(js_parse_ranks(text, len, d, 1, &n, &err) == 0 && n == 1 &&
       d[0].has_gpu && d[0].gpu_pct == 81 && d[0].gpu_mem_kb == 3072000,
       "  read back");
    ok(js_parse_ranks("1 n1 9 S 1 4 0 -1\n", 18, d, 1, &n, &err) == 0 &&
       !d[0].has_gpu, "  a line without: no GPU");
    free(text);
}

static void refused(void)
{
    static const char *const bad[] = {
        "1 h 2 R 0 0 0\n",              /* a field short */
        "1 h 2 R 0 0 0 0 9\n",          /* one too many */
        "-1 h 2 R 0 0 0 0\n",           /* a negative rank */
        "70000 h 2 R 0 0 0 0\n",        /* a rank out of range */
        "1 h 2 RS 0 0 0 0\n",           /* a state of two letters */
        "1 h 2 R nan 0 0 0\n",          /* not a number */
        "1 h\x01x 2 R 0 0 0 0\n",       /* a control byte in the host */
        "1 h 2 R 0 0 0 0x\n",
        "1 h 2 R 0 0 0 0 101 0\n",     /* GPU % above 100 */
        "1 h 2 R 0 0 0 0 50 0 1\n",    /* GPU use and one more */
    };
    struct js_rank d[2];
    struct err err = { "" };
    int n;

    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char what[80];
        snprintf(what, sizeof what, "refused: bad line %zu", i);
        ok(js_parse_ranks(bad[i], strlen(bad[i]), d, 2, &n, &err) < 0, what);
    }
    ok(js_parse_ranks("", 0, d, 2, &n, &err) == 0 && n == 0,
       "no lines: no ranks");
}

static void folder(void)
{
    char tmpl[] = "/tmp/t_jobstatus.XXXXXX", dir[4096], path[4200];
    struct err err = { "" };
    struct stat st;
    char *tmp = mkdtemp(tmpl);

    setenv("XDG_RUNTIME_DIR", tmp, 1);
    ok(safefile_rundir(dir, sizeof dir, &err) == 0, "the runtime folder is made");
    ok(stat(dir, &st) == 0 && (st.st_mode & 0777) == 0700, "  mode 0700");
    ok(js_write(dir, "job-1", "x\n", 2, &err) == 0, "a file written");
    snprintf(path, sizeof path, "%s/job-1", dir);
    ok(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600 && st.st_size == 2,
       "  mode 0600, whole");
    unlink(path);
    chmod(dir, 0755);
    ok(safefile_rundir(dir, sizeof dir, &err) < 0 && strstr(err.msg, "chmod 700"),
       "a folder others can read: refused");
    rmdir(dir);
    snprintf(path, sizeof path, "%s/dlrun", tmp);
    ok(symlink("/tmp", path) == 0 && safefile_rundir(dir, sizeof dir, &err) == 0 &&
       strcmp(dir, path) != 0, "a link instead of the folder: not used, the next one is");
    unlink(path);
    rmdir(tmp);
    unsetenv("XDG_RUNTIME_DIR");
}

static void sample(void)
{
    struct js_rank r = { 0 };
    unsigned long long ticks = 0;
    long at = 0;
    pid_t pid = fork();

    if (pid == 0) {
        setpgid(0, 0);
        for (;;)
            ;
    }
    setpgid(pid, pid);
    ok(js_sample(pid, NULL, &ticks, &at, &r) == 0 && r.cpu_pct == -1,
       "first sample: no CPU % yet");
    ok(r.rss_kb > 0, "  its RSS");
    sleep(1);
    ok(js_sample(pid, NULL, &ticks, &at, &r) == 0 && r.cpu_pct > 0,
       "second sample: a busy process uses CPU");
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    ok(js_sample(pid, NULL, &ticks, &at, &r) < 0, "gone: -1");
}

int main(void)
{
    lines();
    gpu_lines();
    refused();
    folder();
    sample();
    return tap_done();
}
