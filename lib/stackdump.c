/* stackdump.c - see stackdump.h. */
#include "stackdump.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proc.h"

int stackdump_have(const char *prog)
{
    char path[4096];

    return proc_find_program(prog, getenv("PATH"), path, sizeof path) == 0;
}

static long mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Run argv with stdout and stderr into buf; kill it past timeout_ms.
 * Returns the bytes read, -1 when it could not run or overran. */
static ssize_t run_capture(char *const argv[], int timeout_ms, char *buf,
                           size_t len)
{
    int fds[2], status, overran = 0;
    size_t got = 0;
    long end = mono_ms() + timeout_ms;
    pid_t pid;

    if (pipe2(fds, O_CLOEXEC) < 0)
        return -1;
    pid = fork();
    if (pid == 0) {
        int devnull = open("/dev/null", O_RDONLY);
        dup2(devnull, 0);
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(fds[1]);
    while (pid > 0) {
        struct pollfd p = { .fd = fds[0], .events = POLLIN };
        long left = end - mono_ms();
        ssize_t r;
        if (left <= 0 || poll(&p, 1, (int)left) == 0) {
            overran = 1;
            break;
        }
        r = read(fds[0], buf + got, len - 1 - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
        if (got == len - 1)
            break;          /* enough: the rest is dropped */
    }
    buf[got] = '\0';
    close(fds[0]);
    if (pid > 0 && overran)
        kill(pid, SIGKILL);
    if (pid > 0)
        waitpid(pid, &status, 0);
    return pid < 0 || overran ? -1 : (ssize_t)got;
}

/* Every thread's /proc/PID/task/T/stack, each after a "thread T:" line. */
static int kernel_stacks(pid_t pid, char *buf, size_t len)
{
    char path[384];
    size_t got = 0;
    DIR *d;
    struct dirent *e;

    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    if (!(d = opendir(path)))
        return snprintf(buf, len, "cannot read %s: %s", path,
                        strerror(errno)), -1;
    buf[0] = '\0';
    while ((e = readdir(d)) && got + 64 < len) {
        int fd;
        ssize_t r;
        if (e->d_name[0] == '.')
            continue;
        got += (size_t)snprintf(buf + got, len - got, "thread %s:\n", e->d_name);
        snprintf(path, sizeof path, "/proc/%d/task/%s/stack", (int)pid, e->d_name);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        r = fd < 0 ? -1 : read(fd, buf + got, len - 1 - got);
        if (fd >= 0)
            close(fd);
        if (r > 0)
            got += (size_t)r;
        else
            got += (size_t)snprintf(buf + got, len - got, "  (%s)\n",
                                    fd < 0 || r < 0 ? "unreadable: root only"
                                                    : "running");
        buf[got] = '\0';
    }
    closedir(d);
    return 0;
}

int stackdump_native(pid_t pid, int timeout_ms, char *buf, size_t len,
                     const char **how)
{
    char spid[24];
    ssize_t n = -1;

    snprintf(spid, sizeof spid, "%d", (int)pid);
    if (stackdump_have("gdb")) {
        char *const gdb[] = { "gdb", "-nx", "-batch", "-p", spid, "-ex",
                              "thread apply all bt", NULL };
        n = run_capture(gdb, timeout_ms, buf, len);
        *how = "gdb";
        /* gdb says so when ptrace is not allowed, and prints no frame */
        if (n > 0 && !strstr(buf, "#0"))
            n = -1;
    }
    if (n < 0 && stackdump_have("eu-stack")) {
        char *const eu[] = { "eu-stack", "-p", spid, NULL };
        n = run_capture(eu, timeout_ms, buf, len);
        *how = "eu-stack";
        if (n > 0 && !strstr(buf, "#0"))
            n = -1;
    }
    if (n >= 0)
        return 0;
    *how = "kernel";
    return kernel_stacks(pid, buf, len);
}
