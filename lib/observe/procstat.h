/* procstat.h - what the kernel says a process is doing: /proc/PID/stat
 * (state, CPU time, process group), its wait channel, and the CPU time of
 * a whole process group (a rank and the workers it forked), for the stall
 * detector (lib/observe/stall.h) and its report. */
#ifndef DLRUN_PROCSTAT_H
#define DLRUN_PROCSTAT_H

#include <stddef.h>
#include <sys/types.h>

struct procstat {
    int pid, ppid, pgrp;
    char state;                 /* R, S, D, T, Z, ... */
    char comm[32];              /* the name between the parentheses */
    unsigned long long utime, stime;    /* clock ticks */
    unsigned long long cutime, cstime;  /* reaped children's, ticks */
};

/* Parse the text of a /proc/PID/stat file (len bytes, need not be
 * NUL-terminated).  comm may hold spaces and ')': the last ')' ends it.
 * 0, or -1 when the text is not one. */
int procstat_parse(const char *text, size_t len, struct procstat *out);

/* Read pid's.  0, or -1 (gone, or not readable). */
int procstat_read(pid_t pid, struct procstat *out);

/* The kernel function pid sleeps in ("0" or "" when running), into buf
 * (len bytes, NUL-terminated).  0, or -1. */
int procstat_wchan(pid_t pid, char *buf, size_t len);

/* For each of the n process groups pgrps[i], the CPU time (user +
 * system, with reaped children's) of all its processes, in clock ticks,
 * into ticks[i], and how many processes it has into nproc[i] (nproc may
 * be NULL): one pass over /proc.  0, or -1 when /proc cannot be read. */
int procstat_groups_cpu(const pid_t *pgrps, int n, unsigned long long *ticks,
                        int *nproc);

/* The first process of group pgrp (not pgrp itself when it is not one)
 * that is a Python interpreter whose parent is not one: the program a
 * wrapper (sh -c, env) started; 0 when there is none. */
pid_t procstat_group_python(pid_t pgrp);

/* The process of group pgrp that does the work: one with no child in the
 * group (a shell or env that waits for its program is not it), the
 * latest started when there are several (the highest pid, short of pid
 * wrap-around); pgrp itself when it has no such member or /proc cannot
 * be read. */
pid_t procstat_group_leaf(pid_t pgrp);

/* Is pid a Python interpreter (its executable's name starts "python")? */
int procstat_is_python(pid_t pid);

/* Clock ticks per second (sysconf). */
long procstat_hz(void);

#endif
