/* t_alloc_hosts.c - the allocations the user states and the fallback, on
 * their own (detect and read): -H, --hostfile (read from disk, missing,
 * a folder), and this host alone (its usable CPUs as slots, one rank per
 * GPU that CUDA_VISIBLE_DEVICES shows, else one). */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "where/alloc.h"
#include "fixture.h"
#include "tap.h"

#define HOSTS "hosts"

static const struct source_row rows[] = {
    { "-H list", HOSTS, { NULL }, NULL, { .hosts = "a:2,b" }, 1, "a:2,b:1",
      NULL },
    { "no -H", HOSTS, { NULL }, NULL, { 0 }, 0, NULL, "needs -H" },
    { "-H bad", HOSTS, { NULL }, NULL, { .hosts = "a:0" }, 1, NULL, "a:0" },
};

static void hostfile(void)
{
    char path[] = "/tmp/dlrun-t-hostfile.XXXXXX";
    int fd = mkstemp(path);
    const char *text = "# two nodes\nn1 slots=2\nn2 slots=2\n";
    struct alloc_request req = { .hostfile = path };
    struct alloc a = { 0 };
    struct err err = { "" };
    char *envp[] = { NULL };

    ok(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text),
       "a host file");
    close(fd);
    ok(alloc_source_hostfile.detect(&req, envp), "--hostfile detected");
    ok(alloc_source_hostfile.read(&req, envp, &a, &err) == 0 &&
       !strcmp(alloc_nodes_str(&a), "n1:2,n2:2"), "--hostfile read");
    alloc_free(&a);
    unlink(path);
    ok(alloc_source_hostfile.read(&req, envp, &a, &err) < 0 &&
       strstr(err.msg, "cannot open host file") && strstr(err.msg, path),
       "a host file that is gone: named");
    alloc_free(&a);
    ok(alloc_read_hostfile("/", &a, &err) < 0 &&
       strstr(err.msg, "cannot read host file /"), "a folder: cannot read");
    alloc_free(&a);
    req.hostfile = NULL;
    ok(!alloc_source_hostfile.detect(&req, envp), "no --hostfile: not detected");
}

static void local(void)
{
    const char *three[] = { "CUDA_VISIBLE_DEVICES=0,1,5", NULL };
    const char *none[] = { "CUDA_VISIBLE_DEVICES=", NULL };
    char **e3 = envp_of(three), **e0 = envp_of(none), host[256] = "";
    struct alloc_request req = { 0 };
    struct alloc a = { 0 };
    struct err err = { "" };
    cpu_set_t set;

    CPU_ZERO(&set);
    sched_getaffinity(0, sizeof set, &set);
    gethostname(host, sizeof host - 1);
    is_int(alloc_local_gpu_count(e3), 3, "CUDA_VISIBLE_DEVICES=0,1,5: 3 GPUs");
    is_int(alloc_local_gpu_count(e0), 0, "CUDA_VISIBLE_DEVICES empty: none");
    ok(alloc_source_local.detect(&req, e0), "local: always detected");
    ok(alloc_source_local.read(&req, e3, &a, &err) == 0 && a.nnodes == 1,
       "local: one node");
    ok(a.nnodes == 1 && a.nodes[0].slots == CPU_COUNT(&set) &&
       a.nodes[0].cpus == CPU_COUNT(&set), "  the CPUs it may use as slots");
    ok(a.nnodes == 1 && strncmp(a.nodes[0].name, host, strcspn(host, ".")) == 0,
       "  named as this host");
    is_int(a.default_ranks, 3, "  a rank per visible GPU by default");
    alloc_free(&a);
    alloc_source_local.read(&req, e0, &a, &err);
    is_int(a.default_ranks, 1, "no GPU: one rank by default");
    ok(strstr(a.why, "no GPU seen") != NULL, "  and why says so");
    alloc_free(&a);
    envp_free(e3);
    envp_free(e0);
}

int main(void)
{
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        source_row_check(&rows[i]);
    hostfile();
    local();
    return tap_done();
}
