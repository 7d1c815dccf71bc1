/* pmix_host_info.c - what the hosted PMIx server tells the ranks about
 * their job (see pmix_host_int.h).  The keys are the ones Open MPI 4.1's
 * ess/pmi reads (job size, local and node ranks, local peers, hosts) and
 * PRRTE registers. */
#ifdef HAVE_PMIX
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/pmix_host_int.h"
#include "util/strv.h"

/* "a,b,c" of the plan's hosts, and "0,1;2,3" of their ranks (caller
 * frees both).  -1 when out of memory. */
static int node_and_proc_lists(const struct plan *p, char **nodes,
                               char **procs)
{
    size_t nlen = 0, plen = 0;
    FILE *n = open_memstream(nodes, &nlen), *r = open_memstream(procs, &plen);
    int rc = n && r ? 0 : -1;

    for (int i = 0; rc == 0 && i < p->nnodes; i++) {
        int first = 1;
        fprintf(n, "%s%s", i ? "," : "", p->nodes[i].host);
        fprintf(r, "%s", i ? ";" : "");
        for (int k = 0; k < p->nranks; k++)
            if (p->rank_node[k] == i) {
                fprintf(r, "%s%d", first ? "" : ",", k);
                first = 0;
            }
    }
    if ((n && fclose(n) != 0) || (r && fclose(r) != 0))
        rc = -1;
    return rc;
}

/* PMIX_NODE_MAP and PMIX_PROC_MAP as libpmix's regular expressions. */
static int load_maps(const struct plan *p, pmix_info_t *info, struct err *err)
{
    char *nodes = NULL, *procs = NULL, *nregex = NULL, *pregex = NULL;
    int rc = -1;

    if (node_and_proc_lists(p, &nodes, &procs) < 0) {
        err_set(err, "out of memory");
        goto out;
    }
    if (PMIx_generate_regex(nodes, &nregex) != PMIX_SUCCESS ||
        PMIx_generate_ppn(procs, &pregex) != PMIX_SUCCESS) {
        err_set(err, "PMIx cannot encode the node list %.100s", nodes);
        goto out;
    }
    PMIX_INFO_LOAD(&info[0], PMIX_NODE_MAP, nregex, PMIX_REGEX);
    PMIX_INFO_LOAD(&info[1], PMIX_PROC_MAP, pregex, PMIX_REGEX);
    rc = 0;
out:
    free(nodes);
    free(procs);
    free(nregex);
    free(pregex);
    return rc;
}

/* "0,1,2": the ranks started here (caller frees). */
static char *local_peers(const struct pmix_host_opts *o)
{
    struct membuf b;
    FILE *m = membuf_open(&b);

    if (!m)
        return NULL;
    for (int i = 0; i < o->nranks; i++)
        fprintf(m, "%s%d", i ? "," : "", o->ranks[i]);
    return membuf_close(&b);
}

#define JOB_KEYS 16

/* Job-level and this node's keys into info[0..JOB_KEYS). */
static int load_job(const struct pmix_host *s, pmix_info_t *info,
                    struct err *err)
{
    const struct plan *p = s->o.plan;
    uint32_t size = (uint32_t)p->nranks, nnodes = (uint32_t)p->nnodes,
             local = (uint32_t)s->o.nranks, zero = 0, one = 1;
    pmix_rank_t lldr = (pmix_rank_t)s->o.ranks[0], aldr = 0;
    char *peers = local_peers(&s->o);

    if (!peers)
        return err_set(err, "out of memory");
    PMIX_INFO_LOAD(&info[0], PMIX_UNIV_SIZE, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[1], PMIX_JOB_SIZE, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[2], PMIX_MAX_PROCS, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[3], PMIX_APP_SIZE, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[4], PMIX_JOB_NUM_APPS, &one, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[5], PMIX_APPLDR, &aldr, PMIX_PROC_RANK);
    PMIX_INFO_LOAD(&info[6], PMIX_NUM_NODES, &nnodes, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[7], PMIX_JOBID, s->nspace, PMIX_STRING);
    PMIX_INFO_LOAD(&info[8], PMIX_LOCAL_SIZE, &local, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[9], PMIX_NODE_SIZE, &local, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[10], PMIX_LOCAL_PEERS, peers, PMIX_STRING);
    PMIX_INFO_LOAD(&info[11], PMIX_LOCALLDR, &lldr, PMIX_PROC_RANK);
    PMIX_INFO_LOAD(&info[12], PMIX_TMPDIR, s->dir, PMIX_STRING);
    PMIX_INFO_LOAD(&info[13], PMIX_APPNUM, &zero, PMIX_UINT32);
    /* Open MPI 4.1 adopts it instead of discovering the node in each rank */
    PMIX_INFO_LOAD(&info[14], PMIX_LOCAL_TOPO, s->topo_xml, PMIX_STRING);
    free(peers);
    return load_maps(p, &info[15], err);
}

