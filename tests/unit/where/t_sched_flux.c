/* t_sched_flux.c - the Flux allocation sources on their own (detect and
 * read): a task of flux run (rank, size, local rank from the variables,
 * the nodes and the task map from flux job hostlist and taskmap, checked
 * against each other), the script of flux batch (FLUX_URI alone: flux
 * getattr), from the fixtures in tests/fixtures/flux with the stand-in
 * flux there first on PATH; under the job shell's PMI (PMI_FD a
 * socketpair holding the replies) each task's node from
 * PMI_process_mapping instead of flux job taskmap, checked against
 * FLUX_TASK_LOCAL_ID and FLUX_JOB_NNODES. */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "where/alloc.h"
#include "where/pmic.h"
#include "fixture.h"
#include "tap.h"

static const char *const standin[] = {
    "PATH=tests/fixtures/flux/bin", NULL,
};

struct frow {
    const char *file;           /* tests/fixtures/flux/FILE.env */
    const char *source;         /* flux-task, flux-job */
    const char *nodes;          /* NULL: read must fail */
    int rank, local, node, local_size;  /* rank -1: no task */
    const char *has;            /* read ok: the jobid; fails: the message */
};

static const struct frow frows[] = {
    { "run-N2-n8-rank0", "flux-task", "tuolumne1001:4,tuolumne1002:4",
      0, 0, 0, 4, "ƒ2RSrTuXh" },
    { "run-N2-n8-rank5", "flux-task", "tuolumne1001:4,tuolumne1002:4",
      5, 1, 1, 4, "ƒ2RSrTuXh" },
    { "run-N2-n8-cyclic-rank3", "flux-task", "tuolumne1001:4,tuolumne1002:4",
      3, 1, 1, 4, "ƒ2RSrTuXh" },
    { "batch-N2", "flux-job", "tuolumne1001:1,tuolumne1002:1", -1, 0, 0, 0,
      "ƒ2RSrTuXh" },
    { "bad-nnodes", "flux-task", NULL, 0, 0, 0, 0,
      "FLUX_JOB_NNODES=3 but 'flux job hostlist ƒ2RSrTuXh' names 2 nodes" },
    { "bad-localid", "flux-task", NULL, 0, 0, 0, 0,
      "FLUX_TASK_LOCAL_ID=0 but 'flux job taskmap' makes task 5 the 2nd" },
    { "bad-size", "flux-task", NULL, 0, 0, 0, 0,
      "places 7 tasks on 2 nodes but FLUX_JOB_SIZE=8" },
};

static void fixture_check(const struct frow *r)
{
    char path[256], what[300];
    char **envp;
    struct alloc a = { 0 };
    struct err err = { "" };
    const struct alloc_source *src = alloc_source_find(r->source);
    struct alloc_request req = { 0 };
    int rc;

    snprintf(path, sizeof path, "tests/fixtures/flux/%s.env", r->file);
    envp = envp_load(path, standin);
    if (!ok(envp && src, path))
        return;
    snprintf(what, sizeof what, "%s: %s detects it", r->file, r->source);
    ok(src->detect(&req, envp), what);
    rc = src->read(&req, envp, &a, &err);
    snprintf(what, sizeof what, "%s: %s", r->file,
             r->nodes ? "nodes, task and job id" : "refused");
    if (!r->nodes) {
        if (!ok(rc < 0 && strstr(err.msg, r->has), what))
            printf("#   rc %d, message: %s\n", rc, err.msg);
    } else if (!ok(rc == 0 && !strcmp(alloc_nodes_str(&a), r->nodes) &&
                   a.jobid && !strcmp(a.jobid, r->has) &&
                   a.has_task == (r->rank >= 0) &&
                   (r->rank < 0 || (a.task.rank == r->rank &&
                                    a.task.local_rank == r->local &&
                                    a.task.node_rank == r->node &&
                                    a.task.local_size == r->local_size &&
                                    a.task.size == 8)), what)) {
        printf("#   rc %d nodes %s task %d/%d local %d/%d node %d: %s\n", rc,
               alloc_nodes_str(&a), a.task.rank, a.task.size,
               a.task.local_rank, a.task.local_size, a.task.node_rank,
               err.msg);
    }
    alloc_free(&a);
    envp_free(envp);
}

#define TASK "flux-task"
#define JOB "flux-job"
#define NOFLUX "PATH=/nonexistent"

