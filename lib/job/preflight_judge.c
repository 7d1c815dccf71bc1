/* preflight_judge.c - each node's faults from its report, its clock and
 * its links, and the verdict that names the bad nodes. */
#include "job/preflight_judge.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job/job.h"
#include "util/say.h"
#include "where/hostlist.h"
#include "where/sched.h"

#define CLOCK_BAD_MS 1000.0     /* a node this far off the head's clock */

/* Add "; text" to why; the first probe blamed is the node's probe. */
static void blame(struct pf_node *nd, const char *probe, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void blame(struct pf_node *nd, const char *probe, const char *fmt, ...)
{
    size_t n = strlen(nd->why);
    va_list ap;

    if (!nd->probe[0])
        snprintf(nd->probe, sizeof nd->probe, "%s", probe);
    if (n && n + 2 < sizeof nd->why) {
        memcpy(nd->why + n, "; ", 3);
        n += 2;
    }
    va_start(ap, fmt);
    vsnprintf(nd->why + n, sizeof nd->why - n, fmt, ap);
    va_end(ap);
}

/* What every node should have because another one has it: the most GPUs
 * any node sees, NCCL and CUDA when any node has them. */
struct pf_norm {
    int gpus, nccl, cuda;
};

static void norm_of(const struct pf_node *nd, int n, struct pf_norm *m)
{
    memset(m, 0, sizeof *m);
    m->gpus = -1;
    for (int i = 0; i < n; i++) {
        if (!nd[i].have)
            continue;
        if (nd[i].r.gpus > m->gpus)
            m->gpus = nd[i].r.gpus;
        m->nccl |= nd[i].r.nccl[0] != '\0';
        m->cuda |= nd[i].r.cuda[0] != '\0';
    }
}

/* A node without a report: why, from its agent's exit code. */
static void judge_missing(struct pf_node *nd)
{
    if (nd->why[0])
        return;
    if (nd->agent_code > 0)
        blame(nd, "report", "no report (its agent ended with code %d: not reachable, "
              "or dlrun cannot start there)", nd->agent_code);
    else
        blame(nd, "report", "no report (its agent did not start or cannot reach the "
              "head)");
}

/* Node i's own faults (its report against the head and the others). */
static void judge_node(struct pf_node *nd, const struct pf_norm *m)
{
    const struct pf_report *r = &nd->r;

    if (!nd->have) {
        judge_missing(nd);
        return;
    }
    if (strcmp(r->version, DLRUN_VERSION) != 0)
        blame(nd, "dlrun version", "dlrun %s there, %s here", r->version, DLRUN_VERSION);
    if (r->prog_err[0])
        blame(nd, "program", "%s", r->prog_err);
    if (r->import_err[0])
        blame(nd, "python imports", "import %s: %s", r->import_mod, r->import_err);
    if (m->gpus > 0 && r->gpus < m->gpus)
        blame(nd, "GPUs", "%d GPUs visible, other nodes see %d", r->gpus < 0 ? 0 :
              r->gpus, m->gpus);
    if (m->nccl && !r->nccl[0])
        blame(nd, "NCCL", "no NCCL library (other nodes have one)");
    if (m->cuda && !r->cuda[0])
        blame(nd, "CUDA", "no CUDA runtime (other nodes have one)");
    if (isfinite(nd->offset_ms) && fabs(nd->offset_ms) > CLOCK_BAD_MS)
        blame(nd, "clock", "clock %+.1f s off the head's", nd->offset_ms / 1000.0);
}

static int peers_reported(const struct pf_node *nd, int n)
{
    for (int i = 0; i < n; i++)
        if (!nd[i].have)
            return 0;
    return 1;
}

/* A failed link: the peer without a report is the one to blame; when
 * both reported, both are named (either end can be at fault). */
static void judge_links(struct pf_node *nd, int n, const struct plan *p)
{
    for (int i = 0; i < n; i++) {
        if (!nd[i].have)
            continue;
        if (!nd[i].have_links && n > 1) {
            /* waiting for a peer that never came: that peer's fault */
            if (nd[(i + 1) % n].have && peers_reported(nd, n))
                blame(&nd[i], "round trip", "no link results (it stopped before timing "
                      "them)");
            continue;
        }
        for (int k = 0; k < nd[i].nlinks; k++) {
            const struct pf_link *l = &nd[i].links[k];
            if (l->rtt_us >= 0 || !nd[l->peer].have)
                continue;
            blame(&nd[i], "round trip", "cannot reach %s: %s", p->nodes[l->peer].host,
                  l->err);
            blame(&nd[l->peer], "round trip", "%s cannot reach it: %s", p->nodes[i].host,
                  l->err);
        }
    }
}

int pf_judge_one(struct pf_node *nd)
{
    const struct pf_norm none = { .gpus = -1 };

    judge_node(nd, &none);
    return nd->why[0] != '\0';
}

int pf_judge(struct pf_node *nd, int n, const struct plan *p)
{
    struct pf_norm m;
    int bad = 0;

    norm_of(nd, n, &m);
    for (int i = 0; i < n; i++)
        judge_node(&nd[i], &m);
    judge_links(nd, n, p);
    for (int i = 0; i < n; i++)
        bad += nd[i].why[0] != '\0';
    return bad;
}

int pf_verdict(const struct pf_node *nd, const struct job *j)
{
    const struct plan *p = &j->plan;
    char **bad = calloc((size_t)p->nnodes, sizeof *bad), *list = NULL;
    struct err err = { "" };
    size_t nbad = 0;

    for (int i = 0; i < p->nnodes; i++)
        if (nd[i].why[0]) {
            say("preflight: %s: %s", p->nodes[i].host, nd[i].why);
            if (bad)
                bad[nbad] = (char *)p->nodes[i].host;
            nbad++;
        }
    if (nbad == 0)
        goto out;
    list = bad ? hostlist_fold(bad, nbad, &err) : NULL;
    say("preflight failed on %zu of %d nodes: %s", nbad, p->nnodes,
        list ? list : "(see above)");
    if (list && j->alloc.sched && j->alloc.sched->exclude)
        say("to avoid them: %s%s", j->alloc.sched->exclude, list);
out:
    free(list);
    free(bad);
    return nbad ? EXIT_FAIL : EXIT_OK;
}
