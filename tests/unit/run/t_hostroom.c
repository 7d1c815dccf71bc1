/* t_hostroom.c - whether a job fits this host: the judging fed made-up
 * limits, the reading fed a folder that looks like /proc and /sys. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run/hostroom.h"
#include "tap.h"

/* A host with room for everything: no limit set, nothing in use. */
static struct hostroom roomy(void)
{
    return (struct hostroom){
        .nofile = -1, .nofile_hard = -1, .nproc = -1, .nproc_used = -1,
        .pid_max = -1, .threads_max = -1, .tasks = -1, .cg_pids_max = -1,
        .mem_avail = -1, .cg_mem_max = -1,
    };
}

static struct hostroom_need need(long long procs, long long fds,
                                 long long bytes)
{
    return (struct hostroom_need){ .who = "5000 ranks on vm", .procs = procs,
                                   .fds = fds, .bytes = bytes };
}

/* check refuses n on h with a line that holds each of want (NULL-ended). */
static void refuses(const struct hostroom *h, struct hostroom_need n,
                    const char *what, const char *const *want)
{
    struct err err = { "" };
    int all = hostroom_check(h, &n, &err) == -1;

    for (; *want; want++)
        all = all && strstr(err.msg, *want) != NULL;
    ok(all, what);
    if (!all)
        printf("# said: %s\n", err.msg);
}

static void fits(const struct hostroom *h, struct hostroom_need n,
                 const char *what)
{
    struct err err = { "" };

    ok(hostroom_check(h, &n, &err) == 0 && !err.msg[0], what);
}

static void judging(void)
{
    struct hostroom h = roomy();

    fits(&h, need(1000000, 4000000, 1LL << 50), "no limits: anything fits");
    h.pid_max = 32768;
    h.tasks = 168;
    fits(&h, need(32600, 0, 0), "pid_max: 32,600 of the 32,600 left fit");
    refuses(&h, need(32601, 0, 0), "pid_max: one more is refused",
            (const char *[]){ "5000 ranks on vm need 32,601 processes",
                              "32,768 process ids (kernel.pid_max), 168 in "
                              "use", "sysctl kernel.pid_max", NULL });
    h = roomy();
    h.threads_max = 1000;
    h.tasks = 100;
    refuses(&h, need(901, 0, 0), "threads-max",
            (const char *[]){ "kernel.threads-max", "1,000 tasks", NULL });
    h = roomy();
    h.cg_pids_max = 500;
    h.cg_pids_used = 10;
    snprintf(h.cg_pids, sizeof h.cg_pids, "/user.slice/u-1000");
    fits(&h, need(490, 0, 0), "pids.max: the room left fits");
    refuses(&h, need(491, 0, 0), "pids.max names the cgroup",
            (const char *[]){ "the cgroup /user.slice/u-1000 allows 500 "
                              "(pids.max), 10 in use", NULL });
    h = roomy();
    h.nproc = 300;
    h.nproc_used = -1;      /* not counted: nothing in use assumed */
    fits(&h, need(300, 0, 0), "ulimit -u: the limit itself fits");
    h.nproc_used = 12;
    refuses(&h, need(289, 0, 0), "ulimit -u counts what the user runs",
            (const char *[]){ "your limit is 300 (ulimit -u), 12 in use",
                              NULL });
}

static void files_and_memory(void)
{
    struct hostroom h = roomy();

    h.nofile = h.nofile_hard = 1024;
    fits(&h, need(10, 1024, 0), "open files: up to the limit");
    refuses(&h, need(5000, 20032, 0), "open files over the limit",
            (const char *[]){ "need about 20,032 open files",
                              "the limit is 1,024 (ulimit -n; hard limit "
                              "1,024)", NULL });
    h.nofile_hard = -1;
    refuses(&h, need(5000, 20032, 0), "an unlimited hard limit is said so",
            (const char *[]){ "hard limit unlimited", NULL });
    h = roomy();
    h.mem_avail = 1LL << 30;
    fits(&h, need(1, 0, 1LL << 30), "memory: MemAvailable itself fits");
    refuses(&h, need(1, 0, (1LL << 30) + 1), "memory over MemAvailable",
            (const char *[]){ "need about 1,025 MiB of memory",
                              "1,024 MiB available (MemAvailable", NULL });
    h.cg_mem_max = 512LL << 20;
    h.cg_mem_used = 256LL << 20;
    snprintf(h.cg_mem, sizeof h.cg_mem, "/job_42");
    refuses(&h, need(1, 0, 300LL << 20), "memory over the cgroup's room",
            (const char *[]){ "the cgroup /job_42 has 256 MiB left", NULL });
    /* processes first: a fork that fails leaves a job half started */
    h.pid_max = 100;
    h.tasks = 0;
    h.nofile = 10;
    refuses(&h, need(101, 1000, 1LL << 40), "the process limit comes first",
            (const char *[]){ "kernel.pid_max", NULL });
}

