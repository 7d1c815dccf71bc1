/* hostroom.h - whether this host can hold the processes dlrun is about to
 * start: compared before the first rank starts, so that a job too big for
 * the machine is refused with one line (which limit, how to raise it)
 * instead of failing halfway with thousands of processes started, or
 * taking the machine's memory until the kernel's OOM killer ends it.
 *
 *     struct hostroom h;
 *     hostroom_raise_nofile();
 *     hostroom_read(&h, "", n);
 *     if (hostroom_check(&h, &(struct hostroom_need){ ... }, &err) < 0)
 *         ... err.msg names the limit
 *
 * Reading and judging are apart: the tests feed hostroom_check made-up
 * limits, and hostroom_read a folder that looks like /proc and /sys. */
#ifndef DLRUN_HOSTROOM_H
#define DLRUN_HOSTROOM_H

#include "util/err.h"

/* What dlrun holds per rank it starts and watches (measured; see
 * dlrun(1), Limits): the read ends of the rank's stdout and stderr pipes,
 * and with --output-dir its two files.  The write ends and the
 * exec-error pipe of the rank being started (a rank's pipes are made just
 * before it starts) and dlrun's own files (broker, signalfd, guard, the
 * console) are the fixed part. */
enum {
    HOSTROOM_FDS_PER_RANK = 2,
    HOSTROOM_FDS_PER_RANK_FILES = 2,
    HOSTROOM_FDS_FIXED = 32
};

/* What a process costs the machine however small its program (kernel
 * stack, page tables, its private pages: about 50 KiB for `sleep` here),
 * rounded up; what the rank's program then allocates is its own. */
#define HOSTROOM_PROC_BYTES (64LL * 1024)

/* Limits and what is in use of them; -1 where there is no limit or it
 * could not be read. */
struct hostroom {
    long long nofile, nofile_hard;  /* RLIMIT_NOFILE soft and hard */
    long long nproc;                /* RLIMIT_NPROC; -1 also when it is not
                                       enforced (root, CAP_SYS_RESOURCE) */
    long long nproc_used;           /* this user's tasks now (-1: not
                                       counted, far below the limit) */
    long long pid_max, threads_max; /* kernel.pid_max, kernel.threads-max */
    long long tasks;                /* the host's tasks now (/proc/loadavg) */
    long long cg_pids_max, cg_pids_used;    /* the tightest pids.max above */
    char cg_pids[256];              /* ... and its cgroup folder */
    long long mem_avail;            /* MemAvailable, bytes */
    long long cg_mem_max, cg_mem_used;      /* the tightest memory limit */
    char cg_mem[256];               /* ... and its cgroup folder */
};

/* What the job needs of this host. */
struct hostroom_need {
    const char *who;        /* borrowed: starts the line, "2000 ranks on vm" */
    long long procs;        /* processes started at once */
    long long fds;          /* files dlrun holds open at once */
    long long bytes;        /* memory: dlrun's own for them and theirs */
};

/* Raise the soft RLIMIT_NOFILE to the hard limit (what a launch of many
 * ranks needs; the ranks inherit it, as under `dlrun broker`). */
void hostroom_raise_nofile(void);

/* Read this host's limits into h: the rlimits of this process, the rest
 * from root's proc/ and sys/ (root "" for the host itself).  nprocs: the
 * processes about to start; this user's tasks are counted (a walk of
 * /proc) only when that many could come near RLIMIT_NPROC. */
void hostroom_read(struct hostroom *h, const char *root, long long nprocs);

/* 0 when need fits in h; -1 with one line in err: what needs how much,
 * the limit it passes, and how to raise it.  The process limits come
 * first (a fork that fails leaves a job half started), then open files,
 * then memory. */
int hostroom_check(const struct hostroom *h, const struct hostroom_need *n,
                   struct err *err);

#endif
