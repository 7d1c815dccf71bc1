/* t_pmix_host_info.c - what the hosted PMIx server registers for a job
 * (lib/mpi/pmix_host_info.c), key by key, for the second node of a plan
 * of two nodes with two ranks each: the job's sizes, this node's ranks
 * and leader, every rank's node, local rank and host; and the variables
 * Open MPI 4.1 needs under a server it did not start (a user's -x value
 * kept, oversubscription only when the ranks outnumber the CPUs). */
#include <stdio.h>
#include <string.h>

#include "tap.h"

#ifdef HAVE_PMIX
#include "where/alloc.h"
#include "util/envset.h"
#include "where/hostfile.h"
#include "place/plan.h"
#include "mpi/pmix_host_int.h"

static char dir[PATH_MAX];

/* The value of key among n infos, or NULL. */
static const pmix_value_t *find(const pmix_info_t *in, size_t n,
                                const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (PMIX_CHECK_KEY(&in[i], key))
            return &in[i].value;
    return NULL;
}

static unsigned u32(const pmix_info_t *in, size_t n, const char *key)
{
    const pmix_value_t *v = find(in, n, key);

    return v && v->type == PMIX_UINT32 ? v->data.uint32 : 999;
}

static const char *str(const pmix_info_t *in, size_t n, const char *key)
{
    const pmix_value_t *v = find(in, n, key);

    return v && v->type == PMIX_STRING ? v->data.string : "(none)";
}

/* Rank r's PMIX_PROC_DATA array, or NULL. */
static const pmix_info_t *proc(const pmix_info_t *in, size_t n, unsigned r,
                               size_t *len)
{
    for (size_t i = 0; i < n; i++) {
        const pmix_data_array_t *d = in[i].value.data.darray;
        const pmix_info_t *k;
        if (!PMIX_CHECK_KEY(&in[i], PMIX_PROC_DATA) || !d)
            continue;
        k = d->array;
        if (k[0].value.data.rank == r) {
            *len = d->size;
            return k;
        }
    }
    return NULL;
}

static void job_info(struct pmix_host *s)
{
    struct err err = { "" };
    pmix_info_t *in = NULL;
    size_t n = 0, pn = 0;
    const pmix_info_t *p3;
    const pmix_value_t *v;

    if (!ok(pmix_host_job_info(s, &in, &n, &err) == 0, "pmix_host_job_info")) {
        printf("# %s\n", err.msg);
        return;
    }
    is_int(n, 16 + 1 + 4, "job keys, this node's host, a set per rank");
    ok(u32(in, n, PMIX_JOB_SIZE) == 4 && u32(in, n, PMIX_UNIV_SIZE) == 4 &&
       u32(in, n, PMIX_NUM_NODES) == 2, "job size 4, 2 nodes");
    ok(u32(in, n, PMIX_LOCAL_SIZE) == 2 && u32(in, n, PMIX_NODE_SIZE) == 2,
       "2 ranks on this node");
    is_str(str(in, n, PMIX_LOCAL_PEERS), "2,3", "local peers: the ranks here");
    v = find(in, n, PMIX_LOCALLDR);
    ok(v && v->type == PMIX_PROC_RANK && v->data.rank == 2,
       "local leader: the first rank here");
    is_str(str(in, n, PMIX_JOBID), s->nspace, "the job id is the namespace");
    is_str(str(in, n, PMIX_HOSTNAME), "n2", "this node's host");
    is_str(str(in, n, PMIX_TMPDIR), dir, "the server's folder");
    p3 = proc(in, n, 3, &pn);
    ok(p3 && pn == 8, "rank 3's set of 8 keys");
    if (p3) {
        v = find(p3, pn, PMIX_LOCAL_RANK);
        ok(v && v->type == PMIX_UINT16 && v->data.uint16 == 1, "  local rank 1");
        is_int(u32(p3, pn, PMIX_NODEID), 1, "  node 1");
        is_str(str(p3, pn, PMIX_HOSTNAME), "n2", "  on n2");
    }
    p3 = proc(in, n, 0, &pn);
    ok(p3 && !strcmp(str(p3, pn, PMIX_HOSTNAME), "n1") &&
       u32(p3, pn, PMIX_NODEID) == 0, "rank 0 on n1, node 0");
    PMIX_INFO_FREE(in, n);
}

static void ompi_env(struct pmix_host *s)
{
    struct envset e = { .no_from = 1 };
    struct err err = { "" };

    ok(pmix_host_ompi_env(s, &e, &err) == 0, "pmix_host_ompi_env");
    is_str(envset_get(&e, "OMPI_MCA_schizo"), "^orte",
           "schizo/orte off: not a singleton");
    ok(!!envset_get(&e, "OMPI_MCA_mpi_oversubscribe") ==
       (hwloc_get_nbobjs_by_type(s->topo, HWLOC_OBJ_PU) < 2),
       "oversubscribed only when the 2 ranks outnumber the CPUs");
    envset_free(&e);
    e.no_from = 1;
    envset_set(&e, "OMPI_MCA_schizo", "mine", &err, "-x");
    pmix_host_ompi_env(s, &e, &err);
    is_str(envset_get(&e, "OMPI_MCA_schizo"), "mine", "a -x value stays");
    envset_free(&e);
}

int main(void)
{
    struct alloc a = { 0 };
    struct plan p = { 0 };
    struct plan_request req = { 0 };
    struct err err = { "" };
    int ranks[2] = { 2, 3 };
    struct pmix_host_opts o = { .plan = &p, .ranks = ranks, .nranks = 2,
                                .job_id = "t" };
    struct pmix_host *s = NULL;

    /* a started server (libpmix encodes the node list only once
     * initialised), nothing connected to it */
    if (!ok(hosts_parse("n1:2,n2:2", &a, &err) == 0 &&
            plan_build(&a, &req, &p, &err) == 0 &&
            (s = pmix_host_start(&o, &err)) != NULL &&
            pmix_host_job_begin(s, 0, &err) == 0,
            "a server for the second node of 2 x 2 ranks")) {
        printf("# %s\n", err.msg);
        goto out;
    }
    snprintf(dir, sizeof dir, "%s", s->dir);
    job_info(s);
    ompi_env(s);
    pmix_host_job_end(s);
out:
    pmix_host_stop(s);
    plan_free(&p);
    alloc_free(&a);
    return tap_done();
}
#else
int main(void)
{
    return tap_skip_all("PMIx is not compiled in");
}
#endif
