/* jobstatus.c - the runtime folder, rank lines and their sampling for
 * `dlrun status`. */
#include "observe/jobstatus.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "observe/procstat.h"
#include "util/clock.h"

void js_put_rank(FILE *f, const struct js_rank *r)
{
    fprintf(f, "%d %s %d %c %.1f %lld %d %.1f", r->rank,
            r->host[0] ? r->host : "?", r->pid, r->state ? r->state : '?',
            r->cpu_pct, r->rss_kb, r->restarts, r->out_age_s);
    if (r->has_gpu)
        fprintf(f, " %.1f %lld", r->gpu_pct, r->gpu_mem_kb);
    fputc('\n', f);
}

/* The next blank-separated word of [*p, end) into w (room n). */
static int word(const char **p, const char *end, char *w, size_t n)
{
    size_t k = 0;

    while (*p < end && **p == ' ')
        (*p)++;
    while (*p < end && **p != ' ') {
        unsigned char c = (unsigned char)**p;
        if (k + 1 >= n || c < 0x21 || c == 0x7f)
            return -1;
        w[k++] = (char)c;
        (*p)++;
    }
    w[k] = '\0';
    return k ? 0 : -1;
}

static int num(const char *w, double lo, double hi, double *v)
{
    char *end = NULL;

    errno = 0;
    *v = strtod(w, &end);
    return errno || *end || !(*v >= lo && *v <= hi) ? -1 : 0;
}

static int parse_line(const char *p, const char *end, struct js_rank *r)
{
    char w[10][JS_HOST];
    double v[10] = { 0 };
    int nw = 0;

    while (nw < 10 && word(&p, end, w[nw], sizeof w[nw]) == 0)
        nw++;
    /* 8 words, or 10 with GPU use (a node whose dlrun has NVML) */
    if ((nw != 8 && nw != 10) || p != end || strlen(w[3]) != 1 ||
        num(w[0], 0, JS_MAX_RANKS - 1, &v[0]) < 0 ||
        num(w[2], 0, INT_MAX, &v[2]) < 0 || num(w[4], -1, 1e7, &v[4]) < 0 ||
        num(w[5], -1, 1e15, &v[5]) < 0 || num(w[6], 0, INT_MAX, &v[6]) < 0 ||
        num(w[7], -1, 1e10, &v[7]) < 0 || (nw == 10 &&
        (num(w[8], -1, 100, &v[8]) < 0 || num(w[9], 0, 1e15, &v[9]) < 0)))
        return -1;
    r->rank = (int)v[0];
    snprintf(r->host, JS_HOST, "%s", w[1]);
    r->pid = (int)v[2];
    r->state = w[3][0];
    r->cpu_pct = v[4];
    r->rss_kb = (long long)v[5];
    r->restarts = (int)v[6];
    r->out_age_s = v[7];
    r->has_gpu = nw == 10;
    r->gpu_pct = r->has_gpu ? v[8] : -1;
    r->gpu_mem_kb = r->has_gpu ? (long long)v[9] : -1;
    return 0;
}

int js_parse_ranks(const char *buf, size_t len, struct js_rank *out, int max,
                   int *n, struct err *err)
{
    const char *p = buf, *end = buf + len;

    *n = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        if (le > p) {
            if (*n >= max)
                return err_set(err, "status: more than %d ranks", max);
            if (parse_line(p, le, &out[*n]) < 0)
                return err_set(err, "status: bad rank line %d", *n + 1);
            (*n)++;
        }
        p = le + 1;
    }
    return 0;
}

/* The resident set of pid from /proc/PID/statm, in KiB; -1 unknown. */
static long long rss_kb(pid_t pid)
{
    char path[64];
    long long size = 0, res = -1;
    FILE *f;

    snprintf(path, sizeof path, "/proc/%d/statm", (int)pid);
    f = fopen(path, "r");
    if (f && fscanf(f, "%lld %lld", &size, &res) != 2)
        res = -1;
    if (f)
        fclose(f);
    return res < 0 ? -1 : res * (sysconf(_SC_PAGESIZE) / 1024);
}

int js_sample(pid_t pid, const unsigned long long *group,
              unsigned long long *ticks, long *at_ms, struct js_rank *r)
{
    struct procstat st;
    unsigned long long now_ticks = 0;
    long now = clock_ms();

    if (procstat_read(pid, &st) < 0)
        return -1;
    r->state = st.state;
    r->rss_kb = rss_kb(pid);
    /* the group: workers a rank forked (DataLoader) count as its own */
    if (group)
        now_ticks = *group;
    else if (procstat_groups_cpu(&pid, 1, &now_ticks, NULL) < 0)
        now_ticks = st.utime + st.stime;
    r->cpu_pct = *at_ms && now > *at_ms && now_ticks >= *ticks ?
        100.0 * (double)(now_ticks - *ticks) / (double)procstat_hz() /
        ((double)(now - *at_ms) / 1000.0) : -1;
    *ticks = now_ticks;
    *at_ms = now;
    return 0;
}

int js_write(const char *dir, const char *name, const char *text, size_t len,
             struct err *err)
{
    char tmp[4096], path[4096];
    int fd, rc = -1;

    snprintf(tmp, sizeof tmp, "%s/.%s.tmp", dir, name);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
              0600);
    if (fd < 0)
        return err_set(err, "cannot write %s: %s", tmp, strerror(errno));
    if (write(fd, text, len) == (ssize_t)len && close(fd) == 0) {
        fd = -1;
        rc = rename(tmp, path) == 0 ? 0 : -1;
    }
    if (fd >= 0)
        close(fd);
    if (rc < 0) {
        unlink(tmp);
        return err_set(err, "cannot write %s: %s", path, strerror(errno));
    }
    return 0;
}
