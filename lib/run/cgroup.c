/* cgroup.c - see cgroup.h. */
#include "run/cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/readall.h"

/* The next line of text (borrowed) into line, NUL-terminated without
 * its newline (a longer one cut); the text after it, or NULL at the end. */
static const char *next_line(const char *text, char *line, size_t len)
{
    size_t n = strcspn(text, "\n");

    if (!*text)
        return NULL;
    snprintf(line, len, "%.*s", (int)(n < len ? n : len - 1), text);
    return text[n] ? text + n + 1 : text + n;
}

/* "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS... - FSTYPE SOURCE OPTS" */
int cgroup_parse_mount(const char *mountinfo, char *mnt, size_t mlen,
                       char *root, size_t rlen)
{
    char line[4096], r[1024], m[1024];
    const char *p = mountinfo;

    while ((p = next_line(p, line, sizeof line))) {
        const char *dash = strstr(line, " - ");
        if (!dash || strncmp(dash + 3, "cgroup2 ", 8) != 0 ||
            sscanf(line, "%*s %*s %*s %1023s %1023s", r, m) != 2)
            continue;
        if (snprintf(mnt, mlen, "%s", m) < (int)mlen &&
            snprintf(root, rlen, "%s", r) < (int)rlen)
            return 0;
    }
    return -1;
}

int cgroup_parse_own(const char *text, char *path, size_t len)
{
    char line[4096];
    const char *p = text;

    while ((p = next_line(p, line, sizeof line)))
        if (strncmp(line, "0::", 3) == 0 && line[3] == '/')
            return snprintf(path, len, "%s", line + 3) < (int)len ? 0 : -1;
    return -1;
}

int cgroup_dir_of(const char *mountinfo, const char *proc_cgroup, char *dir,
                  size_t len, struct err *err)
{
    char mnt[1024], root[1024], path[2048];
    size_t rl;

    if (cgroup_parse_mount(mountinfo, mnt, sizeof mnt, root, sizeof root) < 0)
        return err_set(err, "no cgroup v2 file system is mounted");
    if (cgroup_parse_own(proc_cgroup, path, sizeof path) < 0)
        return err_set(err, "this process is in no cgroup v2 cgroup");
    /* a mount of a subtree (a container's) shows paths below its root */
    rl = strcmp(root, "/") == 0 ? 0 : strlen(root);
    if (rl && (strncmp(path, root, rl) != 0 ||
               (path[rl] != '/' && path[rl] != '\0')))
        return err_set(err, "this process's cgroup %s is outside the mounted "
                       "tree %s", path, root);
    if (snprintf(dir, len, "%s%s", mnt,
                 strcmp(path + rl, "/") ? path + rl : "") >= (int)len)
        return err_set(err, "cgroup path too long");
    return 0;
}

/* Is path euid's and writable by it?  0, or -1 with err. */
static int ours(const char *path, uid_t euid, struct err *err)
{
    struct stat st;

    if (stat(path, &st) < 0)
        return err_set(err, "%s: %s", path, strerror(errno));
    if (euid != 0 && (st.st_uid != euid || !(st.st_mode & S_IWUSR)))
        return err_set(err, "%s is not yours to change (owner uid %u; "
                       "not a cgroup delegated to you)", path,
                       (unsigned)st.st_uid);
    return 0;
}

int cgroup_usable(const char *dir, uid_t euid, struct err *err)
{
    char procs[4200];
    struct stat st;

    if (snprintf(procs, sizeof procs, "%s/cgroup.procs", dir) >=
        (int)sizeof procs)
        return err_set(err, "cgroup path too long");
    if (stat(procs, &st) < 0)
        return err_set(err, "%s is not a cgroup (no cgroup.procs)", dir);
    return ours(dir, euid, err) < 0 || ours(procs, euid, err) < 0 ? -1 : 0;
}

int cgroup_job_create_in(const char *base, char *dir, size_t len,
                         struct err *err)
{
    static unsigned seq;
    char procs[4200];
    struct stat st;

    for (;;) {
        if (snprintf(dir, len, "%s/dlrun-%d-%u", base, (int)getpid(),
                     seq++) >= (int)len)
            return err_set(err, "cgroup path too long");
        if (mkdir(dir, 0755) == 0)
            break;
        if (errno != EEXIST)
            return err_set(err, "cannot make cgroup %s: %s", dir,
                           strerror(errno));
    }
    /* the kernel fills a new cgroup's folder; a plain folder stays empty */
    if (snprintf(procs, sizeof procs, "%s/cgroup.procs", dir) >=
            (int)sizeof procs || stat(procs, &st) < 0) {
        rmdir(dir);
        return err_set(err, "%s is not a cgroup (no cgroup.procs)", dir);
    }
    return 0;
}

/* The whole text of a /proc file (caller frees), or NULL. */
static char *read_text(const char *path)
{
    FILE *f = fopen(path, "re");
    size_t len;
    char *text = f ? read_all(f, 16 << 20, &len) : NULL;

    if (f)
        fclose(f);
    return text;
}

static int remove_tree(const char *dir, int depth);

int cgroup_probe(char *base, size_t len, struct err *err)
{
    char dir[4096], *slash;

    if (cgroup_job_create(dir, sizeof dir, err) < 0)
        return -1;
    rmdir(dir);
    slash = strrchr(dir, '/');
    *slash = '\0';
    if (snprintf(base, len, "%s", dir) >= (int)len)
        return err_set(err, "cgroup path too long");
    return 0;
}

