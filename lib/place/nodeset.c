/* nodeset.c - see nodeset.h. */
#include "place/nodeset.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

int nodeset_init(struct nodeset *ns, struct alloc *a, int spares,
                 struct err *err)
{
    memset(ns, 0, sizeof *ns);
    if (spares < 0)
        return err_set(err, "--spares %d: give 0 or more", spares);
    if ((size_t)spares >= a->nnodes)
        return err_set(err, "--spares %d: the allocation has %zu node%s; "
                       "hold fewer in reserve than it has, or ask for more "
                       "nodes", spares, a->nnodes, a->nnodes == 1 ? "" : "s");
    ns->a = a;
    ns->total = a->nnodes;
    ns->nspare = (size_t)spares;
    ns->nactive = a->nnodes - ns->nspare;
    a->nnodes = ns->nactive;
    return 0;
}

static void swap_nodes(struct alloc *a, size_t i, size_t k)
{
    struct alloc_node t = a->nodes[i];

    a->nodes[i] = a->nodes[k];
    a->nodes[k] = t;
}

/* Node from moved to index to, the nodes between shifted by one: their
 * order kept. */
static void move_node(struct alloc *a, size_t from, size_t to)
{
    struct alloc_node t = a->nodes[from];

    if (from < to)
        memmove(&a->nodes[from], &a->nodes[from + 1], (to - from) * sizeof t);
    else if (from > to)
        memmove(&a->nodes[to + 1], &a->nodes[to], (from - to) * sizeof t);
    a->nodes[to] = t;
}

/* The active node called host, or -1. */
static long active_index(const struct nodeset *ns, const char *host)
{
    for (size_t i = 0; host && i < ns->nactive; i++)
        if (strcmp(ns->a->nodes[i].name, host) == 0)
            return (long)i;
    return -1;
}

static int record_excluded(struct nodeset *ns, const char *host,
                           const char *reason, int attempt, double time)
{
    struct ns_excluded *e = realloc(ns->excl, (ns->nexcl + 1) * sizeof *e);

    if (!e)
        return -1;
    ns->excl = e;
    e = &ns->excl[ns->nexcl++];
    snprintf(e->host, sizeof e->host, "%s", host);
    snprintf(e->reason, sizeof e->reason, "%s", reason);
    e->attempt = attempt;
    e->spare[0] = '\0';
    e->time = time;
    memset(&e->rec, 0, sizeof e->rec);
    return 0;
}

int nodeset_exclude(struct nodeset *ns, const char *host, const char *reason,
                    int attempt, double time, const char **spare,
                    struct err *err)
{
    long i = active_index(ns, host);
    size_t first_spare = ns->nactive;

    *spare = NULL;
    if (i < 0)
        return err_set(err, "node %s is not one the job runs on",
                       host ? host : "(unknown)");
    if (!ns->nspare)
        return 0;
    if (record_excluded(ns, host, reason, attempt, time) < 0)
        return err_set(err, "out of memory");
    /* the spare takes the node's place; the node goes past the spares */
    swap_nodes(ns->a, (size_t)i, first_spare);
    move_node(ns->a, first_spare, first_spare + ns->nspare - 1);
    ns->nspare--;
    *spare = ns->a->nodes[i].name;
    snprintf(ns->excl[ns->nexcl - 1].spare, sizeof ns->excl->spare, "%s",
             *spare);
    return 1;
}

int nodeset_limit(struct nodeset *ns, int min, int max, struct err *err)
{
    if (min < 1 || max < min)
        return err_set(err, "--nnodes %d:%d: give 1 <= MIN <= MAX", min, max);
    if (ns->nactive < (size_t)min)
        return err_set(err, "--nnodes %d:%d: the allocation has %zu node%s "
                       "and %zu of them %s held as spare%s: fewer than %d to "
                       "run on; ask for more nodes, or lower MIN or --spares",
                       min, max, ns->total, ns->total == 1 ? "" : "s",
                       ns->nspare, ns->nspare == 1 ? "is" : "are",
                       ns->nspare == 1 ? "" : "s", min);
    if (ns->nactive > (size_t)max) {    /* the nodes past MAX: spares */
        ns->nspare += ns->nactive - (size_t)max;
        ns->nactive = (size_t)max;
        ns->a->nnodes = ns->nactive;
    }
    ns->min_nodes = (size_t)min;
    ns->max_nodes = (size_t)max;
    return 0;
}

int nodeset_shrink(struct nodeset *ns, const char *host, const char *reason,
                   int attempt, double time, struct err *err)
{
    long i = active_index(ns, host);

    if (i < 0)
        return err_set(err, "node %s is not one the job runs on",
                       host ? host : "(unknown)");
    if (record_excluded(ns, host, reason, attempt, time) < 0)
        return err_set(err, "out of memory");
    /* past the spares, first of the excluded */
    move_node(ns->a, (size_t)i, ns->nactive + ns->nspare - 1);
    ns->a->nnodes = --ns->nactive;
    return ns->nactive >= ns->min_nodes && ns->nactive > 0;
}

