/* jobpmi.c - the simple PMI wire (lib/mpi/pmi_serve.h) served to the
 * ranks dlrun starts on one host, for programs of MPICH's family
 * (docs/mpi.md): --mpi=pmi1|pmi2, or --mpi=auto for a program that links
 * MPICH's ABI (and beside PMIx for a script whose MPI is not known). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "job/job.h"
#include "mpi/pmi_serve.h"
#include "util/say.h"

/* Ranks on more than one node of the plan, or started by agents on
 * another host: the fence would need every node's server (not served: one
 * line says so). */
int job_pmi_multinode(const struct job *j)
{
    int used = 0;

    for (int i = 0; i < j->plan.nnodes; i++)
        used += j->plan.nodes[i].nranks > 0;
    return used > 1 || head_wanted(j);
}

/* A rank broke the wire: one line. */
static void pmi_note(void *ctx, int rank, const char *msg)
{
    (void)ctx;
    say("rank %d: %s; its PMI connection is closed", rank, msg);
}

int job_pmi_start(struct job *j, const int *ranks, int n)
{
    struct pmi_serve_opts po = { .plan = &j->plan, .ranks = ranks,
                                 .nranks = n, .version = j->pmi_version,
                                 .note = pmi_note };
    struct err err = { "" };
    char name[64];

    if (!j->pmi_version || n == 0)
        return 0;
    if (n != j->plan.nranks)
        return say_fail(EXIT_USAGE, "--mpi=pmi%d: dlrun serves the simple "
                        "PMI wire when all ranks run on one host; across "
                        "nodes start the program with mpiexec.hydra or srun "
                        "--mpi=pmi2 (dlrun per task)", j->pmi_version);
    snprintf(name, sizeof name, "dlrun_%d", (int)getpid());
    po.kvsname = name;
    j->pmi = pmi_serve_create(&po, &err);
    if (!j->pmi)
        return say_fail(EXIT_FAIL, "cannot serve PMI for the MPI ranks: %s",
                        err.msg);
    return 0;
}

int job_pmi_begin(struct job *j)
{
    struct err err = { "" };

    if (j->pmi && pmi_serve_begin(j->pmi, &err) < 0)
        return say_fail(EXIT_FAIL, "%s", err.msg);
    return 0;
}

void job_pmi_started(struct job *j)
{
    if (j->pmi)
        pmi_serve_started(j->pmi);
}

void job_pmi_end(struct job *j)
{
    if (j->pmi)
        pmi_serve_end(j->pmi);
}

void job_pmi_stop(struct job *j)
{
    pmi_serve_destroy(j->pmi);
    j->pmi = NULL;
}

int job_pmi_rank_env(const struct job *j, int rank, struct envset *out)
{
    struct err err = { "" };

    if (j->pmi && pmi_serve_rank_env(j->pmi, rank, out, &err) < 0)
        return say_fail(EXIT_FAIL, "%s", err.msg);
    return 0;
}

/* A rank called MPI_Abort and waits to be killed, as Hydra does: it is,
 * and the supervisor's fail-fast stops the others; the job's code is the
 * abort's (job_pmi_abort_code). */
static void abort_rank(struct pmi_hook *h)
{
    int rank, code;

    if (h->abort_code || !pmi_serve_aborted(h->s, &rank, &code))
        return;
    h->abort_code = code;
    say("rank %d called MPI_Abort with code %d; stopping the job", rank,
        code);
    for (int i = 0; i < h->sv->n; i++)
        if (h->sv->ranks[i].rank == rank && h->sv->ranks[i].running)
            killpg(h->sv->ranks[i].pid, SIGKILL);
}

/* sv's hook: the one it displaced (a one-node broker's), then the
 * ranks' PMI requests. */
static int pmi_tick(void *ctx, int readable)
{
    struct pmi_hook *h = ctx;
    int inner = supervise_hook_call(&h->inner, readable);
    struct err err = { "" };

    if (pmi_serve_step(h->s, &err) < 0 && !h->failed) {
        h->failed = 1;
        say("%s", err.msg);
    }
    abort_rank(h);
    return inner;
}

/* One fd for the supervisor to poll over both sets (epoll in epoll). */
static int mux_open(int a, int b)
{
    int fd = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ea = { .events = EPOLLIN, .data.fd = a };
    struct epoll_event eb = { .events = EPOLLIN, .data.fd = b };

    if (fd >= 0 && (epoll_ctl(fd, EPOLL_CTL_ADD, a, &ea) < 0 ||
                    epoll_ctl(fd, EPOLL_CTL_ADD, b, &eb) < 0)) {
        close(fd);
        fd = -1;
    }
    return fd;
}

int job_pmi_watch(struct job *j, struct supervise *sv, struct pmi_hook *h)
{
    int had = sv->extra ? sv->extra_fd : -1;

    *h = (struct pmi_hook){ .s = j->pmi, .sv = sv, .mux = -1 };
    if (!j->pmi)
        return 0;
    supervise_hook(sv, pmi_tick, h, &h->inner);
    sv->extra_fd = pmi_serve_fd(j->pmi);
    if (had >= 0) {
        h->mux = mux_open(had, sv->extra_fd);
        if (h->mux < 0)
            return say_fail(EXIT_FAIL, "cannot watch the PMI sockets beside "
                            "the broker (epoll)");
        sv->extra_fd = h->mux;
    }
    return 0;
}

void job_pmi_unwatch(struct pmi_hook *h)
{
    if (h->mux >= 0)
        close(h->mux);
    h->mux = -1;
}