static const struct source_row rows[] = {
    { "one node: this host, no query", TASK, { "FLUX_JOB_ID=f1",
      "FLUX_JOB_SIZE=2", "FLUX_JOB_NNODES=1", "FLUX_TASK_RANK=1",
      "FLUX_TASK_LOCAL_ID=1", NOFLUX, NULL }, NULL, { 0 }, 1, "@HOST@:2",
      "f1" },
    { "no task rank", TASK, { "FLUX_JOB_ID=f1", NULL }, NULL, { 0 }, 1, NULL,
      "FLUX_JOB_ID is set but FLUX_TASK_RANK is not" },
    { "rank beyond the size", TASK, { "FLUX_JOB_ID=f1", "FLUX_JOB_SIZE=2",
      "FLUX_JOB_NNODES=1", "FLUX_TASK_RANK=2", "FLUX_TASK_LOCAL_ID=0",
      NULL }, NULL, { 0 }, 1, NULL, "FLUX_TASK_RANK=2" },
    { "more nodes than tasks", TASK, { "FLUX_JOB_ID=f1", "FLUX_JOB_SIZE=2",
      "FLUX_JOB_NNODES=3", "FLUX_TASK_RANK=0", "FLUX_TASK_LOCAL_ID=0",
      NULL }, NULL, { 0 }, 1, NULL, "FLUX_JOB_NNODES=3" },
    { "several nodes, no flux on PATH", TASK, { "FLUX_JOB_ID=f1",
      "FLUX_JOB_SIZE=2", "FLUX_JOB_NNODES=2", "FLUX_TASK_RANK=0",
      "FLUX_TASK_LOCAL_ID=0", NOFLUX, NULL }, NULL, { 0 }, 1, NULL,
      "FLUX_JOB_NNODES=2: the job's nodes are unknown (pass -H): "
      "'flux job hostlist f1': flux is not on PATH" },
    { "flux's query fails: its message", TASK, { "FLUX_JOB_ID=f1",
      "FLUX_JOB_SIZE=2", "FLUX_JOB_NNODES=2", "FLUX_TASK_RANK=0",
      "FLUX_TASK_LOCAL_ID=0", "PATH=tests/fixtures/flux/bin", NULL }, NULL,
      { 0 }, 1, NULL, "'flux job hostlist f1' failed: flux-job: hostlist: "
      "no answer" },
    { "a bad idset in the task map", TASK, { "FLUX_JOB_ID=f1",
      "FLUX_JOB_SIZE=2", "FLUX_JOB_NNODES=2", "FLUX_TASK_RANK=0",
      "FLUX_TASK_LOCAL_ID=0", "PATH=tests/fixtures/flux/bin",
      "FLUX_STANDIN_HOSTLIST=a,b", "FLUX_STANDIN_TASKMAP=0;x", NULL }, NULL,
      { 0 }, 1, NULL, "'flux job taskmap --to=raw', node 1" },
    { "a task map naming a task twice", TASK, { "FLUX_JOB_ID=f1",
      "FLUX_JOB_SIZE=2", "FLUX_JOB_NNODES=2", "FLUX_TASK_RANK=0",
      "FLUX_TASK_LOCAL_ID=0", "PATH=tests/fixtures/flux/bin",
      "FLUX_STANDIN_HOSTLIST=a,b", "FLUX_STANDIN_TASKMAP=0;0", NULL },
      NULL, { 0 }, 1, NULL, "places task 0 on nodes 0 and 1" },
    { "one task asked for more ranks: the job's nodes", TASK, {
      "FLUX_JOB_ID=f1", "FLUX_JOB_SIZE=1", "FLUX_JOB_NNODES=1",
      "FLUX_TASK_RANK=0", "FLUX_TASK_LOCAL_ID=0",
      "PATH=tests/fixtures/flux/bin", "FLUX_STANDIN_JOBID=f1",
      "FLUX_STANDIN_HOSTLIST=a,b", NULL }, NULL, { .want_ranks = 8 }, 1,
      "a:1,b:1", "f1" },
    { "a script outside any job's instance", JOB, { "FLUX_URI=local:///x",
      "PATH=tests/fixtures/flux/bin", NULL }, NULL, { 0 }, 1, NULL,
      "FLUX_URI is set but names no Flux job's instance" },
    { "a task is not a script", JOB, { "FLUX_URI=local:///x",
      "FLUX_JOB_ID=f1", NULL }, NULL, { 0 }, 0, NULL, "FLUX_URI" },
    { "another launcher's task in a script", JOB, { "FLUX_URI=local:///x",
      "PMI_RANK=1", NULL }, NULL, { 0 }, 0, NULL, "FLUX_URI" },
};

/* Among all sources (alloc_detect): a flux run task carries PMI_RANK
 * too (Flux's PMI server) and is Flux's; a batch script's; an mpiexec's
 * task inside a batch script is MPICH's, not the script's allocation. */
