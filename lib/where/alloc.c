/* alloc.c - probing the allocation sources in their documented order.
 *
 * Explicit flags > Open MPI > the schedulers that start tasks (Slurm: a
 * step, then an allocation) > PMIx > MPICH/Hydra > the batch schedulers
 * (PBS Pro/Torque, NQSV, PJM, LSF) > this host alone; each scheduler's
 * place is its row's probe (sched.h).  Open MPI first: only mpirun's
 * daemons set OMPI_COMM_WORLD_RANK (not MPI_Init, not srun), and inside
 * an allocation its ranks inherit the Slurm variables of the batch script
 * or of the srun step that started mpirun's daemons, which describe
 * those, not the ranks.  An mpirun inside a batch job gives its tasks
 * their own variables beside the job's: the tasks' win.
 */
#include "where/alloc.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "where/hostlist.h"
#include "where/hostname.h"
#include "where/sched.h"

/* Sources at most, all schedulers' included. */
#define MAX_SOURCES 32

/* One source in probing order, with the scheduler whose it is. */
struct probe {
    const struct alloc_source *src;
    const struct sched *sched;
    int at;                     /* its place: SCHED_PROBE_* */
};

/* The sources that are no scheduler's, in their places. */
static const struct probe own[] = {
    { &alloc_source_hosts, NULL, 0 },
    { &alloc_source_hostfile, NULL, 1 },
    { &alloc_source_ompi, NULL, 2 },
    { &alloc_source_pmix, NULL, SCHED_PROBE_TASKS + 10 },
    { &alloc_source_mpich, NULL, SCHED_PROBE_TASKS + 11 },
    { &alloc_source_local, NULL, SCHED_PROBE_BATCH + 100 },
};

/* p into out[0..n) after those of the same place or before (n < max). */
static size_t insert(struct probe *out, size_t n, struct probe p)
{
    size_t i = n;

    while (i > 0 && out[i - 1].at > p.at) {
        out[i] = out[i - 1];
        i--;
    }
    out[i] = p;
    return n + 1;
}

/* The sources in probing order into out (MAX_SOURCES); how many. */
static size_t probe_order(struct probe *out)
{
    size_t n = 0;

    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        n = insert(out, n, own[i]);
    for (const struct sched *const *s = sched_all(); *s; s++)
        for (const struct alloc_source *const *src = (*s)->sources;
             *src && n < MAX_SOURCES; src++)
            n = insert(out, n, (struct probe){ *src, *s, (*s)->probe });
    return n;
}

const char *const *alloc_source_names(void)
{
    static const char *names[MAX_SOURCES + 1];
    struct probe order[MAX_SOURCES];
    size_t n = probe_order(order);

    for (size_t i = 0; i < n; i++)
        names[i] = order[i].src->name;
    names[n] = NULL;
    return names;
}

static const struct probe *probe_by_name(const struct probe *order, size_t n,
                                         const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(order[i].src->name, name) == 0)
            return &order[i];
    return NULL;
}

const struct alloc_source *alloc_source_find(const char *name)
{
    struct probe order[MAX_SOURCES];
    const struct probe *p = probe_by_name(order, probe_order(order), name);

    return p ? p->src : NULL;
}

static int read_source(const struct probe *p, const struct alloc_request *req,
                       char **envp, struct alloc *a, struct err *err)
{
    memset(a, 0, sizeof *a);
    a->source = p->src->name;
    a->kind = p->src->kind;
    a->sched = p->sched;
    a->pmix_map = p->src->pmix_map;
    if (p->src->read(req, envp, a, err) < 0) {
        alloc_free(a);
        return -1;
    }
    return 0;
}

int alloc_detect(const struct alloc_request *req, char **envp, struct alloc *a,
                 struct err *err)
{
    struct probe order[MAX_SOURCES];
    size_t n = probe_order(order);
    const struct probe *p;

    if (req->force) {
        p = probe_by_name(order, n, req->force);
        if (!p)
            return err_set(err, "--alloc %s: unknown allocation source; "
                           "`dlrun check` lists them", req->force);
        return read_source(p, req, envp, a, err);
    }
    if (req->hosts && req->hostfile)
        return err_set(err, "-H and --hostfile both given: use one of them");
    for (size_t i = 0; i < n; i++) {
        if (order[i].src->detect(req, envp))
            return read_source(&order[i], req, envp, a, err);
    }
    return err_set(err, "no allocation source applies (not even this host)");
}

void alloc_free(struct alloc *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->nnodes; i++) {
        free(a->nodes[i].name);
        free(a->nodes[i].login);
        free(a->nodes[i].addr_name);
    }
    free(a->nodes);
    free(a->task_node);
    free(a->pmi_node);
    free(a->jobid);
    free(a->stepid);
    free(a->gpus);
    free(a->index);
    memset(a, 0, sizeof *a);
}

int alloc_slots(const struct alloc *a)
{
    long sum = 0;

    for (size_t i = 0; i < a->nnodes; i++)
        sum += a->nodes[i].slots;
    return sum > INT_MAX ? INT_MAX : (int)sum;
}

const char *alloc_getenv(char **envp, const char *name)
{
    size_t len = strlen(name);

    for (char **e = envp; e && *e; e++)
        if (strncmp(*e, name, len) == 0 && (*e)[len] == '=')
            return *e + len + 1;
    return NULL;
}

int alloc_getint(char **envp, const char *name, int min, int max, int *out,
                 struct err *err)
{
    const char *v = alloc_getenv(envp, name);
    char *end = NULL;
    long n;

