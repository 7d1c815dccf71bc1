/* guard.c - see guard.h. */
#include "run/guard.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "run/cgroup.h"
#include "util/privdirs.h"
#include "util/safefile.h"
#include "rendezvous/token.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

#define MARK_NAME "DLRUN_JOB_MARK"
/* How long the guard waits for the killed to leave the cgroup: a process
 * with much memory (a GPU driver's teardown) takes seconds to exit; dlrun
 * does not wait for its guard, and what is left after this is swept by a
 * later job (cgroup_sweep). */
#define REMOVE_WAIT_MS 60000
/* A process's environment read for the mark: the kernel's limit on
 * arguments and environment together is a quarter of the stack limit,
 * 2 MiB by default; a longer one is searched in its first 4 MiB. */
#define ENVIRON_MAX (4 << 20)

/* What dlrun tells the guard: one record each. */
enum { REC_ADD = 1, REC_FORGET = 2, REC_CLEAN = 3 };

static struct {
    pid_t pid;                  /* the guard, 0 when none */
    int fd;                     /* our end of the link, -1 */
    int procs_fd;               /* the cgroup's cgroup.procs, -1 */
    char dir[4096];             /* the cgroup, "" when none */
    char folder[4096];          /* the job's private folder, "" none */
    char why[256];              /* why no cgroup, "" */
    char mark[TOKEN_HEX_LEN + 1];
} g = { .fd = -1, .procs_fd = -1 };

pid_t guard_pid(void) { return g.pid; }
int guard_procs_fd(void) { return g.procs_fd; }
const char *guard_cgroup(void) { return g.dir[0] ? g.dir : NULL; }
const char *guard_cgroup_why(void) { return g.why; }
const char *guard_mark_name(void) { return g.pid ? MARK_NAME : NULL; }
const char *guard_mark_value(void) { return g.pid ? g.mark : NULL; }

static void send_rec(int op, pid_t pid)
{
    int32_t rec[2] = { op, (int32_t)pid };

    /* MSG_NOSIGNAL: a guard gone must not take dlrun with it (SIGPIPE) */
    if (g.fd >= 0)
        (void)send(g.fd, rec, sizeof rec, MSG_NOSIGNAL);
}

void guard_folder(const char *dir)
{
    snprintf(g.folder, sizeof g.folder, "%s", dir ? dir : "");
}

void guard_add(pid_t pgid) { send_rec(REC_ADD, pgid); }
void guard_forget(pid_t pgid) { send_rec(REC_FORGET, pgid); }

void guard_kill_job(void)
{
    if (g.dir[0])
        cgroup_kill(g.dir);
}

/* Show the guard as "dlrun guard" with no environment: a forked copy of
 * dlrun shows dlrun's command line (which users and tests look for) and
 * environment (an outer job's mark would make that job's guard kill this
 * one before it ends its own ranks).  The kernel reads both from these
 * areas of our memory (fields 48-51 of /proc/self/stat). */
static void hide_args(void)
{
    char buf[1024], *p;
    unsigned long v[4] = { 0 };
    int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC), field = 3;
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;

    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return;
    buf[n] = '\0';
    for (p = strrchr(buf, ')'); p && *p && field <= 51; field++) {
        unsigned long x = strtoul(p + 1, &p, 10);
        if (field >= 48)
            v[field - 48] = x;
        while (*p == ' ' && p[1] == ' ')
            p++;
        if (field == 3)         /* the state letter */
            p = strchr(p + 1, ' ');
    }
    if (field <= 51 || v[1] <= v[0] + 12 || v[3] < v[2])
        return;
    memset((void *)v[0], 0, v[1] - v[0]);
    memcpy((void *)v[0], "dlrun\0guard", 12);
    memset((void *)v[2], 0, v[3] - v[2]);
}

/* The child: its own process group (a terminal's signals and a kill of
 * dlrun's group miss it), deaf to the signals dlrun forwards, only the
 * link open; then the guard's loop, in this copy of dlrun (no exec: a
 * launch of a few milliseconds must not pay a program's start). */
static void guard_child(int link, const char *dir, const char *mark)
{
    static const int deaf[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1,
                                SIGUSR2, SIGPIPE };
    int null = open("/dev/null", O_RDWR);
    int l = fcntl(link, F_DUPFD_CLOEXEC, 64);
    sigset_t none;

    setpgid(0, 0);
    for (size_t i = 0; i < sizeof deaf / sizeof deaf[0]; i++)
        signal(deaf[i], SIG_IGN);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    for (int fd = 0; fd < 3 && null >= 0; fd++)
        dup2(null, fd);
    if (l < 0)
        _exit(1);
    syscall(SYS_close_range, 3U, (unsigned)l - 1, 0U);
    syscall(SYS_close_range, (unsigned)l + 1, ~0U, 0U);
    hide_args();
    prctl(PR_SET_NAME, "dlrun-guard");
    _exit(guard_watch(l, dir, mark));
}

/* fork the guard, not waiting for it.  0, or -1 with err. */
static int spawn_guard(int link, const char *mark, struct err *err)
{
    pid_t pid = fork();

    if (pid == 0)
        guard_child(link, g.dir[0] ? g.dir : NULL, mark);
    if (pid < 0)
        return err_set(err, "cannot start the guard: %s", strerror(errno));
    g.pid = pid;
    return 0;
}

static void forget_cgroup(void)
{
    if (g.procs_fd >= 0)
        close(g.procs_fd);
    if (g.dir[0])
        rmdir(g.dir);
    g.procs_fd = -1;
    g.dir[0] = '\0';
}