static void probing(void)
{
    static const char *const hydra[] = { "PATH=tests/fixtures/flux/bin",
        "PMI_RANK=1", "PMI_SIZE=2", "MPI_LOCALRANKID=1", "MPI_LOCALNRANKS=2",
        NULL };
    static const struct { const char *file; const char *const *extra;
                          const char *source; } cases[] = {
        { "run-N2-n8-rank5", standin, "flux-task" },
        { "batch-N2", standin, "flux-job" },
        { "batch-N2", hydra, "mpich" },
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[256], what[300];
        char **envp;
        struct alloc a = { 0 };
        struct err err = { "" };
        struct alloc_request req = { 0 };

        snprintf(path, sizeof path, "tests/fixtures/flux/%s.env",
                 cases[i].file);
        envp = envp_load(path, cases[i].extra);
        snprintf(what, sizeof what, "alloc_detect, %s%s: %s", cases[i].file,
                 cases[i].extra == hydra ? " with an mpiexec's task" : "",
                 cases[i].source);
        if (!ok(envp && alloc_detect(&req, envp, &a, &err) == 0 &&
                !strcmp(a.source, cases[i].source), what))
            printf("#   got %s: %s\n", a.source ? a.source : "-", err.msg);
        alloc_free(&a);
        envp_free(envp);
    }
}

/* Task 5 of flux run -N2 -n8 (local id local) with the job shell's PMI
 * answering mapping; the read's return value. */
static int rd_pmi(const char *mapping, const char *local, struct alloc *a,
                  struct err *err)
{
    char fdvar[32], replies[256];
    const char *env[] = { "PATH=tests/fixtures/flux/bin",
        "FLUX_JOB_ID=f1", "FLUX_JOB_SIZE=8", "FLUX_JOB_NNODES=2",
        "FLUX_TASK_RANK=5", local, fdvar, "PMI_RANK=5", "PMI_SIZE=8",
        "FLUX_STANDIN_HOSTLIST=n[1-2]", NULL };
    struct alloc_request req = { 0 };
    char **envp;
    int sv[2], rc;

    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
        return -2;
    snprintf(fdvar, sizeof fdvar, "PMI_FD=%d", sv[0]);
    snprintf(replies, sizeof replies, "cmd=response_to_init rc=0\n"
             "cmd=my_kvsname kvsname=k\ncmd=get_result rc=0 value=%s\n",
             mapping);
    if (write(sv[1], replies, strlen(replies)) != (ssize_t)strlen(replies))
        return -2;
    envp = envp_of(env);
    memset(a, 0, sizeof *a);
    rc = alloc_source_find("flux-task")->read(&req, envp, a, err);
    pmic_the_end(0, err);
    close(sv[0]);
    close(sv[1]);
    envp_free(envp);
    return rc;
}

static void pmi_layout(void)
{
    struct alloc a;
    struct err err = { "" };

    is_int(rd_pmi("(vector,(0,2,4))", "FLUX_TASK_LOCAL_ID=1", &a, &err), 0,
           "flux run's PMI: task 5 read (no flux job taskmap asked)");
    is_int(a.task.node_rank, 1, "  on node 1, from PMI_process_mapping");
    is_str(a.task.node_rank_from, "PMI_process_mapping", "  named");
    ok(a.nnodes == 2 && a.nodes[0].slots == 4 && a.nodes[1].slots == 4,
       "  4 tasks on each of flux job hostlist's nodes");
    alloc_free(&a);
    is_int(rd_pmi("(vector,(0,2,1))", "FLUX_TASK_LOCAL_ID=2", &a, &err), 0,
           "a cyclic mapping: read");
    is_int(a.task.node_rank * 10 + a.task.local_rank, 12,
           "  task 5 the third on node 1");
    alloc_free(&a);
    ok(rd_pmi("(vector,(0,2,4))", "FLUX_TASK_LOCAL_ID=0", &a, &err) < 0 &&
       strstr(err.msg, "FLUX_TASK_LOCAL_ID=0 but the job shell's "
              "PMI_process_mapping makes task 5 the 2nd"),
       "FLUX_TASK_LOCAL_ID against the mapping: refused");
    alloc_free(&a);
    ok(rd_pmi("(vector,(0,1,8))", "FLUX_TASK_LOCAL_ID=5", &a, &err) < 0 &&
       strstr(err.msg, "FLUX_JOB_NNODES=2 but the job shell's PMI says rank "
              "5 of 8 on 1 node: they disagree"),
       "FLUX_JOB_NNODES against the mapping: refused");
    alloc_free(&a);
}

int main(void)
{
    char host[256];

    alloc_this_host(host, sizeof host);
    for (size_t i = 0; i < sizeof frows / sizeof frows[0]; i++)
        fixture_check(&frows[i]);
    pmi_layout();
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct source_row r = rows[i];
        char nodes[300];

        if (r.nodes && !strncmp(r.nodes, "@HOST@", 6)) {
            snprintf(nodes, sizeof nodes, "%s%s", host, r.nodes + 6);
            r.nodes = nodes;
        }
        source_row_check(&r);
    }
    probing();
    return tap_done();
}