#define PROC_KEYS 8

/* One rank's keys, as a PMIX_PROC_DATA array (rank first). */
static void load_proc(const struct plan *p, int rank, pmix_info_t *info)
{
    pmix_data_array_t *d = NULL;
    pmix_info_t *k;
    pmix_rank_t r = (pmix_rank_t)rank;
    uint32_t zero = 0, node = (uint32_t)p->rank_node[rank];
    uint16_t local = (uint16_t)p->rank_local[rank];

    PMIX_DATA_ARRAY_CREATE(d, PROC_KEYS, PMIX_INFO);
    k = d->array;
    PMIX_INFO_LOAD(&k[0], PMIX_RANK, &r, PMIX_PROC_RANK);
    PMIX_INFO_LOAD(&k[1], PMIX_APPNUM, &zero, PMIX_UINT32);
    PMIX_INFO_LOAD(&k[2], PMIX_APP_RANK, &r, PMIX_PROC_RANK);
    PMIX_INFO_LOAD(&k[3], PMIX_GLOBAL_RANK, &r, PMIX_PROC_RANK);
    PMIX_INFO_LOAD(&k[4], PMIX_LOCAL_RANK, &local, PMIX_UINT16);
    PMIX_INFO_LOAD(&k[5], PMIX_NODE_RANK, &local, PMIX_UINT16);
    PMIX_INFO_LOAD(&k[6], PMIX_NODEID, &node, PMIX_UINT32);
    PMIX_INFO_LOAD(&k[7], PMIX_HOSTNAME, p->nodes[node].host, PMIX_STRING);
    /* the array is the info's value now: PMIX_INFO_FREE releases it */
    PMIX_LOAD_KEY(info->key, PMIX_PROC_DATA);
    info->value.type = PMIX_DATA_ARRAY;
    info->value.data.darray = d;
}

int pmix_host_job_info(const struct pmix_host *s, pmix_info_t **info,
                       size_t *ninfo, struct err *err)
{
    const struct plan *p = s->o.plan;
    size_t n = JOB_KEYS + 1 + (size_t)p->nranks;
    pmix_info_t *in = NULL;

    PMIX_INFO_CREATE(in, n);
    if (!in)
        return err_set(err, "out of memory");
    if (load_job(s, in, err) < 0) {
        PMIX_INFO_FREE(in, n);
        return -1;
    }
    PMIX_INFO_LOAD(&in[JOB_KEYS], PMIX_HOSTNAME,
                   p->nodes[s->self_node].host, PMIX_STRING);
    for (int r = 0; r < p->nranks; r++)
        load_proc(p, r, &in[JOB_KEYS + 1 + r]);
    *info = in;
    *ninfo = n;
    return 0;
}

/* Found by experiment with Debian's Open MPI 4.1.4 (docs/mpi.md): with
 * no scheduler it recognises (Slurm, Flux, JSM), Open MPI's schizo/orte
 * declares a process without mpirun's daemon a singleton, forces
 * ess=singleton and starts an orted of its own: every rank a world of 1.
 * Without that component ess/pmi wins and reads our server.  And, as
 * mpirun does, more ranks here than CPUs: waiting ranks yield the CPU
 * instead of spinning on it.  Values the user set with -x stay. */
int pmix_host_ompi_env(const struct pmix_host *s, struct envset *out,
                       struct err *err)
{
    int pus = hwloc_get_nbobjs_by_type(s->topo, HWLOC_OBJ_PU);

    if (!envset_get(out, "OMPI_MCA_schizo") &&
        envset_set(out, "OMPI_MCA_schizo", "^orte", err, "--mpi=pmix: Open "
                   "MPI 4.1 must not take the rank for a singleton") < 0)
        return -1;
    if (pus > 0 && s->o.nranks > pus &&
        !envset_get(out, "OMPI_MCA_mpi_oversubscribe") &&
        envset_set(out, "OMPI_MCA_mpi_oversubscribe", "1", err, "--mpi=pmix: "
                   "%d ranks on %d CPUs (Open MPI then yields when idle)",
                   s->o.nranks, pus) < 0)
        return -1;
    return 0;
}
#endif
