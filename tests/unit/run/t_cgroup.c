/* t_cgroup.c - a cgroup v2 folder per job.  Everywhere: the decision
 * whether one may be made, from texts of /proc/self/mountinfo and
 * /proc/self/cgroup (hybrid, pure v2, a container's subtree, v1 only) and
 * a folder of ours standing in for the cgroup tree (whose files, owned by
 * whom, writable); the kill without cgroup.kill (Linux < 5.14) through the
 * cgroup.procs lists; the refusals, with a message or errno saying why.
 * Where one can be made here (root, a delegated tree): a child moved in
 * through cgroup.procs is killed with the folder's cgroup.kill and the
 * folder removed once empty. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "run/cgroup.h"
#include "tap.h"

static void refusals(void)
{
    struct err err = { "" };

    errno = 0;
    ok(cgroup_procs_open("/nonexistent/dlrun", &err) == -1 &&
       strstr(err.msg, "/nonexistent/dlrun/cgroup.procs"),
       "cgroup_procs_open of no cgroup: -1, the path named");
    errno = 0;
    ok(cgroup_kill("/nonexistent/dlrun") == -1 && errno == ENOENT,
       "cgroup_kill of no cgroup: -1, ENOENT");
    errno = 0;
    ok(cgroup_remove("/nonexistent/dlrun", 0) == -1 && errno == ENOENT,
       "cgroup_remove of no folder: -1, ENOENT");
}

static void sweep(const char *job_dir);

static void job(void)
{
    char dir[4096], sub[4200];
    struct err err = { "" };
    struct stat st;
    int fd, status = 0, p[2];
    pid_t pid;
    char c;

    if (cgroup_job_create(dir, sizeof dir, &err) < 0) {
        ok(err.msg[0] != '\0', "no cgroup here: the reason is given");
        printf("# skip the cgroup itself: %s\n", err.msg);
        return;
    }
    ok(strstr(dir, "/dlrun-") && stat(dir, &st) == 0 && S_ISDIR(st.st_mode),
       "cgroup_job_create: a dlrun-PID-N folder");
    fd = cgroup_procs_open(dir, &err);
    ok(fd >= 0, "cgroup.procs open");
    if (fd < 0 || pipe(p) < 0)
        return;
    pid = fork();
    if (pid == 0) {
        /* as a rank does before exec; then say so and hang */
        if (write(fd, "0", 1) != 1)
            _exit(3);
        close(p[0]);
        (void)write(p[1], "in", 2);
        for (;;)
            pause();
    }
    close(p[1]);
    ok(read(p[0], &c, 1) == 1, "the child moved itself in");
    close(p[0]);
    close(fd);
    ok(cgroup_remove(dir, 0) == -1 && errno == EBUSY,
       "a populated cgroup is not removed: EBUSY");
    ok(cgroup_kill(dir) == 0, "cgroup_kill");
    waitpid(pid, &status, 0);
    ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
       "the child in it died of SIGKILL");
    snprintf(sub, sizeof sub, "%s/dlrun-inner", dir);
    ok(mkdir(sub, 0755) == 0, "a folder below (a nested dlrun's job)");
    /* a minute at most for the kernel to see it empty: a hang guard */
    ok(cgroup_remove(dir, 60000) == 0 && stat(dir, &st) < 0,
       "cgroup_remove: emptied, removed with what was below");
    sweep(dir);
}

#define HYBRID_MOUNTINFO \
    "24 1 0:22 / / rw - overlay overlay rw\n" \
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n" \
    "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n" \
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
#define HYBRID_CGROUP \
    "9:name=systemd:/\n4:memory:/process_api/3aeb\n1:cpu:/\n0::/\n"