int cgroup_stale(const char *name, int pid_alive, const char *events,
                 time_t mtime, time_t now)
{
    int pid = 0, n = 0;
    unsigned seq;

    if (sscanf(name, "dlrun-%d-%u%n", &pid, &seq, &n) != 2 ||
        name[n] != '\0' || pid <= 0)
        return 0;
    return !pid_alive && events && strstr(events, "populated 0") &&
           now - mtime > CGROUP_STALE_S;
}

int cgroup_sweep(const char *base)
{
    DIR *d = opendir(base);
    struct dirent *e;
    char path[4096], events[4200];
    int swept = 0;

    while (d && (e = readdir(d))) {
        struct stat st;
        char *text;
        int pid = 0, alive;
        if (e->d_type != DT_DIR || strncmp(e->d_name, "dlrun-", 6) != 0 ||
            snprintf(path, sizeof path, "%s/%s", base, e->d_name) >=
                (int)sizeof path || stat(path, &st) < 0)
            continue;
        sscanf(e->d_name, "dlrun-%d", &pid);
        alive = pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
        snprintf(events, sizeof events, "%s/cgroup.events", path);
        text = read_text(events);
        if (cgroup_stale(e->d_name, alive, text, st.st_mtime, time(NULL)) &&
            remove_tree(path, 16) == 0)
            swept++;
        free(text);
    }
    if (d)
        closedir(d);
    return swept;
}

int cgroup_job_create(char *dir, size_t len, struct err *err)
{
    char *mountinfo = read_text("/proc/self/mountinfo");
    char *own = read_text("/proc/self/cgroup");
    char base[3072];
    int rc = -1;

    if (!mountinfo || !own)
        err_set(err, "cannot read /proc/self: %s", strerror(errno));
    else if (cgroup_dir_of(mountinfo, own, base, sizeof base, err) == 0 &&
             cgroup_usable(base, geteuid(), err) == 0) {
        cgroup_sweep(base);
        rc = cgroup_job_create_in(base, dir, len, err);
    }
    free(mountinfo);
    free(own);
    return rc;
}

/* Open dir/name for writing. */
static int open_in(const char *dir, const char *name, int flags)
{
    char path[4096];

    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return open(path, flags | O_CLOEXEC);
}

int cgroup_procs_open(const char *dir, struct err *err)
{
    int fd = open_in(dir, "cgroup.procs", O_WRONLY);

    if (fd < 0)
        err_set(err, "cannot open %s/cgroup.procs: %s", dir, strerror(errno));
    return fd;
}

/* SIGKILL each process listed in dir's cgroup.procs and below (depth
 * bounds the recursion); how many were signalled, -1 when dir has no
 * cgroup.procs. */
static int kill_listed(const char *dir, int depth)
{
    char path[4096], *text, *p, *end;
    DIR *d;
    struct dirent *e;
    int killed = 0;

    if (snprintf(path, sizeof path, "%s/cgroup.procs", dir) >=
            (int)sizeof path || !(text = read_text(path)))
        return -1;
    for (p = text; *p; p = end) {
        long pid = strtol(p, &end, 10);
        if (end == p)
            break;
        if (pid > 1 && pid != getpid() && kill((pid_t)pid, SIGKILL) == 0)
            killed++;
    }
    free(text);
    d = depth > 0 ? opendir(dir) : NULL;
    while (d && (e = readdir(d))) {
        int n;
        if (e->d_type != DT_DIR || e->d_name[0] == '.' ||
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >=
                (int)sizeof path)
            continue;
        n = kill_listed(path, depth - 1);
        killed += n > 0 ? n : 0;
    }
    if (d)
        closedir(d);
    return killed;
}

int cgroup_kill(const char *dir)
{
    struct timespec tick = { 0, 10 * 1000 * 1000 };
    int fd = open_in(dir, "cgroup.kill", O_WRONLY), rc = -1, n;

    if (fd >= 0) {
        if (write(fd, "1", 1) == 1)
            rc = 0;
        close(fd);
        return rc;
    }
    if (errno != ENOENT)
        return -1;
    /* before Linux 5.14: the listed ones, until a pass finds none alive */
    if ((n = kill_listed(dir, 16)) < 0) {
        errno = ENOENT;
        return -1;
    }
    for (int pass = 0; n > 0 && pass < 100; pass++) {
        nanosleep(&tick, NULL);
        n = kill_listed(dir, 16);
    }
    return 0;
}

/* 1 while dir's cgroup.events says "populated 1", 0 after, -1 on error. */
static int populated(const char *dir)
{
    int fd = open_in(dir, "cgroup.events", O_RDONLY);
    char buf[256];
    ssize_t n;

    if (fd < 0)
        return -1;
    n = pread(fd, buf, sizeof buf - 1, 0);
    close(fd);
    if (n < 0)
        return -1;
    buf[n] = '\0';
    return strstr(buf, "populated 1") != NULL;
}

/* rmdir dir after the folders below it (a dlrun run by a rank made its
 * own job's folder in ours, and was killed before removing it); depth
 * bounds the recursion. */
static int remove_tree(const char *dir, int depth)
{
    DIR *d = depth > 0 ? opendir(dir) : NULL;
    struct dirent *e;
    char sub[4096];

    while (d && (e = readdir(d)))
        if (e->d_type == DT_DIR && e->d_name[0] != '.' &&
            snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name) <
                (int)sizeof sub)
            remove_tree(sub, depth - 1);
    if (d)
        closedir(d);
    return rmdir(dir);
}

int cgroup_remove(const char *dir, int wait_ms)
{
    struct timespec tick = { 0, 10 * 1000 * 1000 };

    /* the last process killed leaves a moment later: poll, 10 ms apart */
    for (int waited = 0; populated(dir) == 1 && waited < wait_ms;
         waited += 10)
        nanosleep(&tick, NULL);
    return remove_tree(dir, 16);
}
