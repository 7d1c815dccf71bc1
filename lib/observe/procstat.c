/* procstat.c - see procstat.h. */
#include "observe/procstat.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One small /proc file into buf (len bytes, NUL-terminated); its length
 * or -1. */
static ssize_t read_small(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n;

    if (fd < 0)
        return -1;
    n = read(fd, buf, len - 1);
    close(fd);
    if (n < 0)
        return -1;
    buf[n] = '\0';
    return n;
}

/* The next space-separated number after *p; -1 when there is none. */
static int next_num(const char **p, const char *end, unsigned long long *v)
{
    const char *s = *p;
    unsigned long long x = 0;
    int neg = 0, digits = 0;

    while (s < end && *s == ' ')
        s++;
    if (s < end && *s == '-') {
        neg = 1;
        s++;
    }
    for (; s < end && *s >= '0' && *s <= '9'; s++, digits++)
        x = x * 10 + (unsigned long long)(*s - '0');
    if (!digits || (s < end && *s != ' ' && *s != '\n'))
        return -1;
    *p = s;
    *v = neg ? 0 : x;
    return 0;
}

int procstat_parse(const char *text, size_t len, struct procstat *out)
{
    const char *end = text + len, *lp = memchr(text, '(', len), *rp = NULL;
    unsigned long long f[17];
    size_t n;

    memset(out, 0, sizeof *out);
    for (const char *q = end; q > text; q--)
        if (q[-1] == ')') {
            rp = q - 1;
            break;
        }
    if (!lp || !rp || rp < lp || rp + 3 > end ||
        rp[1] != ' ' || sscanf(text, "%d", &out->pid) != 1)
        return -1;
    n = (size_t)(rp - lp - 1);
    if (n >= sizeof out->comm)
        n = sizeof out->comm - 1;
    memcpy(out->comm, lp + 1, n);
    out->state = rp[2];
    /* fields 4 (ppid) .. 17 (cstime) follow the state */
    const char *p = rp + 3;
    for (int i = 0; i < 14; i++)
        if (next_num(&p, end, &f[i]) < 0)
            return -1;
    out->ppid = (int)f[0];
    out->pgrp = (int)f[1];
    out->utime = f[10];
    out->stime = f[11];
    out->cutime = f[12];
    out->cstime = f[13];
    return 0;
}

int procstat_read(pid_t pid, struct procstat *out)
{
    char path[64], buf[1024];
    ssize_t n;

    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    n = read_small(path, buf, sizeof buf);
    return n < 0 ? -1 : procstat_parse(buf, (size_t)n, out);
}

int procstat_wchan(pid_t pid, char *buf, size_t len)
{
    char path[64];

    snprintf(path, sizeof path, "/proc/%d/wchan", (int)pid);
    if (read_small(path, buf, len) < 0)
        return -1;
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

/* Call fn(ctx, st) for every process /proc shows; -1 when it cannot. */
static int each_proc(void (*fn)(void *ctx, const struct procstat *st),
                     void *ctx)
{
    DIR *d = opendir("/proc");
    struct dirent *e;

    if (!d)
        return -1;
    while ((e = readdir(d))) {
        struct procstat st;
        char *endp;
        long pid = strtol(e->d_name, &endp, 10);
        if (!*endp && pid > 0 && procstat_read((pid_t)pid, &st) == 0)
            fn(ctx, &st);
    }
    closedir(d);
    return 0;
}

struct groups {
    const pid_t *pgrps;
    int n;
    unsigned long long *ticks;
    int *nproc;
    pid_t python;           /* procstat_group_python's answer */
};

static void add_cpu(void *ctx, const struct procstat *st)
{
    struct groups *g = ctx;

    for (int i = 0; i < g->n; i++) {
        if (g->pgrps[i] != st->pgrp)
            continue;
        g->ticks[i] += st->utime + st->stime + st->cutime + st->cstime;
        if (g->nproc)
            g->nproc[i]++;
    }
}

int procstat_groups_cpu(const pid_t *pgrps, int n, unsigned long long *ticks,
                        int *nproc)
{
    struct groups g = { pgrps, n, ticks, nproc, 0 };

    for (int i = 0; i < n; i++) {
        ticks[i] = 0;
        if (nproc)
            nproc[i] = 0;
    }
    return each_proc(add_cpu, &g);
}

static void find_python(void *ctx, const struct procstat *st)
{
    struct groups *g = ctx;

    if (g->python || st->pgrp != g->pgrps[0] || !procstat_is_python(st->pid))
        return;
    if (st->pid == g->pgrps[0] || !procstat_is_python(st->ppid))
        g->python = st->pid;
}

struct leaf {
    pid_t pgrp;
    int n;
    pid_t pid[256], ppid[256];      /* the group's members, the first 256 */
};

static void add_member(void *ctx, const struct procstat *st)
{
    struct leaf *l = ctx;

    if (st->pgrp == l->pgrp && l->n < 256) {
        l->pid[l->n] = st->pid;
        l->ppid[l->n++] = st->ppid;
    }
}

pid_t procstat_group_leaf(pid_t pgrp)
{
    struct leaf *l = calloc(1, sizeof *l);
    pid_t best = pgrp;

    if (!l)
        return pgrp;
    l->pgrp = pgrp;
    each_proc(add_member, l);
    for (int i = 0; i < l->n; i++) {
        int parent = 0;
        for (int k = 0; k < l->n && !parent; k++)
            parent = l->ppid[k] == l->pid[i];
        if (!parent && (best == pgrp || l->pid[i] > best))
            best = l->pid[i];
    }
    free(l);
    return best;
}

pid_t procstat_group_python(pid_t pgrp)
{
    struct groups g = { &pgrp, 1, NULL, NULL, 0 };

    if (procstat_is_python(pgrp))
        return pgrp;
    each_proc(find_python, &g);
    return g.python;
}

int procstat_is_python(pid_t pid)
{
    char path[64], exe[4096];
    ssize_t n;
    const char *base;

    snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
    n = readlink(path, exe, sizeof exe - 1);
    if (n <= 0)
        return 0;
    exe[n] = '\0';
    base = strrchr(exe, '/');
    return strncmp(base ? base + 1 : exe, "python", 6) == 0;
}

long procstat_hz(void)
{
    long hz = sysconf(_SC_CLK_TCK);

    return hz > 0 ? hz : 100;
}
