/* stackdump.c - see stackdump.h. */
#include "observe/stackdump.h"

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

#include "run/proc.h"
#include "util/findprog.h"

int stackdump_have(const char *prog)
{
    char path[4096];

    return find_program(prog, getenv("PATH"), path, sizeof path) == 0;
}

/* Run argv with stdout and stderr into buf; killed past timeout_ms.
 * Returns the bytes read, -1 when it could not run or overran. */
static ssize_t run_capture(char *const argv[], int timeout_ms, char *buf,
                           size_t len)
{
    struct err err = { "" };
    int rc = proc_capture(argv, 0, 1, timeout_ms, buf, len, &err);

    return rc < 0 || rc == 124 || rc == 126 || rc == 127 ? -1 :
           (ssize_t)strlen(buf);
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
