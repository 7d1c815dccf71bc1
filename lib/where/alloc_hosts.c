/* alloc_hosts.c - allocations the user states (-H, --hostfile) and the
 * fallback of this host alone. */
#include "where/alloc.h"

#include <dirent.h>
#include <sched.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "where/hostfile.h"
#include "util/readall.h"

#define HOSTFILE_MAX (16 << 20)

static int hosts_detect(const struct alloc_request *req, char **envp)
{
    (void)envp;
    return req->hosts != NULL;
}

static int hosts_read(const struct alloc_request *req, char **envp,
                      struct alloc *a, struct err *err)
{
    (void)envp;
    if (!req->hosts)
        return err_set(err, "--alloc hosts needs -H host1:N,host2:N");
    snprintf(a->why, sizeof a->why, "-H %.200s", req->hosts);
    return hosts_parse(req->hosts, a, err);
}

const struct alloc_source alloc_source_hosts = {
    .name = "hosts", .kind = ALLOC_HOSTS,
    .detect = hosts_detect, .read = hosts_read,
};

/* Whole file into a malloc'd NUL-terminated string (caller frees). */
static char *read_text(const char *path, struct err *err)
{
    FILE *f = fopen(path, "r");
    char *buf = NULL;
    size_t n = 0;

    if (!f) {
        err_set(err, "cannot open host file %s: %s", path, strerror(errno));
        return NULL;
    }
    buf = read_all(f, HOSTFILE_MAX, &n);
    if (!buf)
        err_set(err, "cannot read host file %s: %s", path,
                errno == EFBIG ? "larger than 16 MiB" : strerror(errno));
    fclose(f);
    return buf;
}

int alloc_read_hostfile(const char *path, struct alloc *a, struct err *err)
{
    char *text = read_text(path, err);
    int rc;

    if (!text)
        return -1;
    rc = hostfile_parse(text, path, a, err);
    free(text);
    return rc;
}

static int hostfile_detect(const struct alloc_request *req, char **envp)
{
    (void)envp;
    return req->hostfile != NULL;
}

static int hostfile_read(const struct alloc_request *req, char **envp,
                         struct alloc *a, struct err *err)
{
    (void)envp;
    if (!req->hostfile)
        return err_set(err, "--alloc hostfile needs --hostfile FILE");
    snprintf(a->why, sizeof a->why, "--hostfile %.200s", req->hostfile);
    return alloc_read_hostfile(req->hostfile, a, err);
}

const struct alloc_source alloc_source_hostfile = {
    .name = "hostfile", .kind = ALLOC_HOSTFILE,
    .detect = hostfile_detect, .read = hostfile_read,
};

int alloc_local_gpu_count(char **envp)
{
    const char *cvd = alloc_getenv(envp, "CUDA_VISIBLE_DEVICES");
    DIR *d;
    struct dirent *e;
    int n = 0;

    if (cvd) {
        if (!*cvd)
            return 0;
        for (n = 1; *cvd; cvd++)
            n += *cvd == ',';
        return n;
    }
    d = opendir("/proc/driver/nvidia/gpus");
    if (!d)
        return 0;
    while ((e = readdir(d)))
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static int local_detect(const struct alloc_request *req, char **envp)
{
    (void)req;
    (void)envp;
    return 1;
}

/* The CPUs this process may run on (taskset, a cgroup's cpuset, srun's
 * binding narrow them): the slots of this host.  One system call, where
 * counting the online CPUs reads sysfs. */
static long usable_cpus(void)
{
    cpu_set_t set;

    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    return sysconf(_SC_NPROCESSORS_ONLN);
}

static int local_read(const struct alloc_request *req, char **envp,
                      struct alloc *a, struct err *err)
{
    char host[256] = "localhost";
    long cpus = usable_cpus();
    int gpus = alloc_local_gpu_count(envp);

    (void)req;
    alloc_this_host(host, sizeof host);
    if (alloc_add_node(a, host, cpus > 0 ? (int)cpus : 1, 0, err) < 0)
        return -1;
    a->nodes[0].cpus = a->nodes[0].slots;
    a->default_ranks = gpus > 0 ? gpus : 1;
    snprintf(a->why, sizeof a->why, "no scheduler variables found: this host "
             "alone, %d slot%s (the CPUs it may use); %d rank%s by default "
             "(%s)", a->nodes[0].slots, a->nodes[0].slots == 1 ? "" : "s",
             a->default_ranks,
             a->default_ranks == 1 ? "" : "s",
             gpus > 0 ? "one per GPU" : "no GPU seen");
    return 0;
}

const struct alloc_source alloc_source_local = {
    .name = "local", .kind = ALLOC_LOCAL,
    .detect = local_detect, .read = local_read,
};
