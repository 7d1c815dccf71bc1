/* check.c - `dlrun check`: what this build and this machine offer, like
 * `horovodrun --check-build`. */
#include <dlfcn.h>
#include <hwloc.h>
#include <libssh/libssh.h>
#include <stdio.h>
#include <string.h>

#include "where/alloc.h"
#include "cmd.h"
#include "where/pmixc.h"
#include "mpi/pmix_host.h"
#include "place/topo.h"
#include "run/cgroup.h"
#include "util/optparse.h"

extern char **environ;

/* The first of the sonames that dlopen finds, or NULL. */
static const char *find_library(const char *const *names)
{
    for (; *names; names++) {
        void *h = dlopen(*names, RTLD_LAZY | RTLD_LOCAL);
        if (h) {
            dlclose(h);
            return *names;
        }
    }
    return NULL;
}

static void print_runtime_libs(void)
{
    static const char *const nccl[] = { "libnccl.so.2", "libnccl.so", NULL };
    static const char *const cuda[] = {
        "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0",
        "libcudart.so", NULL,
    };
    static const char *const nvml[] = { "libnvidia-ml.so.1", NULL };
    const char *n = find_library(nccl), *c = find_library(cuda),
               *m = find_library(nvml);

    printf("  NCCL (run time):     %s\n", n ? n : "not found (dlopen)");
    printf("  CUDA runtime:        %s\n", c ? c : "not found (dlopen)");
    printf("  NVML:                %s\n", m ? m : "not found (dlopen)");
}

static void print_build(void)
{
    printf("dlrun %s\n", DLRUN_VERSION);
    printf("built with:\n");
    /* the headers' version: the library is opened (lib/place/hwlocdl.h) for the
     * topology below, whose line says which one was loaded */
    printf("  hwloc:               yes (compiled against %d.%d, libhwloc.so.15 "
           "opened when needed)\n", HWLOC_API_VERSION >> 16,
           (HWLOC_API_VERSION >> 8) & 0xff);
    /* the headers' version: calling into libssh would load it (and
     * OpenSSL, Kerberos) at every launch, which only ssh agents need */
    printf("  libssh:              yes (built with %d.%d.%d)\n",
           LIBSSH_VERSION_MAJOR, LIBSSH_VERSION_MINOR, LIBSSH_VERSION_MICRO);
#ifdef HAVE_PMIX
    printf("  PMIx:                yes (%s)\n", pmixc_version() ?
           pmixc_version() : "libpmix.so.2 cannot be loaded");
#else
    printf("  PMIx:                no (install libpmix-dev and rebuild)\n");
#endif
    printf("  PMIx hosting:        %s\n", pmix_host_available() ?
           "yes (MPI programs run without mpirun: --mpi=auto|pmix)" :
           "no (install libpmix-dev and rebuild; --mpi=srun still works)");
    print_runtime_libs();
}

static void print_alloc(void)
{
    struct alloc_request req = { 0 };
    struct alloc a = { 0 };
    struct err err = { "" };
    const char *const *names = alloc_source_names();

    printf("allocation sources, in probing order:");
    for (; *names; names++)
        printf(" %s", *names);
    printf("\n");
    if (alloc_detect(&req, environ, &a, &err) < 0) {
        printf("detected:              error: %s\n", err.msg);
        return;
    }
    printf("detected:              %s (%s), %zu node%s, %d slot%s\n", a.source,
           a.why, a.nnodes, a.nnodes == 1 ? "" : "s", alloc_slots(&a),
           alloc_slots(&a) == 1 ? "" : "s");
    alloc_free(&a);
}

/* Whether a run here would put its ranks in a cgroup of the job's own
 * (dlrun(1), Launch mode), and what that means. */
static void print_cgroup(void)
{
    const char *off = getenv("DLRUN_CGROUP");
    struct err err = { "" };
    char base[4096];

    if (off && strcmp(off, "0") == 0)
        snprintf(err.msg, sizeof err.msg, "DLRUN_CGROUP=0");
    else if (cgroup_probe(base, sizeof base, &err) == 0) {
        printf("job cgroup:            yes, below %s (whatever the ranks "
               "start ends with the job)\n", base);
        return;
    }
    printf("job cgroup:            no (%s): the guard ends the ranks' groups "
           "and what carries DLRUN_JOB_MARK; a daemon that calls setsid and "
           "empties its environment outlives a dlrun killed with SIGKILL\n",
           err.msg);
}

enum { CHECK_HELP = 'h', CHECK_NODES = 'N' };

static const struct optp_opt check_opts[] = {
    { "nodes", CHECK_NODES, 0, 0, 0, NULL },
    { "h", CHECK_HELP, 0, 0, 0, NULL },
    { "help", CHECK_HELP, 0, 0, 0, NULL },
    { NULL, 0, 0, 0, 0, NULL },
};

/* -h; -nodes as --nodes (the only other option, so argv[1]): 3. */
static int check_option(void *ctx, const struct optp_hit *h)
{
    (void)ctx;
    if (h->opt->code == CHECK_NODES)
        return 3;
    printf("usage: dlrun check [--nodes [OPTIONS] [-- PROG]]\nShow the "
           "version, compiled-in features, run-time libraries, the detected "
           "allocation and this machine's topology; with --nodes, check "
           "every node of the allocation (dlrun check --nodes --help).\n");
    return 1;
}

int cmd_check(int argc, char **argv)
{
    static const struct optp p = { check_opts, "check", 0, 0, NULL };
    struct topo_summary t = { 0 };
    struct err err = { "" };
    int first = argc, rc;

    if (argc > 1 && strcmp(argv[1], "--nodes") == 0)
        return cmd_check_nodes(argc - 1, argv + 1);
    rc = optp_parse(&p, argc, argv, &first, check_option, NULL);
    if (rc == 3)
        return cmd_check_nodes(argc - 1, argv + 1);
    if (rc != 0)
        return rc == 1 ? EXIT_OK : rc;
    if (first < argc)
        return cmd_fail(EXIT_USAGE, "check: unexpected argument '%s' (dlrun "
                        "check --nodes checks the allocation's nodes)",
                        argv[first]);
    print_build();
    print_alloc();
    print_cgroup();
    if (topo_summarize(&t, &err) < 0)
        printf("topology:              error: %s\n", err.msg);
    else
        printf("topology:              %d package%s, %d NUMA node%s, %d cores, "
               "%d PUs, %d NVIDIA GPU%s (hwloc %s)\n", t.packages,
               t.packages == 1 ? "" : "s", t.numas, t.numas == 1 ? "" : "s",
               t.cores, t.pus, t.gpus, t.gpus == 1 ? "" : "s", t.hwloc_version);
    return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAIL;
}