int nodeset_exhausted(const struct nodeset *ns)
{
    return ns->min_nodes && !ns->nspare && ns->nactive <= ns->min_nodes;
}

int nodeset_drop_spare(struct nodeset *ns, const char *host,
                       const char *reason, int attempt, double time,
                       struct err *err)
{
    size_t i = ns->nactive, last = ns->nactive + ns->nspare;

    while (host && i < last && strcmp(ns->a->nodes[i].name, host) != 0)
        i++;
    if (!host || i == last)
        return err_set(err, "node %s is not a spare", host ? host : "(none)");
    if (record_excluded(ns, host, reason, attempt, time) < 0)
        return err_set(err, "out of memory");
    /* the spares after it move up: the next one taken stays the first */
    move_node(ns->a, i, last - 1);
    ns->nspare--;
    return 0;
}

int nodeset_add_attempt(struct nodeset *ns, const struct plan *p)
{
    struct ns_attempt *t = realloc(ns->att, (ns->natt + 1) * sizeof *t);
    size_t len = 1;
    char *s;

    if (!t)
        return -1;
    ns->att = t;
    for (int i = 0; i < p->nnodes; i++)
        len += strlen(p->nodes[i].host ? p->nodes[i].host : "?") + 1;
    if (!(s = malloc(len)))
        return -1;
    s[0] = '\0';
    for (int i = 0; i < p->nnodes; i++) {
        if (i)
            strcat(s, ",");
        strcat(s, p->nodes[i].host ? p->nodes[i].host : "?");
    }
    ns->att[ns->natt++] = (struct ns_attempt){ p->nranks, s };
    return 0;
}

char *nodeset_excluded_list(const struct nodeset *ns, char *buf, size_t n)
{
    size_t len = 0;

    if (n)
        buf[0] = '\0';
    for (size_t i = 0; i < ns->nexcl && len < n; i++) {
        int w = snprintf(buf + len, n - len, "%s%s", i ? "," : "",
                         ns->excl[i].host);
        len += w > 0 ? (size_t)w : 0;
    }
    return buf;
}

/* "-H " and the nodes not excluded (name:slots where a node has more
 * than one), in the allocation's order of the moment. */
static void host_list(const struct nodeset *ns, char *buf, size_t n)
{
    size_t len = (size_t)snprintf(buf, n, "-H ");

    for (size_t i = 0; i < ns->nactive + ns->nspare && len < n; i++) {
        const struct alloc_node *a = &ns->a->nodes[i];
        int w = a->slots > 1 ? snprintf(buf + len, n - len, "%s%s:%d",
                                        i ? "," : "", a->name, a->slots)
                             : snprintf(buf + len, n - len, "%s%s",
                                        i ? "," : "", a->name);
        len += w > 0 ? (size_t)w : 0;
    }
}

char *nodeset_next_submission(const struct nodeset *ns, const char *exclude,
                              char *buf, size_t n)
{
    char list[4096];

    if (n)
        buf[0] = '\0';
    if (!ns->nexcl || n < 4 || (!exclude && !ns->nactive && !ns->nspare))
        return buf;
    if (exclude)
        snprintf(buf, n, "%s%s", exclude,
                 nodeset_excluded_list(ns, list, sizeof list));
    else
        host_list(ns, buf, n);
    return buf;
}

int nodeset_node_signal(int status)
{
    int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;

    return sig == SIGKILL || sig == SIGBUS || sig == SIGSEGV;
}

void nodeset_free(struct nodeset *ns)
{
    if (ns->a)
        ns->a->nnodes = ns->total;
    for (size_t i = 0; i < ns->natt; i++)
        free(ns->att[i].nodes);
    free(ns->att);
    free(ns->excl);
    memset(ns, 0, sizeof *ns);
}

/* b - a in ms, never below 0 (a moment not reached counts as a). */
static long span(long a, long b)
{
    return b > a ? b - a : 0;
}

long nodeset_recovery_parts(const struct ns_recovery *r, long part[4])
{
    long fault = r->fault_ms ? r->fault_ms : r->detect_ms;
    long detect = r->detect_ms ? r->detect_ms : fault;
    long down = r->down_ms ? r->down_ms : detect;
    long planned = r->planned_ms ? r->planned_ms : down;

    part[0] = span(fault, detect);
    part[1] = span(detect, down);
    part[2] = span(down, planned);
    part[3] = span(planned, r->up_ms);
    if (!r->up_ms || !fault)
        return -1;
    return part[0] + part[1] + part[2] + part[3];
}

char *nodeset_recovery_line(const struct ns_recovery *r, char *buf,
                            size_t n)
{
    long part[4], all = nodeset_recovery_parts(r, part);

    if (n)
        buf[0] = '\0';
    if (all >= 0 && n)
        snprintf(buf, n, "recovered in %.1f s: detection %.1f s, teardown "
                 "%.1f s, plan %.1f s, start %.1f s", all / 1000.0,
                 part[0] / 1000.0, part[1] / 1000.0, part[2] / 1000.0,
                 part[3] / 1000.0);
    return buf;
}
