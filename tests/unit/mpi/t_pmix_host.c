/* t_pmix_host.c - the hosted PMIx server with real libpmix clients: two
 * ranks (this test binary, exec'd as "client") connect with the variables
 * pmix_host_rank_env gives, read what the namespace says, exchange a value
 * through a fence; restarts get a new namespace.  What the namespace holds
 * is checked key by key in t_pmix_host_info.c, the blobs of the
 * cross-node exchange in t_pmix_host_remote.c. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
#include "util/clock.h"
#include "util/envset.h"
#include "place/plan.h"
#include "mpi/pmix_host.h"


#ifndef HAVE_PMIX
int main(void)
{
    struct err err = { "" };

    ok(!pmix_host_available(), "without PMIx: not available");
    ok(pmix_host_start(&(struct pmix_host_opts){ 0 }, &err) == NULL &&
       strstr(err.msg, "not compiled in"), "  and start says why");
    return tap_done();
}
#else
#include <pmix.h>

#include "mpi/pmix_host_int.h"

extern char **environ;

/* Rank 0 publishes a name after a moment; rank 1 waits for it
 * (PMIX_WAIT), then for a name nobody publishes, which must end at its
 * PMIX_TIMEOUT with an error; rank 0 unpublishes after a fence. */
static void publish_lookup(const pmix_proc_t *me)
{
    pmix_info_t pub, wait[2];
    pmix_pdata_t pd;
    pmix_proc_t any;
    bool yes = true;
    int timeout = 1;
    long t0;
    pmix_status_t rc;

    PMIX_LOAD_PROCID(&any, me->nspace, PMIX_RANK_WILDCARD);
    PMIX_INFO_LOAD(&wait[0], PMIX_WAIT, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&wait[1], PMIX_TIMEOUT, &timeout, PMIX_INT);
    if (me->rank == 0) {
        usleep(200 * 1000);
        PMIX_INFO_LOAD(&pub, "dlrun.port", "port-of-0", PMIX_STRING);
        rc = PMIx_Publish(&pub, 1);
        printf("publish=%s\n", rc == PMIX_SUCCESS ? "ok" : "failed");
    } else {
        memset(&pd, 0, sizeof pd);
        PMIX_LOAD_KEY(pd.key, "dlrun.port");
        rc = PMIx_Lookup(&pd, 1, wait, 1);
        printf("waited=%s\n", rc == PMIX_SUCCESS &&
               pd.value.type == PMIX_STRING ? pd.value.data.string : "failed");
        PMIX_LOAD_KEY(pd.key, "dlrun.never");
        t0 = clock_ms();
        rc = PMIx_Lookup(&pd, 1, wait, 2);
        printf("never=%s within=%d\n", rc == PMIX_SUCCESS ? "found" : "error",
               clock_ms() - t0 < 5000);
    }
    fflush(stdout);
    PMIx_Fence(&any, 1, NULL, 0);
    if (me->rank == 0) {
        char *keys[] = { "dlrun.port", NULL };
        printf("unpublish=%s\n",
               PMIx_Unpublish(keys, NULL, 0) == PMIX_SUCCESS ? "ok" : "failed");
    }
}

/* A rank: read the job, put RANK*10, fence with data, read the peer's. */
static int run_client(void)
{
    pmix_proc_t me, any, peer;
    pmix_value_t *v = NULL, val;
    pmix_info_t collect;
    bool yes = true;
    unsigned size = 0, lrank = 0, got = 0;
    char peers[64] = "", host[64] = "";

    struct err err = { "" };

    /* pmix_host_int.h routes the macros' PMIx calls through pmixdl */
    if (pmixdl_server(&err) < 0 || PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS)
        return 10;
    PMIX_LOAD_PROCID(&any, me.nspace, PMIX_RANK_WILDCARD);
    if (PMIx_Get(&any, PMIX_JOB_SIZE, NULL, 0, &v) == PMIX_SUCCESS)
        size = v->data.uint32;
    if (PMIx_Get(&me, PMIX_LOCAL_RANK, NULL, 0, &v) == PMIX_SUCCESS)
        lrank = v->data.uint16;
    if (PMIx_Get(&any, PMIX_LOCAL_PEERS, NULL, 0, &v) == PMIX_SUCCESS)
        snprintf(peers, sizeof peers, "%s", v->data.string);
    PMIX_LOAD_PROCID(&peer, me.nspace, 1 - me.rank);
    if (PMIx_Get(&peer, PMIX_HOSTNAME, NULL, 0, &v) == PMIX_SUCCESS)
        snprintf(host, sizeof host, "%s", v->data.string);
    val.type = PMIX_UINT32;
    val.data.uint32 = me.rank * 10 + 7;
    PMIx_Put(PMIX_GLOBAL, "dlrun.test", &val);
    PMIx_Commit();
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    if (PMIx_Fence(&any, 1, &collect, 1) != PMIX_SUCCESS)
        return 11;
    if (PMIx_Get(&peer, "dlrun.test", NULL, 0, &v) == PMIX_SUCCESS)
        got = v->data.uint32;
    printf("%s rank=%u size=%u lrank=%u peers=%s peerhost=%s peerval=%u\n",
           me.nspace, me.rank, size, lrank, peers, host, got);
    publish_lookup(&me);
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return 0;
}

