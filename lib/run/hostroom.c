/* hostroom.c - see hostroom.h. */
#include "run/hostroom.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* A cgroup v1 "no limit" is a huge page-rounded number. */
#define CG_HUGE (1LL << 60)

void hostroom_raise_nofile(void)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

static long long rlim(rlim_t v)
{
    return v == RLIM_INFINITY ? -1 : (long long)v;
}

/* root/path's first len - 1 bytes into buf, NUL-ended (a plain read:
 * these files are small, and the check runs at every launch).  Bytes
 * read, or -1. */
static ssize_t read_text(const char *root, const char *path, char *buf,
                         size_t len)
{
    char p[4096];
    ssize_t n = -1;
    int fd;

    snprintf(p, sizeof p, "%s%s", root, path);
    if ((fd = open(p, O_RDONLY | O_CLOEXEC)) < 0)
        return -1;
    n = read(fd, buf, len - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    return n;
}

/* The first number in root/path ("max", a v1 huge number: -1), or -1. */
static long long read_num(const char *root, const char *path)
{
    char buf[64];
    long long v = -1;

    if (read_text(root, path, buf, sizeof buf) <= 0 ||
        sscanf(buf, "%lld", &v) != 1)
        return -1;
    return v >= CG_HUGE ? -1 : v;
}

/* The host's tasks now: the 4th field of /proc/loadavg, "running/all". */
static long long read_tasks(const char *root)
{
    char buf[128];
    long long all = -1;

    if (read_text(root, "/proc/loadavg", buf, sizeof buf) <= 0 ||
        sscanf(buf, "%*s %*s %*s %*d/%lld", &all) != 1)
        return -1;
    return all;
}

static long long read_mem_avail(const char *root)
{
    char buf[4096];
    const char *at;
    long long kb = -1;

    if (read_text(root, "/proc/meminfo", buf, sizeof buf) <= 0 ||
        !(at = strstr(buf, "MemAvailable:")) ||
        sscanf(at, "MemAvailable: %lld kB", &kb) != 1)
        return -1;
    return kb * 1024;
}

/* Whether this process is exempt from RLIMIT_NPROC: root, or
 * CAP_SYS_ADMIN (21) or CAP_SYS_RESOURCE (24) in CapEff. */
static int nproc_exempt(const char *root)
{
    char buf[4096];
    const char *at;
    unsigned long long cap = 0;

    if (getuid() == 0)
        return 1;
    if (read_text(root, "/proc/self/status", buf, sizeof buf) <= 0 ||
        !(at = strstr(buf, "CapEff:")) || sscanf(at, "CapEff: %llx", &cap) != 1)
        return 0;
    return (cap & (1ULL << 21 | 1ULL << 24)) != 0;
}

/* This user's tasks (what RLIMIT_NPROC counts): a process's task/ folder
 * has two links more than it has threads. */
static long long count_user_tasks(const char *root)
{
    char p[4096];
    long long n = 0;
    struct dirent *d;
    struct stat st;
    DIR *dir;

    snprintf(p, sizeof p, "%s/proc", root);
    if (!(dir = opendir(p)))
        return -1;
    while ((d = readdir(dir)))
        if (d->d_name[0] >= '1' && d->d_name[0] <= '9' &&
            snprintf(p, sizeof p, "%s/proc/%s/task", root, d->d_name) <
                (int)sizeof p &&
            stat(p, &st) == 0 && st.st_uid == getuid())
            n += st.st_nlink > 2 ? (long long)st.st_nlink - 2 : 1;
    closedir(dir);
    return n;
}

/* This process's cgroup path in the hierarchy of controller (NULL: the
 * v2 one, "0::PATH"; v1 "N:pids:PATH"), from text (/proc/self/cgroup's),
 * into path. */
static int own_cgroup(const char *text, const char *controller, char *path,
                      size_t len)
{
    const char *want = controller ? controller : "";
    size_t wl = strlen(want);

    for (const char *l = text; *l;) {
        const char *eol = l + strcspn(l, "\n");
        const char *c1 = memchr(l, ':', (size_t)(eol - l));
        const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(eol - c1 - 1))
                            : NULL;

        if (c2 && (size_t)(c2 - c1 - 1) == wl && !memcmp(c1 + 1, want, wl))
            return snprintf(path, len, "%.*s", (int)(eol - c2 - 1), c2 + 1) <
                   (int)len ? 0 : -1;
        l = *eol ? eol + 1 : eol;
    }
    return -1;
}

