/* t_jobpmi.c - the simple PMI wire in a job on one host: the server made
 * for every rank of the plan (a part of it refused in one line), a
 * rank's variables, the supervisor's hook polling the PMI sockets and a
 * broker's fd as one epoll set, and a rank's MPI_Abort: said once, that
 * rank killed, the job's code its code. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "job/job.h"
#include "mpi/pmi_serve.h"
#include "run/supervise.h"
#include "util/say.h"
#include "where/hostfile.h"
#include "said.h"
#include "tap.h"

static int job_on(struct job *j, const char *hosts)
{
    struct err err = { "" };

    memset(j, 0, sizeof *j);
    if (hosts_parse(hosts, &j->alloc, &err) == 0 &&
        plan_build(&j->alloc, &j->opt.plan, &j->plan, &err) == 0) {
        j->alloc.source = "hosts";
        j->alloc.kind = ALLOC_HOSTS;
        return 0;
    }
    printf("# %s\n", err.msg);
    return -1;
}

static int inner_calls;

static int inner_hook(void *ctx, int readable)
{
    (void)ctx;
    (void)readable;
    inner_calls++;
    return 500;
}

/* A process of its own group that waits to be killed. */
static pid_t waiting(void)
{
    pid_t pid = fork();

    if (pid == 0) {
        setpgid(0, 0);
        pause();
        _exit(0);
    }
    setpgid(pid, pid);
    return pid;
}

static void abort_in_loop(struct said *k, struct job *j)
{
    struct sv_rank r[2] = { { .rank = 0, .pid = waiting(), .running = 1 },
                            { .rank = 1, .pid = waiting(), .running = 1 } };
    struct supervise sv = { .ranks = r, .n = 2, .failed = -1,
                            .extra = inner_hook };
    struct pmi_hook h;
    struct envset env = { .no_from = 1 };
    int p[2], st = 0, fd;

    if (pipe(p) < 0)
        return;
    sv.extra_fd = p[0];     /* a broker's fd stands there */
    is_int(job_pmi_begin(j), 0, "an attempt's sockets");
    is_int(job_pmi_rank_env(j, 1, &env), 0, "rank 1's variables");
    is_str(envset_get(&env, "PMI_RANK"), "1", "  PMI_RANK");
    fd = atoi(envset_get(&env, "PMI_FD"));
    envset_free(&env);
    is_int(job_pmi_watch(j, &sv, &h), 0, "hooked");
    ok(h.mux >= 0 && sv.extra_fd == h.mux, "  one epoll set over both fds");
    is_int(sv.extra(sv.extra_ctx, 0), 500, "  the broker's hook runs first");
    is_int(inner_calls, 1, "  once");
    k->n = 0;
    if (write(fd, "cmd=abort exitcode=5\n", 21) != 21)
        return;
    sv.extra(sv.extra_ctx, 1);
    is_int(h.abort_code, 5, "MPI_Abort(5): the job's code");
    is_str(k->last, "rank 1 called MPI_Abort with code 5; stopping the job",
           "  said");
    sv.extra(sv.extra_ctx, 1);
    is_int(k->n, 1, "  once");
    waitpid(r[1].pid, &st, 0);
    ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "  rank 1 killed");
    kill(r[0].pid, SIGKILL);
    waitpid(r[0].pid, &st, 0);
    job_pmi_unwatch(&h);
    is_int(h.mux, -1, "unwatched");
    job_pmi_end(j);
    close(p[0]);
    close(p[1]);
}

int main(void)
{
    struct said k = { 0 };
    struct job j;
    static const int both[] = { 0, 1 };

    say_set_sink(said_keep, &k);
    if (job_on(&j, "localhost:2") != 0)
        return tap_done();
    ok(!job_pmi_multinode(&j), "two ranks here: one node");
    is_int(job_pmi_start(&j, both, 2), 0, "not asked: nothing served");
    ok(j.pmi == NULL, "  no server");
    j.pmi_version = 1;
    is_int(job_pmi_start(&j, both, 1), EXIT_USAGE, "a part of the ranks: 2");
    ok(strstr(k.last, "--mpi=pmi1: dlrun serves the simple PMI wire when all "
              "ranks run on one host, or through its agents") != NULL,
       "  said");
    is_int(job_pmi_start(&j, both, 2), 0, "every rank: served");
    ok(j.pmi != NULL, "  a server");
    abort_in_loop(&k, &j);
    job_pmi_stop(&j);
    ok(j.pmi == NULL, "stopped");
    plan_free(&j.plan);
    alloc_free(&j.alloc);
    if (job_on(&j, "n1:1,n2:1") == 0) {
        ok(job_pmi_multinode(&j), "ranks on two nodes");
        plan_free(&j.plan);
        alloc_free(&j.alloc);
    }
    return tap_done();
}