/* Start rank r with its environment; its stdout goes to out. */
static pid_t start_rank(struct pmix_host *s, int r, FILE *out)
{
    struct envset e = { 0 };
    struct err err = { "" };
    char **envp = NULL;
    char *argv[] = { "t_pmix_host", "client", NULL };
    pid_t pid = -1;

    if (pmix_host_rank_env(s, r, &e, &err) < 0) {
        printf("# %s\n", err.msg);
        return -1;
    }
    ok(envset_get(&e, "PMIX_NAMESPACE") && envset_get(&e, "PMIX_RANK"),
       "rank env: PMIX_NAMESPACE, PMIX_RANK");
    is_str(envset_get(&e, "OMPI_MCA_schizo"), "^orte",
           "rank env: Open MPI's schizo/orte is off (not a singleton)");
    envp = envset_envp(&e, environ);
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        dup2(fileno(out), 1);
        execve("/proc/self/exe", argv, envp);
        _exit(127);
    }
    envset_free_envp(envp);
    envset_free(&e);
    return pid;
}

static const char *const hosts[] = { "localhost" };

static void fill_plan(struct plan *p, struct plan_node *node, int *rank_node,
                      int *rank_local)
{
    memset(p, 0, sizeof *p);
    node->host = hosts[0];
    node->first_rank = 0;
    node->nranks = 2;
    rank_node[0] = rank_node[1] = 0;
    rank_local[0] = 0;
    rank_local[1] = 1;
    p->nranks = 2;
    p->nnodes = 1;
    p->nodes = node;
    p->rank_node = rank_node;
    p->rank_local = rank_local;
    p->self = p->self_node = -1;
}

/* One attempt: both ranks run and agree; returns the output. */
static void attempt(struct pmix_host *s, int n, char *buf, size_t len)
{
    struct err err = { "" };
    FILE *out = tmpfile();
    pid_t pid[2];
    int status, good = 0;
    size_t got;

    ok(pmix_host_job_begin(s, n, &err) == 0, "namespace registered");
    for (int r = 0; r < 2; r++)
        pid[r] = start_rank(s, r, out);
    for (int r = 0; r < 2; r++)
        if (pid[r] > 0 && waitpid(pid[r], &status, 0) == pid[r] &&
            WIFEXITED(status) && WEXITSTATUS(status) == 0)
            good++;
    is_int(good, 2, "both ranks connected, fenced and finalized");
    pmix_host_job_end(s);
    rewind(out);
    got = fread(buf, 1, len - 1, out);
    buf[got] = '\0';
    fclose(out);
}

static void test_server(void)
{
    struct plan p;
    struct plan_node node;
    int rank_node[2], rank_local[2], ranks[2] = { 0, 1 };
    struct pmix_host_opts o = { .plan = &p, .ranks = ranks, .nranks = 2,
                                .job_id = "test" };
    struct err err = { "" };
    struct pmix_host *s = NULL;
    struct stat st;
    char buf[1024], dir[PATH_MAX];

    fill_plan(&p, &node, rank_node, rank_local);
    ok(pmix_host_available(), "PMIx hosting is compiled in");
    s = pmix_host_start(&o, &err);
    ok(s != NULL, "the server starts");
    if (!s) {
        printf("# %s\n", err.msg);
        return;
    }
    snprintf(dir, sizeof dir, "%s", s->dir);
    ok(pmix_host_start(&o, &err) == NULL && strstr(err.msg, "one server"),
       "a second server in the process is refused");
    attempt(s, 0, buf, sizeof buf);
    ok(strstr(buf, "dlrun.test.0 rank=0 size=2 lrank=0 peers=0,1 "
                   "peerhost=localhost peerval=17\n") != NULL,
       "rank 0: job size, local rank, peers, peer's host, peer's value");
    ok(strstr(buf, "dlrun.test.0 rank=1 size=2 lrank=1 peers=0,1 "
                   "peerhost=localhost peerval=7\n") != NULL,
       "rank 1: the same from its side");
    if (!strstr(buf, "peerval=17"))
        printf("# output: %s\n", buf);
    ok(strstr(buf, "publish=ok\n") && strstr(buf, "waited=port-of-0\n"),
       "a lookup with PMIX_WAIT gets the name published after it");
    ok(strstr(buf, "never=error within=1\n") != NULL,
       "a lookup of a name nobody publishes ends at its PMIX_TIMEOUT");
    ok(strstr(buf, "unpublish=ok\n") != NULL, "the publisher unpublishes");
    attempt(s, 1, buf, sizeof buf);
    ok(strstr(buf, "dlrun.test.1 rank=1 size=2") != NULL,
       "a restart gets a namespace of its own");
    pmix_host_stop(s);
    ok(stat(dir, &st) < 0, "stop removes the server's directory");
    pmix_host_stop(NULL);
    ok(1, "stop(NULL) is a no-op");
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "client") == 0)
        return run_client();
    signal(SIGPIPE, SIG_IGN);
    test_server();
    return tap_done();
}
#endif
