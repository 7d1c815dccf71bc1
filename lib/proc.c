/* proc.c - fork/exec with the child set-up of a careful launcher: own
 * process group, parent-death signal, default signal handlers, the
 * original mask, stray fds closed on exec, and exec failure reported to
 * the parent through a close-on-exec pipe.  Only async-signal-safe calls
 * after fork. */
#include "proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

static void child_setup(const struct proc_spec *spec, pid_t parent)
{
    struct sigaction dfl;

    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, spec->death_sig ? spec->death_sig : SIGKILL);
    if (getppid() != parent)    /* dlrun died before prctl took effect */
        _exit(EXIT_FAILURE);
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; sig++)
        sigaction(sig, &dfl, NULL);
    sigprocmask(SIG_SETMASK, spec->mask, NULL);
    if (spec->cpus)
        sched_setaffinity(0, sizeof *spec->cpus, spec->cpus);
    if (spec->in_fd > 0)
        dup2(spec->in_fd, STDIN_FILENO);
    if (spec->out_fd >= 0)
        dup2(spec->out_fd, STDOUT_FILENO);
    if (spec->err_fd >= 0)
        dup2(spec->err_fd, STDERR_FILENO);
    syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);
}

int proc_exec_code(int exec_errno)
{
    return exec_errno == ENOENT ? 127 : 126;
}

int proc_spawn(const struct proc_spec *spec, pid_t *pid, int *exec_errno,
               struct err *err)
{
    pid_t parent = getpid(), child;
    int fds[2], e = 0;
    ssize_t n;

    *exec_errno = 0;
    if (pipe2(fds, O_CLOEXEC) < 0)
        return err_set(err, "pipe: %s", strerror(errno));
    child = fork();
    if (child == 0) {
        close(fds[0]);
        child_setup(spec, parent);
        execvpe(spec->argv[0], spec->argv, spec->envp);
        e = errno;
        n = write(fds[1], &e, sizeof e);
        (void)n;
        _exit(proc_exec_code(e));
    }
    close(fds[1]);
    if (child < 0) {
        close(fds[0]);
        return err_set(err, "fork: %s", strerror(errno));
    }
    setpgid(child, child);      /* also here: no race with killpg */
    do
        n = read(fds[0], &e, sizeof e);
    while (n < 0 && errno == EINTR);
    close(fds[0]);
    *pid = child;
    if (n != (ssize_t)sizeof e)
        return 0;               /* EOF: exec succeeded */
    waitpid(child, NULL, 0);
    *exec_errno = e;
    return err_set(err, "cannot run '%s': %s", spec->argv[0], strerror(e));
}

static int is_kept(pid_t p, const pid_t *keep, int n)
{
    for (int i = 0; i < n; i++)
        if (keep[i] == p)
            return 1;
    return 0;
}

/* The parent pid in /proc/PID/stat ("pid (comm) state ppid ..."). */
static pid_t parent_of(const char *pid)
{
    char path[64], buf[512], *close_paren;
    FILE *f;
    int ppid = -1;

    snprintf(path, sizeof path, "/proc/%s/stat", pid);
    f = fopen(path, "r");
    if (!f)
        return -1;
    if (fgets(buf, sizeof buf, f) && (close_paren = strrchr(buf, ')')))
        sscanf(close_paren + 1, " %*c %d", &ppid);
    fclose(f);
    return ppid;
}

/* Our children as the kernel lists them (/proc/PID/task/PID/children),
 * killed unless kept; -1 when the kernel has no such file. */
static int kill_listed_children(const pid_t *keep, int n)
{
    char path[64];
    FILE *f;
    int p, killed = 0;

    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)getpid(),
             (int)getpid());
    f = fopen(path, "r");
    if (!f)
        return -1;
    while (fscanf(f, "%d", &p) == 1) {
        if (is_kept(p, keep, n))
            continue;
        kill(p, SIGKILL);
        killed++;
    }
    fclose(f);
    return killed;
}

int proc_kill_adopted(const pid_t *keep, int n)
{
    int listed = kill_listed_children(keep, n);
    DIR *d = listed >= 0 ? NULL : opendir("/proc");
    struct dirent *e;
    pid_t me = getpid();
    int killed = 0;

    if (!d)
        return listed > 0 ? listed : 0;
    while ((e = readdir(d))) {
        pid_t p = (pid_t)atoi(e->d_name);
        if (p <= 0 || is_kept(p, keep, n) || parent_of(e->d_name) != me)
            continue;
        kill(p, SIGKILL);
        killed++;
    }
    closedir(d);
    return killed;
}
