/* stacksig.c - see stacksig.h. */
#include "observe/stacksig.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "observe/procstat.h"
#include "observe/stall.h"
#include "util/clock.h"

#define MAX_PROCS 8
#define MAX_THREADS 64
#define MAX_MAPS 16384              /* per process */
#define STACK_MAX (1024 * 1024)     /* bytes of one thread's stack read */

struct map {
    unsigned long long lo, hi;
    int exec, interp;               /* executable; a Python interpreter's */
};

/* What the helper needs, all read before it forks: after fork only
 * system calls and arithmetic. */
struct target {
    pid_t pid;
    unsigned long long reaped;      /* CPU ticks of its ended children */
    pid_t tid[MAX_THREADS];
    char state[MAX_THREADS];        /* R, S, D, ... as read before */
    /* a thread asleep in a system call: where (no need to stop it) */
    char asleep[MAX_THREADS];
    unsigned long long sp[MAX_THREADS], pc[MAX_THREADS];
    int ntid;
    struct map *maps;               /* owned, sorted by address */
    int nmaps;
};

struct probe {
    struct target t[MAX_PROCS];
    int nt, nthreads;
    unsigned char *stack;           /* owned: STACK_MAX bytes */
    unsigned long long *sig;        /* borrowed: the caller's */
    size_t max, n;
};

static int cmp_pid(const void *a, const void *b)
{
    pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

    return (x > y) - (x < y);
}

/* The processes of the n groups pgrps[i] with want[i], in one pass over
 * /proc: into procs[i * MAX_PROCS ...], their count into count[i] (-1:
 * more than MAX_PROCS).  0, or -1 when /proc cannot be read. */
static int find_procs(const pid_t *pgrps, const int *want, int n,
                      pid_t *procs, int *count)
{
    struct dirent *e;
    DIR *d = opendir("/proc");

    if (!d)
        return -1;
    while ((e = readdir(d))) {
        struct procstat st;
        pid_t pid = (pid_t)atoi(e->d_name);
        if (pid <= 0 || procstat_read(pid, &st) < 0 || st.state == 'Z')
            continue;
        for (int i = 0; i < n; i++) {
            if (!want[i] || st.pgrp != pgrps[i] || count[i] < 0)
                continue;
            if (count[i] == MAX_PROCS)
                count[i] = -1;
            else
                procs[i * MAX_PROCS + count[i]++] = pid;
        }
    }
    closedir(d);
    for (int i = 0; i < n; i++)
        if (count[i] > 0)
            qsort(procs + i * MAX_PROCS, (size_t)count[i], sizeof *procs,
                  cmp_pid);
    return 0;
}

/* Is pid's thread tid in a system call (/proc/PID/task/TID/syscall: its
 * number and arguments, then its stack pointer and program counter)?
 * 1 with *sp and *pc, else 0 (running, or not readable). */
static int read_syscall(pid_t pid, pid_t tid, unsigned long long *sp,
                        unsigned long long *pc)
{
    char path[96], buf[512], *last, *prev;
    FILE *f;
    size_t n;

    snprintf(path, sizeof path, "/proc/%d/task/%d/syscall", (int)pid,
             (int)tid);
    if (!(f = fopen(path, "re")))
        return 0;
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    while (n > 0 && buf[n - 1] == '\n')
        buf[--n] = '\0';
    if (!(last = strrchr(buf, ' ')) || last == buf)
        return 0;
    *last++ = '\0';
    if (!(prev = strrchr(buf, ' ')))
        return 0;
    *sp = strtoull(prev + 1, NULL, 16);
    *pc = strtoull(last, NULL, 16);
    return *sp != 0 && strncmp(buf, "running", 7) != 0;
}

/* t's threads by tid, each state with its thread (a few dozen at most). */
static void sort_threads(struct target *t)
{
    for (int i = 1; i < t->ntid; i++)
        for (int k = i; k > 0 && t->tid[k - 1] > t->tid[k]; k--) {
            pid_t tid = t->tid[k];
            char c = t->state[k];
            t->tid[k] = t->tid[k - 1];
            t->state[k] = t->state[k - 1];
            t->tid[k - 1] = tid;
            t->state[k - 1] = c;
        }
}

/* The state letter of pid's thread tid, '?' when unreadable. */
static char thread_state(pid_t pid, pid_t tid)
{
    char path[96], buf[512];
    struct procstat st;
    FILE *f;
    size_t n;

    snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)pid, (int)tid);
    if (!(f = fopen(path, "re")))
        return '?';
    n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    return procstat_parse(buf, n, &st) == 0 ? st.state : '?';
}