static void parse(void)
{
    char mnt[256], root[256], path[256];

    ok(cgroup_parse_mount(HYBRID_MOUNTINFO, mnt, sizeof mnt, root,
                          sizeof root) == 0 &&
       strcmp(mnt, "/sys/fs/cgroup/unified") == 0 && strcmp(root, "/") == 0,
       "mountinfo, hybrid: the cgroup2 mount, not the v1 ones or the tmpfs");
    ok(cgroup_parse_mount("30 1 0:26 /kubepods/pod1 /sys/fs/cgroup "
                          "rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate",
                          mnt, sizeof mnt, root, sizeof root) == 0 &&
       strcmp(mnt, "/sys/fs/cgroup") == 0 &&
       strcmp(root, "/kubepods/pod1") == 0,
       "mountinfo, a container's subtree: its root, optional fields skipped");
    ok(cgroup_parse_mount("32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup "
                          "cgroup rw,cpu\n", mnt, sizeof mnt, root,
                          sizeof root) == -1 &&
       cgroup_parse_mount("", mnt, sizeof mnt, root, sizeof root) == -1,
       "mountinfo with cgroup v1 only, or empty: none");
    ok(cgroup_parse_mount(HYBRID_MOUNTINFO, mnt, 8, root, sizeof root) == -1,
       "a mount point longer than the room: none, not cut");

    ok(cgroup_parse_own(HYBRID_CGROUP, path, sizeof path) == 0 &&
       strcmp(path, "/") == 0, "/proc/self/cgroup, hybrid: the 0:: line");
    ok(cgroup_parse_own("0::/user.slice/user-1000.slice/user@1000.service/"
                        "app.slice/a b.scope", path, sizeof path) == 0 &&
       strcmp(path, "/user.slice/user-1000.slice/user@1000.service/"
                    "app.slice/a b.scope") == 0,
       "a systemd user unit, no final newline, a space kept");
    ok(cgroup_parse_own("12:pids:/slurm/uid_0/job_7\n1:name=systemd:/x\n",
                        path, sizeof path) == -1 &&
       cgroup_parse_own("", path, sizeof path) == -1,
       "v1 only, or empty: no cgroup v2 path");
    ok(cgroup_parse_own("0::/a/long/one\n", path, 6) == -1,
       "a path longer than the room: none");
}

static void dir_of(void)
{
    char dir[256];
    struct err err = { "" };

    ok(cgroup_dir_of(HYBRID_MOUNTINFO, HYBRID_CGROUP, dir, sizeof dir,
                     &err) == 0 && strcmp(dir, "/sys/fs/cgroup/unified") == 0,
       "dir_of, at the root: the mount point");
    ok(cgroup_dir_of("1 0 0:1 /kubepods/pod1 /cg rw - cgroup2 none rw",
                     "0::/kubepods/pod1/ctr/job_3\n", dir, sizeof dir,
                     &err) == 0 && strcmp(dir, "/cg/ctr/job_3") == 0,
       "dir_of, below a subtree's mount: the path under it");
    err.msg[0] = '\0';
    ok(cgroup_dir_of("1 0 0:1 /kubepods/pod1 /cg rw - cgroup2 none rw",
                     "0::/kubepods/pod10\n", dir, sizeof dir, &err) == -1 &&
       strstr(err.msg, "outside the mounted tree /kubepods/pod1"),
       "dir_of, a cgroup beside the mounted subtree: refused, said why");
    err.msg[0] = '\0';
    ok(cgroup_dir_of("32 31 0:29 / /c rw - cgroup cgroup rw,cpu", HYBRID_CGROUP,
                     dir, sizeof dir, &err) == -1 &&
       strstr(err.msg, "no cgroup v2 file system"), "dir_of, no cgroup2 mount");
    err.msg[0] = '\0';
    ok(cgroup_dir_of(HYBRID_MOUNTINFO, "1:cpu:/\n", dir, sizeof dir,
                     &err) == -1 && strstr(err.msg, "no cgroup v2 cgroup"),
       "dir_of, in no cgroup v2 cgroup");
}

static int touch(const char *dir, const char *name, mode_t mode, uid_t uid)
{
    char path[4400];
    int fd;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
    if (fd < 0)
        return -1;
    close(fd);
    return chmod(path, mode) == 0 && (uid == (uid_t)-1 ||
                                      chown(path, uid, (gid_t)-1) == 0)
               ? 0 : -1;
}

