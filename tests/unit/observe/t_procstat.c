/* t_procstat.c - what the kernel says about a process: /proc/PID/stat
 * parsed (a name with spaces and ')'), then real processes: this one
 * running, a child stopped, a zombie, the sleeping one's wait channel, a
 * group's CPU time and size, the group's leaf (the program a shell
 * waits for) and its Python interpreter under a wrapper. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "observe/procstat.h"
#include "tap.h"

static void parse_stat(void)
{
    const char t[] = "1234 (py thon) x)) S 1 1234 1234 0 -1 4194560 100 0 0 0 "
                     "250 30 7 3 20 0 4 0 100 0 0\n";
    struct procstat st;

    ok(procstat_parse(t, strlen(t), &st) == 0, "parsed");
    is_int(st.pid, 1234, "pid");
    is_str(st.comm, "py thon) x)", "comm up to the last ')'");
    is_int(st.state, 'S', "state");
    is_int(st.ppid, 1, "ppid");
    is_int(st.pgrp, 1234, "pgrp");
    is_int((long)(st.utime + st.stime + st.cutime + st.cstime), 290, "times");
    ok(procstat_parse("1 (x", 4, &st) < 0, "no ')' refused");
    ok(procstat_parse("1 (x) S 1 2", 11, &st) < 0, "too few fields refused");
    ok(procstat_parse("", 0, &st) < 0, "empty refused");
}

/* The real thing: a child that burns CPU in its own group is counted. */
static void live(void)
{
    struct procstat st;
    unsigned long long t0, t1;
    char w[64];
    int n = 0;
    pid_t pid = fork();

    if (pid == 0) {
        setpgid(0, 0);
        for (volatile unsigned long i = 0;; i++)
            ;
    }
    setpgid(pid, pid);
    ok(procstat_read(getpid(), &st) == 0 && st.pid == getpid() &&
       st.state == 'R', "this process reads as running");
    ok(procstat_wchan(getpid(), w, sizeof w) == 0, "wchan readable");
    procstat_groups_cpu(&pid, 1, &t0, &n);
    for (int i = 0; i < 200; i++) {         /* up to 20 s on a loaded box */
        usleep(100000);
        procstat_groups_cpu(&pid, 1, &t1, &n);
        if (t1 > t0 + 5)
            break;
    }
    ok(t1 > t0 + 5 && n == 1, "the group's CPU time grows");
    ok(!procstat_is_python(getpid()), "a C test is not Python");
    ok(procstat_group_python(pid) == 0, "no Python in the group");
    ok(procstat_group_leaf(pid) == pid, "a lone process is its group's leaf");
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    ok(procstat_groups_cpu(&pid, 1, &t1, &n) == 0 && n == 0, "gone: no process");
}

/* sh -c script in a group of its own, its stdout read until the first
 * newline into line (the script says when it is ready, and what pid). */
static pid_t spawn_group(const char *script, char *line, size_t len)
{
    int p[2];
    size_t got = 0;
    pid_t pid;

    if (pipe2(p, O_CLOEXEC) < 0)
        return -1;
    pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        dup2(p[1], 1);
        execl("/bin/sh", "sh", "-c", script, (char *)NULL);
        _exit(127);
    }
    setpgid(pid, pid);
    close(p[1]);
    while (got + 1 < len && read(p[0], line + got, 1) == 1 && line[got] != '\n')
        got++;
    line[got] = '\0';
    close(p[0]);
    return pid;
}

static void end_group(pid_t pgrp)
{
    killpg(pgrp, SIGKILL);
    while (waitpid(-pgrp, NULL, 0) > 0)
        ;
}

static void states(void)
{
    struct procstat st;
    siginfo_t si;
    char w[64] = "";
    char line[64];
    pid_t pid = fork();

    if (pid == 0) {
        pause();
        _exit(0);
    }
    kill(pid, SIGSTOP);
    waitpid(pid, NULL, WUNTRACED);
    ok(procstat_read(pid, &st) == 0 && st.state == 'T' && st.ppid == getpid(),
       "a stopped child: T, its parent is us");
    kill(pid, SIGKILL);
    waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT);   /* a zombie, kept */
    ok(procstat_read(pid, &st) == 0 && st.state == 'Z', "a zombie: Z");
    waitpid(pid, NULL, 0);
    ok(procstat_read(pid, &st) < 0, "reaped: -1");
    ok(procstat_wchan(pid, w, sizeof w) < 0, "reaped: no wait channel");

    pid = spawn_group("echo ready; exec sleep 600", line, sizeof line);
    /* sleep's exec follows the echo, and it may still be loading when it
     * first reads as S: wait until it sleeps in nanosleep (a hang guard
     * of a minute, polled) */
    for (int i = 0; i < 6000; i++) {
        if (procstat_read(pid, &st) == 0 && strcmp(st.comm, "sleep") == 0 &&
            st.state == 'S' && procstat_wchan(pid, w, sizeof w) == 0 &&
            strstr(w, "sleep"))
            break;
        usleep(10000);
    }
    ok(strcmp(st.comm, "sleep") == 0 && st.pgrp == pid, "comm and pgrp of a child");
    ok(strstr(w, "sleep") != NULL,
       "a sleeping process has a wait channel: a sleep function of the kernel");
    printf("# sleep waits in %s\n", w);
    end_group(pid);
    ok(procstat_hz() > 0, "clock ticks per second");
}

static void groups(void)
{
    char line[64];
    pid_t g[2], leaf;
    unsigned long long ticks[3] = { 1, 1, 1 };
    int nproc[3] = { -1, -1, -1 };

    g[0] = spawn_group("sleep 600 & echo $!; wait", line, sizeof line);
    leaf = (pid_t)atoi(line);
    g[1] = spawn_group("echo ready; exec sleep 600", line, sizeof line);
    ok(leaf > 0 && procstat_group_leaf(g[0]) == leaf,
       "the leaf of sh and its sleep is the sleep");
    ok(procstat_group_leaf(g[1]) == g[1], "a lone process is its own leaf");
    pid_t three[3] = { g[0], g[1], 999999999 };
    ok(procstat_groups_cpu(three, 3, ticks, nproc) == 0, "groups_cpu");
    ok(nproc[0] == 2 && nproc[1] == 1 && nproc[2] == 0,
       "processes per group: 2, 1, none for a group that is not");
    is_int((long)ticks[2], 0, "no process, no time");
    ok(procstat_group_python(g[0]) == 0, "no Python in a shell's group");
    end_group(g[0]);
    end_group(g[1]);
}

static void python(void)
{
    char line[64];
    pid_t g, py;

    if (access("/usr/bin/python3", X_OK) != 0) {
        ok(1, "# skip: no /usr/bin/python3");
        return;
    }
    g = spawn_group("/usr/bin/python3 -c 'import os, time; "
                    "print(os.getpid(), flush=True); time.sleep(600)'; :",
                    line, sizeof line);
    py = (pid_t)atoi(line);
    ok(py > 0 && py != g, "python under sh (not exec'd)");
    ok(procstat_is_python(py) && !procstat_is_python(g),
       "procstat_is_python: python3 yes, sh no");
    is_int(procstat_group_python(g), py, "the group's Python is found");
    is_int(procstat_group_leaf(g), py, "and it is the leaf");
    end_group(g);
}

int main(void)
{
    alarm(300);     /* hang guard */
    parse_stat();
    live();
    states();
    groups();
    python();
    return tap_done();
}