/* The tightest limit of the cgroup folders from base+path up to the
 * root's child (the root cgroup has no limit files): the one with the
 * least room (limit - used); its limit and use into *max and *used, its
 * path (below base) into where.  Nothing found leaves them. */
static void cg_tightest(const char *base, char *path, const char *max_file,
                        const char *used_file, long long *max,
                        long long *used, char *where, size_t wlen)
{
    char f[4096];
    char *slash;
    long long m, u;

    while (path[0] == '/' && path[1]) {
        snprintf(f, sizeof f, "%s/%s", path, max_file);
        m = read_num(base, f);
        snprintf(f, sizeof f, "%s/%s", path, used_file);
        u = m >= 0 ? read_num(base, f) : -1;
        if (m >= 0 && u >= 0 && (*max < 0 || m - u < *max - *used)) {
            *max = m;
            *used = u;
            snprintf(where, wlen, "%s", path);
        }
        slash = strrchr(path, '/');
        slash[slash == path] = '\0';   /* "/a" becomes "/", the root */
    }
}

/* The cgroup limits on processes and memory, v2 and v1. */
static void read_cgroups(struct hostroom *h, const char *root)
{
    char base[4096], path[2048], text[4096];

    if (read_text(root, "/proc/self/cgroup", text, sizeof text) <= 0)
        return;
    snprintf(base, sizeof base, "%s/sys/fs/cgroup", root);
    if (own_cgroup(text, NULL, path, sizeof path) == 0) {
        cg_tightest(base, path, "pids.max", "pids.current", &h->cg_pids_max,
                    &h->cg_pids_used, h->cg_pids, sizeof h->cg_pids);
        own_cgroup(text, NULL, path, sizeof path);
        cg_tightest(base, path, "memory.max", "memory.current", &h->cg_mem_max,
                    &h->cg_mem_used, h->cg_mem, sizeof h->cg_mem);
    }
    snprintf(base, sizeof base, "%s/sys/fs/cgroup/pids", root);
    if (own_cgroup(text, "pids", path, sizeof path) == 0)
        cg_tightest(base, path, "pids.max", "pids.current", &h->cg_pids_max,
                    &h->cg_pids_used, h->cg_pids, sizeof h->cg_pids);
    snprintf(base, sizeof base, "%s/sys/fs/cgroup/memory", root);
    if (own_cgroup(text, "memory", path, sizeof path) == 0)
        cg_tightest(base, path, "memory.limit_in_bytes",
                    "memory.usage_in_bytes", &h->cg_mem_max, &h->cg_mem_used,
                    h->cg_mem, sizeof h->cg_mem);
}

void hostroom_read(struct hostroom *h, const char *root, long long nprocs)
{
    struct rlimit rl;

    *h = (struct hostroom){ .nofile = -1, .nofile_hard = -1, .nproc = -1,
                            .nproc_used = -1, .cg_pids_max = -1,
                            .cg_mem_max = -1 };
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        h->nofile = rlim(rl.rlim_cur);
        h->nofile_hard = rlim(rl.rlim_max);
    }
    if (getrlimit(RLIMIT_NPROC, &rl) == 0 && !nproc_exempt(root))
        h->nproc = rlim(rl.rlim_cur);
    /* a walk of /proc costs about a millisecond: only near the limit */
    if (h->nproc >= 0 && nprocs * 4 >= h->nproc)
        h->nproc_used = count_user_tasks(root);
    h->pid_max = read_num(root, "/proc/sys/kernel/pid_max");
    h->threads_max = read_num(root, "/proc/sys/kernel/threads-max");
    h->tasks = read_tasks(root);
    h->mem_avail = read_mem_avail(root);
    read_cgroups(h, root);
}

/* v with a comma every three digits ("100,000"), into buf; returns buf. */
static const char *num(char *buf, size_t len, long long v)
{
    char d[32];
    int n = snprintf(d, sizeof d, "%lld", v < 0 ? 0 : v), k = 0;

    for (int i = 0; i < n && k + 2 < (int)len; i++) {
        if (i > 0 && (n - i) % 3 == 0)
            buf[k++] = ',';
        buf[k++] = d[i];
    }
    buf[k] = '\0';
    return buf;
}