    if (!v)
        return err_set(err, "%s is not set", name);
    errno = 0;
    n = strtol(v, &end, 10);
    if (errno || end == v || *end || n < min || n > max)
        return err_set(err, "%s=%s: expected a whole number from %d to %d",
                       name, v, min, max);
    *out = (int)n;
    return 0;
}

static size_t name_hash(const char *s)
{
    size_t h = 14695981039346656037u;

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

/* The slot of name in the open-addressing index (empty slots hold 0;
 * node i is stored as i + 1). */
static size_t *index_slot(const struct alloc *a, const char *name)
{
    size_t mask = a->index_cap - 1, i = name_hash(name) & mask;

    while (a->index[i] && strcmp(a->nodes[a->index[i] - 1].name, name) != 0)
        i = (i + 1) & mask;
    return &a->index[i];
}

/* Keep the index at most half full: rebuild it twice as large. */
static int index_grow(struct alloc *a, struct err *err)
{
    size_t cap = a->index_cap ? 2 * a->index_cap : 64;

    if (2 * (a->nnodes + 1) <= a->index_cap)
        return 0;
    free(a->index);
    a->index = calloc(cap, sizeof *a->index);
    if (!a->index)
        return err_set(err, "out of memory");
    a->index_cap = cap;
    for (size_t i = 0; i < a->nnodes; i++)
        *index_slot(a, a->nodes[i].name) = i + 1;
    return 0;
}

static int append_node(struct alloc *a, const char *name, int slots,
                       struct err *err)
{
    struct alloc_node *nodes = a->nodes;

    if (a->nnodes == a->nodes_cap) {    /* doubling: a million hosts is fine */
        size_t cap = a->nodes_cap ? 2 * a->nodes_cap : 16;
        nodes = realloc(a->nodes, cap * sizeof *nodes);
        if (!nodes)
            return err_set(err, "out of memory");
        a->nodes = nodes;
        a->nodes_cap = cap;
    }
    memset(&nodes[a->nnodes], 0, sizeof nodes[0]);
    nodes[a->nnodes].name = strdup(name);
    if (!nodes[a->nnodes].name)
        return err_set(err, "out of memory");
    nodes[a->nnodes].slots = slots;
    return (int)a->nnodes++;
}

int alloc_add_node(struct alloc *a, const char *name, int slots, int merge,
                   struct err *err)
{
    size_t *slot;

    if (++a->names_seen > ALLOC_MAX_NAMES)
        return err_set(err, "more than %d host names: too many for one job",
                       ALLOC_MAX_NAMES);
    if (hostname_check(name, err) < 0)
        return -1;
    if (!merge)
        return append_node(a, name, slots, err);
    if (index_grow(a, err) < 0)
        return -1;
    slot = index_slot(a, name);
    if (*slot) {
        struct alloc_node *n = &a->nodes[*slot - 1];
        if (n->slots > INT_MAX - slots)
            return err_set(err, "host %s: too many slots", name);
        n->slots += slots;
        return (int)(*slot - 1);
    }
    if (append_node(a, name, slots, err) < 0)
        return -1;
    *slot = a->nnodes;
    return (int)a->nnodes - 1;
}

static int check_tasks(size_t nhosts, const int *counts, size_t ncounts,
                       int ntasks, const char *list_var, const char *tpn_var,
                       const char *ntasks_var, struct err *err)
{
    long sum = 0;

    if (ncounts != nhosts)
        return err_set(err, "%s names %zu nodes but %s gives counts for %zu: "
                       "the scheduler's variables disagree; run dlrun from a "
                       "fresh job or step (or pass -H)", list_var, nhosts,
                       tpn_var, ncounts);
    for (size_t i = 0; i < ncounts; i++)
        sum += counts[i];
    if (ntasks >= 0 && sum != ntasks)
        return err_set(err, "%s sums to %ld tasks but %s=%d: the scheduler's "
                       "variables disagree; run dlrun from a fresh job or step "
                       "(or pass -H)", tpn_var, sum, ntasks_var, ntasks);
    return 0;
}

int alloc_add_hostlist(struct alloc *a, const char *list, const char *list_var,
                       const char *tpn, const char *tpn_var, int ntasks,
                       const char *ntasks_var, struct err *err)
{
    char **hosts = NULL;
    size_t nhosts = 0, ncounts = 0;
    int *counts = NULL;
    int rc = -1;

    if (hostlist_expand(list, &hosts, &nhosts, err) < 0) {
        err_prefix(err, "%s", list_var);
        goto out;
    }
    if (!tpn) {
        for (size_t i = 0; i < nhosts; i++)
            if (alloc_add_node(a, hosts[i], 1, 0, err) < 0) {
                err_prefix(err, "%s", list_var);
                goto out;
            }
        rc = 0;
        goto out;
    }
    if (tasks_per_node_parse(tpn, &counts, &ncounts, err) < 0) {
        err_prefix(err, "%s", tpn_var);
        goto out;
    }
    if (check_tasks(nhosts, counts, ncounts, ntasks, list_var, tpn_var,
                    ntasks_var, err) < 0)
        goto out;
    for (size_t i = 0; i < nhosts; i++)
        if (alloc_add_node(a, hosts[i], counts[i], 0, err) < 0) {
            err_prefix(err, "%s", list_var);
            goto out;
        }
    rc = 0;
out:
    hostlist_free(hosts, nhosts);
    free(counts);
    return rc;
}

void alloc_this_host(char *buf, size_t size)
{
    if (gethostname(buf, size - 1) < 0 || hostname_check(buf, NULL) < 0)
        snprintf(buf, size, "localhost");
    buf[size - 1] = '\0';
}
