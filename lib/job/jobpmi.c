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

/* A rank broke the wire, or a fence across nodes failed: one line. */
static void pmi_note(void *ctx, int rank, const char *msg)
{
    (void)ctx;
    if (rank < 0)
        say("%s", msg);
    else
        say("rank %d: %s; its PMI connection is closed", rank, msg);
}

/* An agent serves the simple PMI wire when the head's --mpi says so. */
static int agent_version(const struct job *j)
{
    if (!j->agent)
        return j->pmi_version;
    return j->opt.mpi == MPI_PMI2 ? 2 : j->opt.mpi == MPI_PMI1 ? 1 : 0;
}

/* An agent's server reaches the other nodes' through the broker (its
 * node's relay); the fences' keys are named after the head's broker, the
 * same on every node and new for each run of the head's agents. */
static int agent_broker(const struct job *j, struct pmi_serve_opts *po)
{
    po->broker = getenv("DLRUN_BROKER");
    po->token = getenv("DLRUN_TOKEN");
    po->job_id = j->head_broker[0] ? j->head_broker : po->broker;
    if (!po->broker || !po->token)
        return say_fail(EXIT_FAIL, "--mpi=pmi%d: agent without "
                        "DLRUN_BROKER/DLRUN_TOKEN", j->pmi_version);
    return 0;
}

int job_pmi_start(struct job *j, const int *ranks, int n)
{
    struct pmi_serve_opts po = { .plan = &j->plan, .ranks = ranks,
                                 .nranks = n, .version = j->pmi_version,
                                 .note = pmi_note };
    struct err err = { "" };
    char name[64];

    j->pmi_version = agent_version(j);
    po.version = j->pmi_version;
    if (!j->pmi_version || n == 0)  /* n: an agent of agents only */
        return 0;
    if (j->agent && j->plan.nnodes > 1 && agent_broker(j, &po) != 0)
        return EXIT_FAIL;
    if (!po.broker && n != j->plan.nranks)
        return say_fail(EXIT_USAGE, "--mpi=pmi%d: dlrun serves the simple "
                        "PMI wire when all ranks run on one host, or through "
                        "its agents; here one dlrun per node has no broker "
                        "in common: start the program with mpiexec.hydra or "
                        "srun --mpi=pmi2", j->pmi_version);
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
    h->abort_rank = rank;
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
    if (!h->abort_code || !h->sv)
        return;
    /* killed as it waited: it ended with its abort's code (what the head
     * reports for an agent's rank, and --summary says) */
    for (int i = 0; i < h->sv->n; i++)
        if (h->sv->ranks[i].rank == h->abort_rank && !h->sv->ranks[i].running)
            h->sv->ranks[i].status = (h->abort_code & 0xff) << 8;
}