/* t's threads (tid order, their states alike).  0, or -1. */
static int find_threads(struct probe *p, struct target *t)
{
    char path[64];
    struct dirent *e;
    DIR *d;

    snprintf(path, sizeof path, "/proc/%d/task", (int)t->pid);
    if (!(d = opendir(path)))
        return -1;
    while ((e = readdir(d))) {
        pid_t tid = (pid_t)atoi(e->d_name);
        if (tid <= 0)
            continue;
        if (p->nthreads == MAX_THREADS) {
            closedir(d);
            return -1;
        }
        t->state[t->ntid] = thread_state(t->pid, tid);
        t->tid[t->ntid++] = tid;
        p->nthreads++;
    }
    closedir(d);
    sort_threads(t);
    for (int k = 0; k < t->ntid; k++)
        t->asleep[k] = t->state[k] != 'R' &&
                       read_syscall(t->pid, t->tid[k], &t->sp[k], &t->pc[k]);
    return t->ntid > 0 ? 0 : -1;
}

/* Does the maps line name a Python interpreter's file (python3.11,
 * libpython3.11.so.1.0)? */
static int interp_path(const char *line)
{
    const char *slash = strrchr(line, '/');

    return slash && (strncmp(slash + 1, "python", 6) == 0 ||
                     strncmp(slash + 1, "libpython", 9) == 0);
}

/* t's mappings from /proc/PID/maps.  0, or -1. */
static int read_maps(struct target *t)
{
    char path[64], line[4608], perm[8];
    unsigned long long lo, hi;
    FILE *f;

    snprintf(path, sizeof path, "/proc/%d/maps", (int)t->pid);
    if (!(f = fopen(path, "re")))
        return -1;
    t->maps = malloc(MAX_MAPS * sizeof *t->maps);
    while (t->maps && fgets(line, sizeof line, f)) {
        if (sscanf(line, "%llx-%llx %7s", &lo, &hi, perm) != 3)
            continue;
        if (t->nmaps == MAX_MAPS) {
            t->nmaps = 0;
            break;
        }
        t->maps[t->nmaps++] = (struct map){ lo, hi, perm[2] == 'x',
                                            interp_path(line) };
    }
    fclose(f);
    return t->nmaps > 0 ? 0 : -1;
}

/* The mapping of t holding a (binary search), or NULL.  Signal-safe. */
static const struct map *map_of(const struct target *t, unsigned long long a)
{
    int lo = 0, hi = t->nmaps - 1;

    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (a < t->maps[mid].lo)
            hi = mid - 1;
        else if (a >= t->maps[mid].hi)
            lo = mid + 1;
        else
            return &t->maps[mid];
    }
    return NULL;
}

/* Stop tid and read its stack pointer and program counter (it goes on
 * at PTRACE_DETACH).  0, or -1.  Signal-safe. */
static int stop_regs(pid_t tid, unsigned long long *sp, unsigned long long *pc)
{
#if defined(__x86_64__) || defined(__aarch64__)
    struct user_regs_struct regs;
    struct iovec io = { &regs, sizeof regs };
    int st, rc = -1;

    if (ptrace(PTRACE_SEIZE, tid, 0, 0) < 0)
        return -1;
    if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) == 0 &&
        waitpid(tid, &st, __WALL) == tid && WIFSTOPPED(st) &&
        ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRSTATUS, &io) == 0) {
#if defined(__x86_64__)
        *sp = regs.rsp;
        *pc = regs.rip;
#else
        *sp = regs.sp;
        *pc = regs.pc;
#endif
        rc = 0;
    }
    return rc;
#else
    (void)tid;
    (void)sp;
    (void)pc;
    return -1;
#endif
}

/* Is a in t's interpreter code (a Python's executable or library)? */
static int in_interp(const struct target *t, unsigned long long a)
{
    const struct map *m = map_of(t, a);

    return m && m->interp;
}

/* Thread k of t's section of the signature: a running thread is stopped
 * while its stack is read (one asleep in a system call is not: stopping
 * it would end some calls with EINTR); marked STALL_INTERP when it was
 * running with the interpreter's code at the top of its stack.  0, or -1.
 * Signal-safe. */
static int one_thread(struct probe *p, const struct target *t, int k)
{
    unsigned long long sp = 0, pc = 0, w, top = 0;
    const struct map *m;
    struct iovec local, remote;
    ssize_t got = -1;
    size_t len, head = p->n;
    int stopped = !t->asleep[k] && stop_regs(t->tid[k], &sp, &pc) == 0;

    if (t->asleep[k]) {         /* asleep: its stack holds still as it is */
        sp = t->sp[k];
        pc = t->pc[k];
    }
    if ((stopped || t->asleep[k]) && (m = map_of(t, sp)) &&
        m->hi - (sp & ~7ULL) <= STACK_MAX) {
        len = (size_t)(m->hi - (sp & ~7ULL));
        local = (struct iovec){ p->stack, len };
        remote = (struct iovec){ (void *)(uintptr_t)(sp & ~7ULL), len };
        got = process_vm_readv(t->pid, &local, 1, &remote, 1, 0);
    }
    if (!t->asleep[k])
        ptrace(PTRACE_DETACH, t->tid[k], 0, 0);
    if (got <= 0 || p->n >= p->max)
        return -1;
    p->sig[p->n++] = STALL_THREAD | (unsigned long long)t->tid[k];
    for (ssize_t at = (got & ~7) - 8; at >= 0; at -= 8) {
        memcpy(&w, p->stack + at, sizeof w);
        if (!(m = map_of(t, w)) || !m->exec)
            continue;
        if (p->n >= p->max)
            return -1;
        p->sig[p->n++] = top = w;
    }
    if (t->state[k] == 'R' && (in_interp(t, pc) || in_interp(t, top)))
        p->sig[head] |= STALL_INTERP;
    return 0;
}