static void put(const char *root, const char *path, const char *text)
{
    char p[4096], *slash;
    FILE *f;

    snprintf(p, sizeof p, "%s%s", root, path);
    for (slash = strchr(p + strlen(root) + 1, '/'); slash;
         slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        mkdir(p, 0700);
        *slash = '/';
    }
    f = fopen(p, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void reading(void)
{
    char root[] = "/tmp/t_hostroom.XXXXXX", cmd[64];
    struct hostroom h;
    struct rlimit rl;

    if (!mkdtemp(root)) {
        ok(0, "a scratch folder");
        return;
    }
    put(root, "/proc/loadavg", "0.50 0.40 0.30 2/345 12345\n");
    put(root, "/proc/meminfo", "MemTotal: 100 kB\nMemAvailable:   2048 kB\n");
    put(root, "/proc/sys/kernel/pid_max", "32768\n");
    put(root, "/proc/sys/kernel/threads-max", "192730\n");
    put(root, "/proc/self/cgroup", "9:memory:/batch/job_7\n8:pids:/batch\n"
                                   "0::/user.slice/u.scope\n");
    /* v2: the folder above is tighter (1000 - 900) than its own */
    put(root, "/sys/fs/cgroup/user.slice/u.scope/pids.max", "max\n");
    put(root, "/sys/fs/cgroup/user.slice/u.scope/pids.current", "5\n");
    put(root, "/sys/fs/cgroup/user.slice/pids.max", "1000\n");
    put(root, "/sys/fs/cgroup/user.slice/pids.current", "900\n");
    /* v1: pids 2000 - 10 has more room; memory 4 MiB - 1 MiB */
    put(root, "/sys/fs/cgroup/pids/batch/pids.max", "2000\n");
    put(root, "/sys/fs/cgroup/pids/batch/pids.current", "10\n");
    put(root, "/sys/fs/cgroup/memory/batch/job_7/memory.limit_in_bytes",
        "4194304\n");
    put(root, "/sys/fs/cgroup/memory/batch/job_7/memory.usage_in_bytes",
        "1048576\n");
    put(root, "/sys/fs/cgroup/memory/batch/memory.limit_in_bytes",
        "9223372036854771712\n");
    put(root, "/sys/fs/cgroup/memory/batch/memory.usage_in_bytes", "5\n");
    hostroom_read(&h, root, 1);
    is_int(h.tasks, 345, "tasks: /proc/loadavg's 4th field");
    is_int(h.pid_max, 32768, "kernel.pid_max");
    is_int(h.threads_max, 192730, "kernel.threads-max");
    is_int(h.mem_avail, 2048 * 1024, "MemAvailable in bytes");
    is_int(h.cg_pids_max, 1000, "pids.max: the tightest folder above");
    is_int(h.cg_pids_used, 900, "  and its pids.current");
    is_str(h.cg_pids, "/user.slice", "  and its path");
    is_int(h.cg_mem_max, 4194304, "v1 memory.limit_in_bytes (no limit "
           "above: the huge number)");
    is_str(h.cg_mem, "/batch/job_7", "  and its path");
    getrlimit(RLIMIT_NOFILE, &rl);
    is_int(h.nofile, rl.rlim_cur == RLIM_INFINITY ? -1 : (long)rl.rlim_cur,
           "RLIMIT_NOFILE, this process's");
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    ok(system(cmd) == 0, "scratch removed");
}

static void raising(void)
{
    struct rlimit rl, was;

    getrlimit(RLIMIT_NOFILE, &was);
    rl = was;
    if (rl.rlim_max > 64) {
        rl.rlim_cur = 64;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    hostroom_raise_nofile();
    getrlimit(RLIMIT_NOFILE, &rl);
    ok(rl.rlim_cur == was.rlim_max, "the soft open-file limit is raised to "
       "the hard one");
    setrlimit(RLIMIT_NOFILE, &was);
}

int main(void)
{
    judging();
    files_and_memory();
    reading();
    raising();
    return tap_done();
}
