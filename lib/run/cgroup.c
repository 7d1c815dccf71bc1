/* cgroup.c - see cgroup.h. */
#include "run/cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The cgroup v2 mount (/sys/fs/cgroup, or /sys/fs/cgroup/unified on a
 * hybrid system) and the root of the tree it shows, from mountinfo
 * ("ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS... - FSTYPE SOURCE OPTS").
 * 0, or -1 when there is none. */
static int cgroup2_mount(char *mnt, size_t mlen, char *root, size_t rlen)
{
    FILE *f = fopen("/proc/self/mountinfo", "re");
    char line[4096], r[1024], m[1024];
    int rc = -1;

    if (!f)
        return -1;
    while (rc < 0 && fgets(line, sizeof line, f)) {
        const char *dash = strstr(line, " - ");
        if (!dash || strncmp(dash + 3, "cgroup2 ", 8) != 0 ||
            sscanf(line, "%*s %*s %*s %1023s %1023s", r, m) != 2)
            continue;
        if (snprintf(mnt, mlen, "%s", m) < (int)mlen &&
            snprintf(root, rlen, "%s", r) < (int)rlen)
            rc = 0;
    }
    fclose(f);
    return rc;
}

/* This process's cgroup v2 path ("0::PATH" in /proc/self/cgroup). */
static int own_cgroup(char *path, size_t len)
{
    FILE *f = fopen("/proc/self/cgroup", "re");
    char line[4096];
    int rc = -1;

    if (!f)
        return -1;
    while (rc < 0 && fgets(line, sizeof line, f))
        if (strncmp(line, "0::", 3) == 0) {
            line[strcspn(line, "\n")] = '\0';
            rc = snprintf(path, len, "%s", line + 3) < (int)len ? 0 : -1;
        }
    fclose(f);
    return rc;
}

/* The folder of this process's cgroup in the mounted tree, into dir. */
static int own_cgroup_dir(char *dir, size_t len, struct err *err)
{
    char mnt[1024], root[1024], path[2048];
    size_t rl;

    if (cgroup2_mount(mnt, sizeof mnt, root, sizeof root) < 0)
        return err_set(err, "no cgroup v2 file system is mounted");
    if (own_cgroup(path, sizeof path) < 0)
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

int cgroup_job_create(char *dir, size_t len, struct err *err)
{
    static unsigned seq;
    char base[3072];
    struct stat st;

    if (own_cgroup_dir(base, sizeof base, err) < 0)
        return -1;
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
    if (strlen(dir) + sizeof "/cgroup.kill" > sizeof base)
        return err_set(err, "cgroup path too long");
    snprintf(base, sizeof base, "%s/cgroup.kill", dir);
    if (stat(base, &st) < 0) {     /* before Linux 5.14 */
        rmdir(dir);
        return err_set(err, "cgroup %s has no cgroup.kill (Linux < 5.14)",
                       dir);
    }
    return 0;
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

int cgroup_kill(const char *dir)
{
    int fd = open_in(dir, "cgroup.kill", O_WRONLY), rc = -1;

    if (fd < 0)
        return -1;
    if (write(fd, "1", 1) == 1)
        rc = 0;
    close(fd);
    return rc;
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