int guard_start(int use_cgroup, struct err *err)
{
    struct err cgerr = { "" };
    uint8_t tok[TOKEN_BYTES];
    char mark[64];
    int sv[2], rc;

    if (g.pid)      /* already started (with the job's folder) */
        return 0;
    if (token_new(tok, err) < 0)
        return -1;
    token_to_hex(tok, g.mark);
    if (use_cgroup && cgroup_job_create(g.dir, sizeof g.dir, &cgerr) == 0 &&
        (g.procs_fd = cgroup_procs_open(g.dir, &cgerr)) < 0)
        forget_cgroup();
    snprintf(g.why, sizeof g.why, "%s", cgerr.msg);
    snprintf(mark, sizeof mark, "%s=%s", MARK_NAME, g.mark);
    /* the folders listed after the fork: the guard must see them */
    rc = privdirs_share() < 0 ? -1 :
         socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv);
    if (rc < 0)
        err_set(err, "socketpair: %s", strerror(errno));
    if (rc == 0) {
        rc = spawn_guard(sv[1], mark, err);
        close(sv[1]);
        if (rc < 0)
            close(sv[0]);
    }
    if (rc == 0)
        g.fd = sv[0];
    else
        forget_cgroup();    /* no guard: no folder nobody would remove */
    return rc;
}

void guard_stop(void)
{
    if (!g.pid)
        return;
    send_rec(REC_CLEAN, 0);
    close(g.fd);
    g.fd = -1;
    /* not waited for: it removes the cgroup folder while dlrun exits (and
     * init reaps it) */
    if (g.procs_fd >= 0)
        close(g.procs_fd);
    g.procs_fd = -1;
    g.pid = 0;
    g.dir[0] = '\0';   /* the guard removed it */
}

/* --- the guard process --- */

/* The rank groups dlrun registered and has not forgotten. */
struct groups {
    pid_t *v;
    size_t n, cap;
};

static void groups_apply(struct groups *gs, int op, pid_t pgid)
{
    size_t i = 0;

    while (i < gs->n && gs->v[i] != pgid)
        i++;
    if (op == REC_FORGET && i < gs->n)
        gs->v[i] = gs->v[--gs->n];
    if (op != REC_ADD || i < gs->n || pgid <= 1)
        return;
    if (gs->n == gs->cap) {
        size_t cap = gs->cap ? 2 * gs->cap : 64;
        pid_t *v = realloc(gs->v, cap * sizeof *v);
        if (!v)
            return;
        gs->v = v;
        gs->cap = cap;
    }
    gs->v[gs->n++] = pgid;
}

/* Read records until the link closes; 1 when dlrun said it ended cleanly. */
static int read_link(int fd, struct groups *gs)
{
    int32_t rec[2];
    size_t have = 0;
    int clean = 0;

    for (;;) {
        ssize_t n = read(fd, (char *)rec + have, sizeof rec - have);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return clean;
        have += (size_t)n;
        if (have < sizeof rec)
            continue;
        have = 0;
        if (rec[0] == REC_CLEAN)
            clean = 1;
        else
            groups_apply(gs, rec[0], (pid_t)rec[1]);
    }
}

/* 1 when the environment of /proc/NAME (a process of ours) holds mark
 * as a whole entry. */
static int has_mark(const char *name, const char *mark, char *buf)
{
    char path[300];
    size_t len = 0, ml = strlen(mark);
    struct stat st;
    int fd, found = 0;
    ssize_t n;

    snprintf(path, sizeof path, "/proc/%s/environ", name);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    if (fstat(fd, &st) < 0 || st.st_uid != geteuid()) {
        close(fd);
        return 0;
    }
    while (len < ENVIRON_MAX &&
           (n = read(fd, buf + len, ENVIRON_MAX - len)) > 0)
        len += (size_t)n;
    close(fd);
    for (size_t i = 0; !found && i + ml <= len; i += strnlen(buf + i, len - i) + 1)
        found = memcmp(buf + i, mark, ml) == 0 &&
                (i + ml == len || buf[i + ml] == '\0');
    return found;
}

/* SIGKILL every process of ours with the mark; how many. */
static int kill_marked(const char *mark, char *buf)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    pid_t me = getpid();
    int killed = 0;

    if (!d)
        return 0;
    while ((e = readdir(d))) {
        pid_t p = (pid_t)atoi(e->d_name);
        if (p > 1 && p != me && has_mark(e->d_name, mark, buf) &&
            kill(p, SIGKILL) == 0)
            killed++;
    }
    closedir(d);
    return killed;
}

/* dlrun is gone without cleaning up: kill the groups, the cgroup, and
 * whatever carries the mark, again while a pass still finds some (a
 * process can fork between our reading and our kill). */
static void end_job(const struct groups *gs, const char *cgroup_dir,
                    const char *mark)
{
    struct timespec tick = { 0, 10 * 1000 * 1000 };
    char *buf = mark ? malloc(ENVIRON_MAX) : NULL;

    for (size_t i = 0; i < gs->n; i++)
        killpg(gs->v[i], SIGKILL);
    if (cgroup_dir)
        cgroup_kill(cgroup_dir);
    for (int pass = 0; buf && pass < 100 && kill_marked(mark, buf) > 0; pass++)
        nanosleep(&tick, NULL);
    free(buf);
}

int guard_watch(int fd, const char *cgroup_dir, const char *mark)
{
    struct groups gs = { 0 };

    if (!read_link(fd, &gs)) {
        end_job(&gs, cgroup_dir, mark);
        if (g.folder[0])     /* as dlrun would have removed it */
            safefile_remove_dir(g.folder);
        privdirs_remove_all();
    }
    if (cgroup_dir) {
        cgroup_kill(cgroup_dir);
        cgroup_remove(cgroup_dir, REMOVE_WAIT_MS);
    }
    free(gs.v);
    return 0;
}
