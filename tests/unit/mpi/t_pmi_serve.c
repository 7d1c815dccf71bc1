/* t_pmi_serve.c - the PMI server on real socketpairs, in-process: three
 * ranks on one node speak through their PMI_FD ends (as MPICH's client
 * does: init, the process mapping, put, barrier, get of another rank's
 * key, finalize); the barrier holds until the last rank enters; a rank
 * that breaks the wire is dropped with a note; an attempt's end closes
 * everything and a new one starts empty. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mpi/pmi_serve.h"
#include "tap.h"

static int notes;

static void note(void *ctx, int rank, const char *msg)
{
    (void)ctx;
    (void)rank;
    (void)msg;
    notes++;
}

static void plan3(struct plan *p)
{
    struct err err = { "" };

    plan_alloc(p, 3, 1, &err);
    p->nodes[0].host = "localhost";
    for (int r = 0; r < 3; r++)
        p->rank_node[r] = 0;
    plan_count_local(p);
}

/* Write line on fd, serve, read the answer ("" when none came). */
static const char *ask(struct pmi_serve *s, int fd, const char *line)
{
    static char buf[2048];
    struct err err = { "" };
    ssize_t n;

    if (write(fd, line, strlen(line)) != (ssize_t)strlen(line))
        return "(write failed)";
    pmi_serve_step(s, &err);
    n = recv(fd, buf, sizeof buf - 1, MSG_DONTWAIT);
    buf[n > 0 ? n : 0] = '\0';
    return buf;
}

int main(void)
{
    struct plan p = { 0 };
    static const int ranks[] = { 0, 1, 2 };
    struct pmi_serve_opts o = { .plan = &p, .ranks = ranks, .nranks = 3,
                                .kvsname = "dlrun-7", .note = note };
    struct err err = { "" };
    struct envset env = { .no_from = 1 };
    struct pmi_serve *s;
    int fd[3];

    plan3(&p);
    s = pmi_serve_create(&o, &err);
    ok(s != NULL, "created");
    is_int(pmi_serve_fd(s), -1, "no fd before an attempt");
    is_int(pmi_serve_begin(s, &err), 0, "an attempt begins");
    for (int r = 0; r < 3; r++)
        fd[r] = pmi_serve_child_fd(s, r);
    ok(fd[0] > 2 && fd[1] > 2 && fd[2] > 2, "a child end per rank");
    is_int(pmi_serve_child_fd(s, 3), -1, "no rank 3");
    is_int(pmi_serve_rank_env(s, 2, &env, &err), 0, "rank 2's variables");
    is_int(atoi(envset_get(&env, "PMI_FD")), fd[2], "PMI_FD is its end");
    is_str(envset_get(&env, "PMI_RANK"), "2", "PMI_RANK");
    is_str(envset_get(&env, "PMI_SIZE"), "3", "PMI_SIZE");
    is_str(envset_get(&env, "MPI_LOCALRANKID"), "2", "MPI_LOCALRANKID");
    is_str(envset_get(&env, "MPI_LOCALNRANKS"), "3", "MPI_LOCALNRANKS");
    ok(envset_get(&env, "MPIR_CVAR_PMI_VERSION") == NULL, "no version asked");
    envset_free(&env);

    is_str(ask(s, fd[0], "cmd=init pmi_version=1 pmi_subversion=1\n"),
           "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n",
           "init over the socket");
    is_str(ask(s, fd[1], "cmd=get_my_kvsname\n"),
           "cmd=my_kvsname kvsname=dlrun-7 rc=0\n", "the KVS name");
    is_str(ask(s, fd[2], "cmd=get kvsname=dlrun-7 key=PMI_process_mapping\n"),
           "cmd=get_result rc=0 msg=success value=(vector,(0,1,3))\n",
           "one node of three");
    is_str(ask(s, fd[0], "cmd=put kvsname=dlrun-7 key=card-0 value=AB12\n"),
           "cmd=put_result rc=0 msg=success\n", "rank 0 puts");
    is_str(ask(s, fd[0], "cmd=barrier_in\n"), "", "rank 0 waits");
    is_str(ask(s, fd[1], "cmd=barrier_in\n"), "", "rank 1 waits");
    is_str(ask(s, fd[2], "cmd=barrier_in\n"), "cmd=barrier_out rc=0\n",
           "the last one in: out");
    for (int r = 0; r < 2; r++) {
        char b[64] = "";
        ssize_t n = recv(fd[r], b, sizeof b - 1, MSG_DONTWAIT);
        b[n > 0 ? n : 0] = '\0';
        is_str(b, "cmd=barrier_out rc=0\n", r ? "rank 1 out too"
                                              : "rank 0 out too");
    }
    is_str(ask(s, fd[2], "cmd=get kvsname=dlrun-7 key=card-0\n"),
           "cmd=get_result rc=0 msg=success value=AB12\n",
           "rank 2 reads rank 0's key");
    {
        int ar = -1, ac = -1;
        ok(!pmi_serve_aborted(s, &ar, &ac), "no abort yet");
        is_str(ask(s, fd[1], "cmd=abort exitcode=9\n"), "", "abort: no answer");
        ok(pmi_serve_aborted(s, &ar, &ac), "an abort");
        is_int(ar * 100 + ac, 109, "rank 1's, with its code");
        ask(s, fd[2], "cmd=abort exitcode=3\n");
        pmi_serve_aborted(s, &ar, &ac);
        is_int(ar * 100 + ac, 109, "the first abort is kept");
    }
    is_str(ask(s, fd[1], "garbage\n"), "", "garbage: dropped");
    is_int(notes, 1, "the drop noted");
    is_str(ask(s, fd[0], "cmd=finalize\n"), "cmd=finalize_ack rc=0\n",
           "finalize");

    pmi_serve_started(s);
    ok(write(fd[2], "x", 1) < 0, "the child ends closed once started");
    pmi_serve_end(s);
    is_int(pmi_serve_fd(s), -1, "the attempt closed");
    {
        int ar, ac;
        ok(!pmi_serve_aborted(s, &ar, &ac), "the abort was the attempt's");
    }
    is_int(pmi_serve_begin(s, &err), 0, "a second attempt");
    fd[0] = pmi_serve_child_fd(s, 0);
    is_str(ask(s, fd[0], "cmd=get kvsname=dlrun-7 key=card-0\n"),
           "cmd=get_result rc=-1 msg=key_not_found\n", "its store is empty");
    pmi_serve_destroy(s);
    plan_free(&p);
    return tap_done();
}