/* The helper: every thread's section down the pipe, exit 0; else 1. */
static void helper(struct probe *p, int fd)
{
    const unsigned char *b = (const unsigned char *)p->sig;
    size_t left;

    for (int i = 0; i < p->nt; i++) {
        if (p->n >= p->max)
            _exit(1);
        p->sig[p->n++] = STALL_THREAD | STALL_REAPED | p->t[i].reaped;
        for (int k = 0; k < p->t[i].ntid; k++)
            if (one_thread(p, &p->t[i], k) < 0)
                _exit(1);
    }
    left = p->n * sizeof *p->sig;
    while (left > 0) {
        ssize_t w = write(fd, b, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            _exit(1);
        b += w;
        left -= (size_t)w;
    }
    _exit(0);
}

/* The helper's words from fd into p->sig until EOF or timeout_ms. */
static long collect(struct probe *p, int fd, pid_t child, int timeout_ms)
{
    unsigned char *b = (unsigned char *)p->sig;
    size_t got = 0, cap = p->max * sizeof *p->sig;
    long deadline = clock_ms() + timeout_ms;
    int st = 0, late = 0;

    for (;;) {
        struct pollfd pf = { fd, POLLIN, 0 };
        long left = deadline - clock_ms();
        int ready = left > 0 ? poll(&pf, 1, (int)left) : 0;
        ssize_t r;
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready <= 0 || got == cap) {
            kill(child, SIGKILL);   /* its tracees go on when it ends */
            late = 1;
            break;
        }
        r = read(fd, b + got, cap - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    while (waitpid(child, &st, 0) < 0 && errno == EINTR)
        ;
    if (late || !WIFEXITED(st) || WEXITSTATUS(st) != 0 ||
        got % sizeof *p->sig)
        return -1;
    return (long)(got / sizeof *p->sig);
}

/* The signature of the nt processes pids (pid order) into sig (max
 * words), through a helper.  The words, or -1. */
static long probe(const pid_t *pids, int nt, unsigned long long *sig,
                  size_t max, int timeout_ms)
{
    struct probe *p = calloc(1, sizeof *p);
    int fd[2] = { -1, -1 };
    long rc = -1;
    pid_t child;

    if (!p || nt <= 0)
        goto out;
    for (int i = 0; i < nt; i++) {
        struct target *t = &p->t[p->nt++];
        struct procstat st;
        t->pid = pids[i];
        if (procstat_read(t->pid, &st) < 0 || find_threads(p, t) < 0 ||
            read_maps(t) < 0)
            goto out;
        t->reaped = (st.cutime + st.cstime) & (STALL_REAPED - 1);
    }
    p->sig = sig;
    p->max = max;
    if (!(p->stack = malloc(STACK_MAX)) || pipe2(fd, O_CLOEXEC) < 0)
        goto out;
    child = fork();
    if (child == 0) {
        close(fd[0]);
        helper(p, fd[1]);
    }
    close(fd[1]);
    fd[1] = -1;
    if (child > 0)
        rc = collect(p, fd[0], child, timeout_ms);
out:
    if (fd[0] >= 0)
        close(fd[0]);
    if (fd[1] >= 0)
        close(fd[1]);
    for (int i = 0; p && i < p->nt; i++)
        free(p->t[i].maps);
    if (p)
        free(p->stack);
    free(p);
    return rc;
}

void stacksig_groups(const pid_t *pgrps, const int *want, int n,
                     unsigned long long *const *sig, size_t max, long *len,
                     int timeout_ms)
{
    pid_t *procs = malloc((size_t)(n > 0 ? n : 1) * MAX_PROCS * sizeof *procs);
    int *count = calloc((size_t)(n > 0 ? n : 1), sizeof *count);
    int ok = procs && count && find_procs(pgrps, want, n, procs, count) == 0;
    long deadline = clock_ms() + timeout_ms;

    for (int i = 0; i < n; i++) {
        long left = deadline - clock_ms();
        len[i] = ok && want[i] && left > 0 ?
                 probe(procs + i * MAX_PROCS, count[i], sig[i], max,
                       (int)left) : -1;
    }
    free(procs);
    free(count);
}

long stacksig_group(pid_t pgrp, unsigned long long *sig, size_t max,
                    int timeout_ms)
{
    int want = 1;
    long len = -1;

    stacksig_groups(&pgrp, &want, 1, &sig, max, &len, timeout_ms);
    return len;
}
