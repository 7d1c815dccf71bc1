/* t_pmixc.c - the PMIx client dlrun uses, against the hosted PMIx server
 * (lib/mpi/pmix_host) in this process: two ranks (this binary exec'd as
 * "client" with the server's variables) read who they are and every
 * rank's host, and agree on rank 0's address and port; the checks of the
 * environment that say whether a PMIx server started this task.  Without
 * PMIx compiled in, every call says so. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "where/alloc.h"
#include "fixture.h"
#include "where/pmixc.h"
#include "tap.h"

static void usable(void)
{
    static const struct { const char *env[4]; int want; const char *what; } rows[] = {
        { { NULL }, 0, "no PMIx variables: not usable" },
        { { "PMIX_NAMESPACE=ns", NULL }, 0, "a namespace without a rank: not" },
        { { "PMIX_NAMESPACE=ns", "PMIX_RANK=0", NULL }, 1,
          "namespace and rank: usable" },
        { { "PMIX_NAMESPACE=ns", "PMIX_RANK=0", "OMPI_COMM_WORLD_RANK=0", NULL },
          0, "under mpirun, which sets its own rank variables: not" },
    };
#ifndef HAVE_PMIX
    struct alloc a = { 0 };
    struct err err = { "" };
#endif

    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char **envp = envp_of(rows[i].env);
#ifdef HAVE_PMIX
        is_int(pmixc_usable(envp), rows[i].want, rows[i].what);
#else
        is_int(pmixc_usable(envp), 0, "without PMIx: never usable");
#endif
        envp_free(envp);
    }
#ifndef HAVE_PMIX
    ok(pmixc_read_alloc(&a, &err) < 0 && strstr(err.msg, "not compiled in"),
       "without PMIx: read_alloc says why");
    ok(pmixc_version() == NULL, "without PMIx: no version");
    pmixc_finalize();
#endif
}

#ifdef HAVE_PMIX
#include "util/envset.h"
#include "where/hostfile.h"
#include "place/plan.h"
#include "mpi/pmix_host.h"

extern char **environ;

/* A rank: what pmixc reads and agrees, one line. */
static int run_client(void)
{
    struct alloc a = { 0 }, b = { 0 };
    struct err err = { "" };
    char addr[64] = "";
    int port = 0, rc;
    const char *v = pmixc_version();

    rc = pmixc_read_alloc(&a, &err);
    if (rc == 0 && a.task.rank == 0) {
        snprintf(addr, sizeof addr, "10.0.0.5");
        port = 12345;
    }
    if (rc == 0)
        rc = pmixc_read_hosts(&b, a.task.rank, a.task.size, &err);
    if (rc == 0)
        rc = pmixc_agree_master(a.task.rank, addr, sizeof addr, &port, &err);
    if (rc < 0)
        printf("rank ? error %s\n", err.msg);
    else
        printf("rank %d size %d local %d/%d nodes %zu/%zu %s task_node %d "
               "master %s:%d version %s\n", a.task.rank, a.task.size,
               a.task.local_rank, a.task.local_size, a.nnodes, b.nnodes,
               a.nodes[0].name, a.task_node[1], addr, port, v ? "yes" : "no");
    pmixc_finalize();
    pmixc_finalize();           /* idempotent */
    alloc_free(&a);
    alloc_free(&b);
    return rc < 0;
}

static pid_t start_client(struct pmix_host *s, int rank, FILE *out)
{
    struct envset e = { .no_from = 1 };
    struct err err = { "" };
    char *argv[] = { "t_pmixc", "client", NULL }, **envp;
    pid_t pid = -1;

    if (pmix_host_rank_env(s, rank, &e, &err) == 0 &&
        (envp = envset_envp(&e, environ))) {
        fflush(NULL);
        if ((pid = fork()) == 0) {
            dup2(fileno(out), 1);
            execve("/proc/self/exe", argv, envp);
            _exit(127);
        }
        envset_free_envp(envp);
    }
    envset_free(&e);
    return pid;
}

static void with_server(void)
{
    struct alloc a = { 0 };
    struct plan p = { 0 };
    struct plan_request req = { 0 };
    struct err err = { "" };
    int ranks[2] = { 0, 1 }, good = 0, st;
    struct pmix_host_opts o = { .plan = &p, .ranks = ranks, .nranks = 2,
                                .job_id = "pmixc" };
    struct pmix_host *s = NULL;
    FILE *out = tmpfile();
    char buf[1024] = "";
    pid_t pid[2];

    if (hosts_parse("localhost:2", &a, &err) < 0 ||
        plan_build(&a, &req, &p, &err) < 0 || !out ||
        !(s = pmix_host_start(&o, &err)) ||
        pmix_host_job_begin(s, 0, &err) < 0) {
        ok(0, "a hosted PMIx server for two ranks");
        printf("# %s\n", err.msg);
        goto out;
    }
    for (int r = 0; r < 2; r++)
        pid[r] = start_client(s, r, out);
    for (int r = 0; r < 2; r++)
        good += pid[r] > 0 && waitpid(pid[r], &st, 0) == pid[r] &&
                WIFEXITED(st) && WEXITSTATUS(st) == 0;
    is_int(good, 2, "both ranks read, agreed and finalized");
    pmix_host_job_end(s);
    rewind(out);
    buf[fread(buf, 1, sizeof buf - 1, out)] = '\0';
    ok(strstr(buf, "rank 0 size 2 local 0/2 nodes 1/1 localhost task_node 0 "
                   "master 10.0.0.5:12345 version yes\n") != NULL,
       "rank 0: itself, the one node, every rank's node, its own address");
    ok(strstr(buf, "rank 1 size 2 local 1/2 nodes 1/1 localhost task_node 0 "
                   "master 10.0.0.5:12345 version yes\n") != NULL,
       "rank 1: itself, and rank 0's address and port agreed");
    if (!strstr(buf, "rank 1 size 2"))
        printf("# output: %s\n", buf);
out:
    pmix_host_stop(s);
    if (out)
        fclose(out);
    plan_free(&p);
    alloc_free(&a);
}
#endif

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
#ifdef HAVE_PMIX
    if (argc > 1 && strcmp(argv[1], "client") == 0)
        return run_client();
    signal(SIGPIPE, SIG_IGN);
    alarm(300);     /* hang guard */
#endif
    usable();
#ifdef HAVE_PMIX
    with_server();
#endif
    return tap_done();
}