/* A folder of ours as a cgroup tree: which are ours to use, who may. */
static void usable(const char *top)
{
    char cg[4096], made[4400];
    struct err err = { "" };
    uid_t me = geteuid(), other = me == 4242 ? 4243 : 4242;
    struct stat st;

    snprintf(cg, sizeof cg, "%s/user.slice", top);
    if (mkdir(cg, 0755) < 0 || touch(cg, "cgroup.procs", 0644, (uid_t)-1) < 0) {
        ok(0, "fixture cgroup made");
        return;
    }
    ok(cgroup_usable(cg, me, &err) == 0, "a cgroup of ours: usable");
    ok(cgroup_usable(cg, 0, &err) == 0, "root: usable");
    err.msg[0] = '\0';
    ok(cgroup_usable(cg, other, &err) == -1 && strstr(err.msg, cg) &&
       strstr(err.msg, "not a cgroup delegated to you"),
       "another user's cgroup: refused, the folder and why named");
    if (me == 0 && chown(cg, other, (gid_t)-1) == 0) {
        err.msg[0] = '\0';
        ok(cgroup_usable(cg, other, &err) == -1 &&
           strstr(err.msg, "cgroup.procs is not yours"),
           "the folder delegated but not its cgroup.procs: refused");
        snprintf(made, sizeof made, "%s/cgroup.procs", cg);
        ok(chown(made, other, (gid_t)-1) == 0 &&
           cgroup_usable(cg, other, &err) == 0,
           "the folder and its cgroup.procs delegated (systemd's, Slurm's "
           "chown): usable");
        ok(chmod(made, 0444) == 0 && cgroup_usable(cg, other, &err) == -1,
           "a cgroup.procs of theirs but read-only: refused");
    } else {
        printf("# skip the delegated cases: not root (no chown)\n");
    }
    snprintf(made, sizeof made, "%s/plain", top);
    err.msg[0] = '\0';
    ok(mkdir(made, 0755) == 0 && cgroup_usable(made, 0, &err) == -1 &&
       strstr(err.msg, "is not a cgroup (no cgroup.procs)"),
       "a folder that is not a cgroup: refused");
    err.msg[0] = '\0';
    ok(cgroup_job_create_in(made, cg, sizeof cg, &err) == -1 &&
       strstr(err.msg, "not a cgroup") && stat(cg, &st) < 0 && errno == ENOENT,
       "job_create_in a plain folder: what it made is no cgroup, removed");
}