/* Room left under a limit with used of it taken (used < 0: unknown, 0). */
static long long room(long long limit, long long used)
{
    return limit - (used > 0 ? used : 0);
}

static int check_procs(const struct hostroom *h, const struct hostroom_need *n,
                       struct err *err)
{
    char a[32], b[32], c[32];
    const char *fix = "or start fewer ranks on this host";

    num(a, sizeof a, n->procs);
    if (h->pid_max > 0 && n->procs > room(h->pid_max, h->tasks))
        return err_set(err, "%s need %s processes; this host has %s process "
                       "ids (kernel.pid_max), %s in use: raise it (sysctl "
                       "kernel.pid_max) %s", n->who, a,
                       num(b, sizeof b, h->pid_max),
                       num(c, sizeof c, h->tasks), fix);
    if (h->threads_max > 0 && n->procs > room(h->threads_max, h->tasks))
        return err_set(err, "%s need %s processes; this host allows %s tasks "
                       "(kernel.threads-max), %s in use: raise it (sysctl "
                       "kernel.threads-max) %s", n->who, a,
                       num(b, sizeof b, h->threads_max),
                       num(c, sizeof c, h->tasks), fix);
    if (h->cg_pids_max >= 0 && n->procs > room(h->cg_pids_max, h->cg_pids_used))
        return err_set(err, "%s need %s processes; the cgroup %s allows %s "
                       "(pids.max), %s in use: ask for a larger allocation %s",
                       n->who, a, h->cg_pids, num(b, sizeof b, h->cg_pids_max),
                       num(c, sizeof c, h->cg_pids_used), fix);
    if (h->nproc >= 0 && n->procs > room(h->nproc, h->nproc_used))
        return err_set(err, "%s need %s processes; your limit is %s (ulimit "
                       "-u), %s in use: raise it (ulimit -u; nproc in "
                       "/etc/security/limits.conf) %s", n->who, a,
                       num(b, sizeof b, h->nproc),
                       num(c, sizeof c, h->nproc_used), fix);
    return 0;
}

static int check_files(const struct hostroom *h, const struct hostroom_need *n,
                       struct err *err)
{
    char a[32], b[32], c[32];

    if (h->nofile < 0 || n->fds <= h->nofile)
        return 0;
    return err_set(err, "%s need about %s open files in dlrun; the limit is "
                   "%s (ulimit -n; hard limit %s): raise the hard limit "
                   "(nofile in /etc/security/limits.conf) or start fewer "
                   "ranks on this host", n->who, num(a, sizeof a, n->fds),
                   num(b, sizeof b, h->nofile),
                   h->nofile_hard < 0 ? "unlimited" :
                   num(c, sizeof c, h->nofile_hard));
}

static int check_memory(const struct hostroom *h,
                        const struct hostroom_need *n, struct err *err)
{
    char a[32], b[32];
    long long mib = (n->bytes + (1 << 20) - 1) >> 20;

    num(a, sizeof a, mib);
    if (h->cg_mem_max >= 0 && n->bytes > room(h->cg_mem_max, h->cg_mem_used))
        return err_set(err, "%s need about %s MiB of memory; the cgroup %s "
                       "has %s MiB left (its memory limit): ask for more "
                       "memory or start fewer ranks on this host", n->who, a,
                       h->cg_mem, num(b, sizeof b, room(h->cg_mem_max,
                       h->cg_mem_used) >> 20));
    if (h->mem_avail >= 0 && n->bytes > h->mem_avail)
        return err_set(err, "%s need about %s MiB of memory; this host has "
                       "%s MiB available (MemAvailable in /proc/meminfo): "
                       "start fewer ranks on this host", n->who, a,
                       num(b, sizeof b, h->mem_avail >> 20));
    return 0;
}

int hostroom_check(const struct hostroom *h, const struct hostroom_need *n,
                   struct err *err)
{
    if (check_procs(h, n, err) < 0 || check_files(h, n, err) < 0 ||
        check_memory(h, n, err) < 0)
        return -1;
    return 0;
}