/* Without cgroup.kill: each process listed, in the folders below too. */
static void kill_by_list(const char *top)
{
    char cg[4096], sub[4200], line[64];
    pid_t pid[2];
    int fd;

    snprintf(cg, sizeof cg, "%s/job", top);
    snprintf(sub, sizeof sub, "%s/inner", cg);
    if (mkdir(cg, 0755) < 0 || mkdir(sub, 0755) < 0) {
        ok(0, "fixture cgroups made");
        return;
    }
    signal(SIGCHLD, SIG_IGN);   /* reaped at once: gone, not zombies */
    for (int i = 0; i < 2; i++) {
        char procs[4300];
        if ((pid[i] = fork()) == 0) {
            for (;;)
                pause();
        }
        snprintf(procs, sizeof procs, "%s/cgroup.procs", i ? sub : cg);
        fd = open(procs, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        snprintf(line, sizeof line, "%d\n", (int)pid[i]);
        if (fd >= 0) {
            (void)!write(fd, line, strlen(line));
            close(fd);
        }
    }
    ok(cgroup_kill(cg) == 0, "cgroup_kill without cgroup.kill: 0");
    ok(kill(pid[0], 0) == -1 && errno == ESRCH && kill(pid[1], 0) == -1 &&
       errno == ESRCH, "  both listed processes, here and below, are gone");
    signal(SIGCHLD, SIG_DFL);
    errno = 0;
    ok(cgroup_kill(top) == -1 && errno == ENOENT,
       "  a folder with no cgroup.procs: -1, ENOENT");
}

/* What an earlier job left behind, by name, PID, cgroup.events and age. */
static void stale(void)
{
    time_t now = 1000000, old = now - CGROUP_STALE_S - 1;
    const char *empty = "populated 0\nfrozen 0\n";

    ok(cgroup_stale("dlrun-123-0", 0, empty, old, now),
       "stale: ours by name, its dlrun gone, empty, old");
    ok(!cgroup_stale("dlrun-123-0", 1, empty, old, now),
       "not while its dlrun runs (its guard removes it)");
    ok(!cgroup_stale("dlrun-123-0", 0, "populated 1\nfrozen 0\n", old, now),
       "not while a process is in it (or below)");
    ok(!cgroup_stale("dlrun-123-0", 0, NULL, old, now),
       "not when its cgroup.events cannot be read");
    ok(!cgroup_stale("dlrun-123-0", 0, empty, now - 10, now),
       "not a young one (another PID namespace's job starting)");
    ok(!cgroup_stale("dlrun-x-0", 0, empty, old, now) &&
       !cgroup_stale("dlrun-123-0-x", 0, empty, old, now) &&
       !cgroup_stale("dlrun-123", 0, empty, old, now) &&
       !cgroup_stale("user.slice", 0, empty, old, now),
       "never a folder not named as ours");
}

/* Below the real cgroup: a folder of a gone dlrun, aged, is swept when
 * the next job's is made; one of a live dlrun stays. */
/* How many folders of this process's jobs are below base. */
static int ours_left(const char *base)
{
    DIR *d = opendir(base);
    struct dirent *e;
    char prefix[64];
    int n = 0;

    snprintf(prefix, sizeof prefix, "dlrun-%d-", (int)getpid());
    while (d && (e = readdir(d)))
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    if (d)
        closedir(d);
    return n;
}

static void sweep(const char *job_dir)
{
    char base[4096], gone[4200], live[4200], dir[4096];
    struct timespec t[2] = { { time(NULL) - CGROUP_STALE_S - 60, 0 },
                             { time(NULL) - CGROUP_STALE_S - 60, 0 } };
    struct err err = { "" };
    struct stat st;
    int status;
    pid_t dead = fork();

    if (dead == 0)
        _exit(0);
    waitpid(dead, &status, 0);
    snprintf(base, sizeof base, "%s", job_dir);
    *strrchr(base, '/') = '\0';
    snprintf(gone, sizeof gone, "%s/dlrun-%d-0", base, (int)dead);
    snprintf(live, sizeof live, "%s/dlrun-%d-99", base, (int)getpid());
    if (mkdir(gone, 0755) < 0 || mkdir(live, 0755) < 0 ||
        utimensat(AT_FDCWD, gone, t, 0) < 0 ||
        utimensat(AT_FDCWD, live, t, 0) < 0) {
        printf("# skip the sweep: %s\n", strerror(errno));
        rmdir(gone);
        rmdir(live);
        return;
    }
    ok(cgroup_job_create(dir, sizeof dir, &err) == 0,
       "a job's cgroup made beside left-behind ones");
    ok(stat(gone, &st) < 0 && errno == ENOENT,
       "  the one of a gone dlrun, empty and old, swept");
    ok(stat(live, &st) == 0, "  the one of a live dlrun kept");
    rmdir(live);
    rmdir(dir);
    ok(cgroup_probe(gone, sizeof gone, &err) == 0 && strcmp(gone, base) == 0,
       "cgroup_probe: one can be made, below this process's cgroup");
    ok(ours_left(base) == 0, "  and what it made is removed again");
}

static void fixtures(void)
{
    char top[] = "/tmp/t_cgroup.XXXXXX", cmd[256];

    if (!mkdtemp(top)) {
        ok(0, "mkdtemp");
        return;
    }
    usable(top);
    kill_by_list(top);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", top);
    (void)!system(cmd);
}

int main(void)
{
    refusals();
    parse();
    dir_of();
    stale();
    fixtures();
    job();
    return tap_done();
}
