/* preflight.c - the head's side of a preflight: start the agents in
 * --preflight mode through the head's own machinery (srun or ssh, as the
 * run would), note when each report arrives (clock offsets), then read
 * every report and link result from the broker, print one table and name
 * the nodes that would fail the job. */
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rendezvous/client.h"
#include "cmd.h"
#include "options.h"
#include "where/hostlist.h"
#include "observe/preflight.h"
#include "job/preflight_run.h"
#include "run/supervise.h"
#include "run/watch.h"

#define CLOCK_BAD_MS 1000.0     /* a node this far off the head's clock */

struct pf_collect {
    struct client *c;
    struct watch *w;            /* collect_step's, or NULL */
    int n, seq;
    long deadline_ms;           /* the agents must be done by then */
    struct supervise *sv;       /* borrowed: the agents' processes */
    struct client *hook;        /* sv's hook's own connection, or NULL */
    char *gone;                 /* per node: its agent ended, told */
    double *offset_ms;          /* per node, NAN until its report came */
};

/* per node, after the agents ended */
struct pf_node {
    int have;                   /* its report decoded */
    struct pf_report r;
    struct pf_link *links;      /* owned */
    int nlinks, have_links;
    char why[600];              /* what is wrong, "" when nothing */
};

static long mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static double wall_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The collector's step (lib/run/watch.h): the next of dlrun.pf.n.1, .2, ...
 * as they are put.  Non-zero when all came, at the deadline, or when the
 * broker is gone. */
static int collect_step(void *arg, int wake)
{
    struct pf_collect *c = arg;
    struct err err = { "" };
    char key[64];
    void *v = NULL;
    size_t len = 0;
    int rc, node = -1;
    double wall = 0;

    (void)wake;
    if (c->seq > c->n || mono_ms() >= c->deadline_ms)
        return 1;
    snprintf(key, sizeof key, "dlrun.pf.n.%d", c->seq);
    rc = client_get(c->c, key, 500, &v, &len, &err);
    if (rc == CLIENT_OK) {
        double now = wall_s();
        if (sscanf(v, "%d %lf", &node, &wall) == 2 && node >= 0 &&
            node < c->n && isfinite(wall))
            c->offset_ms[node] = (wall - now) * 1000.0;
        c->seq++;
    }
    free(v);
    return rc != CLIENT_OK && rc != CLIENT_TIMEOUT;
}

/* An agent process that ended (ssh: one per node) will not answer: say
 * so where the other agents wait for it (its echo address, its "done"),
 * so that they stop waiting now, not at their deadline. */
static void note_gone(struct pf_collect *c)
{
    struct err err = { "" };
    char key[64];

    for (int i = 0; c->hook && i < c->sv->n; i++) {
        int node = -1 - c->sv->ranks[i].rank;
        if (c->sv->ranks[i].running || node < 0 || node >= c->n ||
            c->gone[node])
            continue;
        c->gone[node] = 1;
        snprintf(key, sizeof key, "dlrun.pf.done.%d", node);
        client_put(c->hook, key, "1", 1, &err);
        snprintf(key, sizeof key, "dlrun.pf.addr.%d", node);
        client_put(c->hook, key, "", 0, &err);
    }
}

/* sv's periodic hook: agents that ended; past the deadline, SIGTERM the
 * agents still running (a node that hangs), SIGKILL 5 s later. */
static int collect_deadline(void *ctx, int readable)
{
    struct pf_collect *c = ctx;
    long now = mono_ms();
    int sig = now >= c->deadline_ms + 5000 ? SIGKILL : SIGTERM;

    (void)readable;
    note_gone(c);
    if (now < c->deadline_ms)
        return c->deadline_ms - now < 500 ? (int)(c->deadline_ms - now) : 500;
    for (int i = 0; i < c->sv->n; i++)
        if (c->sv->ranks[i].running)
            killpg(c->sv->ranks[i].pid, sig);
    return 1000;
}

struct pf_collect *preflight_collect_start(const struct job *j,
                                           const char *addr,
                                           const char *token,
                                           struct supervise *sv)
{
    struct err err = { "" };
    struct pf_collect *c = calloc(1, sizeof *c);

    if (!c || !(c->offset_ms = calloc((size_t)j->plan.nnodes,
                                      sizeof *c->offset_ms)) ||
        !(c->gone = calloc((size_t)j->plan.nnodes, 1)))
        goto fail;
    c->n = j->plan.nnodes;
    c->seq = 1;
    for (int i = 0; i < c->n; i++)
        c->offset_ms[i] = NAN;
    /* agents: their own timeout (the import, then the links), after ssh's */
    c->deadline_ms = mono_ms() + (2L * j->opt.pf_timeout_s +
                                  j->opt.remote.connect_timeout_s + 5) * 1000L;
    c->c = client_connect(addr, token, 5000, &err);
    if (!c->c || !(c->hook = client_connect(addr, token, 5000, &err)))
        goto fail;
    /* without it the table lacks the clock offsets, nothing more */
    c->w = watch_start(collect_step, NULL, c, &err);
    c->sv = sv;
    /* replaces any hook before (a stall watch's: a preflight runs no
     * ranks that could stall) */
    sv->extra = collect_deadline;
    sv->extra_ctx = c;
    sv->extra_fd = -1;
    return c;
fail:
    cmd_fail(0, "preflight: cannot watch the reports: %s",
             err.msg[0] ? err.msg : "out of memory");
    if (c) {
        client_close(c->c);
        free(c->offset_ms);
        free(c->gone);
    }
    free(c);
    return NULL;
}

/* Node i's report and link results from the broker. */
static void read_node(struct client *c, const struct job *j, int i,
                      struct pf_node *nd)
{
    struct err err = { "" };
    char key[64];
    void *v = NULL;
    size_t len = 0;

    snprintf(key, sizeof key, "dlrun.pf.rep.%d", i);
    if (client_get(c, key, 0, &v, &len, &err) == CLIENT_OK) {
        nd->have = pf_decode(v, len, &nd->r, &err) == 0 && nd->r.node == i;
        if (!nd->have)
            snprintf(nd->why, sizeof nd->why, "its report is bad: %s",
                     err.msg);
    }
    free(v);
    v = NULL;
    snprintf(key, sizeof key, "dlrun.pf.links.%d", i);
    nd->links = calloc((size_t)j->plan.nnodes, sizeof *nd->links);
    if (nd->links && client_get(c, key, 0, &v, &len, &err) == CLIENT_OK)
        nd->have_links = pf_links_decode(v, len, nd->links, j->plan.nnodes,
                                         j->plan.nnodes, &nd->nlinks,
                                         &err) == 0;
    free(v);
}

/* Add "; text" to why. */
static void blame(struct pf_node *nd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void blame(struct pf_node *nd, const char *fmt, ...)
{
    size_t n = strlen(nd->why);
    va_list ap;

    if (n && n + 2 < sizeof nd->why) {
        memcpy(nd->why + n, "; ", 3);
        n += 2;
    }
    va_start(ap, fmt);
    vsnprintf(nd->why + n, sizeof nd->why - n, fmt, ap);
    va_end(ap);
}

/* The exit code of node i's agent process (ssh: one per node), -1 when
 * not known (srun: one for all). */
static int agent_code(const struct supervise *sv, int node)
{
    for (int k = 0; sv && k < sv->n; k++)
        if (sv->ranks[k].rank == -1 - node && !sv->ranks[k].running)
            return supervise_exit_code(sv->ranks[k].status);
    return -1;
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

/* Node i's own faults (its report against the head and the others). */
static void judge_node(struct pf_node *nd, const struct pf_norm *m,
                       double offset, int code)
{
    const struct pf_report *r = &nd->r;

    if (!nd->have) {
        if (!nd->why[0])
            blame(nd, code > 0 ? "no report (its agent ended with code %d: "
                  "not reachable, or dlrun cannot start there)" :
                  "no report (its agent did not start or cannot reach the "
                  "head)", code);
        return;
    }
    if (strcmp(r->version, DLRUN_VERSION) != 0)
        blame(nd, "dlrun %s there, %s here", r->version, DLRUN_VERSION);
    if (r->prog_err[0])
        blame(nd, "%s", r->prog_err);
    if (r->import_err[0])
        blame(nd, "import %s: %s", r->import_mod, r->import_err);
    if (m->gpus > 0 && r->gpus < m->gpus)
        blame(nd, "%d GPUs visible, other nodes see %d", r->gpus < 0 ? 0 :
              r->gpus, m->gpus);
    if (m->nccl && !r->nccl[0])
        blame(nd, "no NCCL library (other nodes have one)");
    if (m->cuda && !r->cuda[0])
        blame(nd, "no CUDA runtime (other nodes have one)");
    if (isfinite(offset) && fabs(offset) > CLOCK_BAD_MS)
        blame(nd, "clock %+.1f s off the head's", offset / 1000.0);
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
                blame(&nd[i], "no link results (it stopped before timing "
                      "them)");
            continue;
        }
        for (int k = 0; k < nd[i].nlinks; k++) {
            const struct pf_link *l = &nd[i].links[k];
            if (l->rtt_us >= 0 || !nd[l->peer].have)
                continue;
            blame(&nd[i], "cannot reach %s: %s", p->nodes[l->peer].host,
                  l->err);
            blame(&nd[l->peer], "%s cannot reach it: %s", p->nodes[i].host,
                  l->err);
        }
    }
}

static void fmt_mem(long long mb, char *out, size_t len)
{
    if (mb < 0)
        snprintf(out, len, "?");
    else if (mb >= 10240)
        snprintf(out, len, "%lld GiB", mb / 1024);
    else
        snprintf(out, len, "%lld MiB", mb);
}

/* "python3 3.11.2 +torch", "sh", "-" (none asked), "MISSING". */
static void fmt_prog(const struct pf_report *r, char *out, size_t len)
{
    const char *base = strrchr(r->prog, '/');

    base = base ? base + 1 : r->prog;
    if (r->prog_err[0])
        snprintf(out, len, "MISSING");
    else if (!r->prog[0])
        snprintf(out, len, "-");
    else
        snprintf(out, len, "%.40s%s%.20s%s%.40s%s", base, r->python[0] ? " " :
                 "", r->python, r->import_mod[0] ? " +" : "", r->import_mod,
                 r->import_mod[0] && r->import_err[0] ? " FAILED" : "");
}

static void fmt_links(const struct pf_node *nd, const struct plan *p,
                      char *out, size_t len)
{
    long best = -1, worst = -1;
    int bad = 0;

    snprintf(out, len, "-");
    if (!nd->have_links || nd->nlinks == 0)
        return;
    for (int k = 0; k < nd->nlinks; k++) {
        long t = nd->links[k].rtt_us;
        bad += t < 0;
        if (t >= 0 && (best < 0 || t < best))
            best = t;
        if (t > worst)
            worst = t;
    }
    if (nd->nlinks == 1 && best < 0)
        snprintf(out, len, "%s FAILED", p->nodes[nd->links[0].peer].host);
    else if (nd->nlinks == 1)
        snprintf(out, len, "%s %.2f ms", p->nodes[nd->links[0].peer].host,
                 best / 1000.0);
    else
        snprintf(out, len, "%d peers %.2f-%.2f ms%s", nd->nlinks,
                 best < 0 ? 0.0 : best / 1000.0, worst < 0 ? 0.0 :
                 worst / 1000.0, bad ? ", some FAILED" : "");
}

static void print_table(const struct pf_node *nd, const double *offset,
                        const struct plan *p)
{
    int w = 4;

    for (int i = 0; i < p->nnodes; i++)
        if ((int)strlen(p->nodes[i].host) > w)
            w = (int)strlen(p->nodes[i].host);
    printf("%-*s  %-6s %-7s %-24s %-4s %-4s %-4s %-9s %-10s %s\n", w, "NODE",
           "STATUS", "DLRUN", "PROGRAM", "GPUS", "NCCL", "CUDA", "FREE MEM",
           "CLOCK", "LINK RTT");
    for (int i = 0; i < p->nnodes; i++) {
        const struct pf_report *r = &nd[i].r;
        char prog[160], mem[32], clk[32], link[200], gpus[16];
        if (!nd[i].have) {
            printf("%-*s  %-6s %s\n", w, p->nodes[i].host, "BAD",
                   "(no report)");
            continue;
        }
        fmt_prog(r, prog, sizeof prog);
        fmt_mem(r->mem_free_mb, mem, sizeof mem);
        fmt_links(&nd[i], p, link, sizeof link);
        snprintf(gpus, sizeof gpus, r->gpus < 0 ? "-" : "%d", r->gpus);
        snprintf(clk, sizeof clk, isfinite(offset[i]) ? "%+.1f ms" : "?",
                 offset[i]);
        printf("%-*s  %-6s %-7.7s %-24s %-4s %-4s %-4s %-9s %-10s %s\n", w,
               p->nodes[i].host, nd[i].why[0] ? "BAD" : "ok", r->version,
               prog, gpus, r->nccl[0] ? "yes" : "no", r->cuda[0] ? "yes" :
               "no", mem, clk, link);
    }
}

/* The bad nodes, one line each, then the verdict (and Slurm's --exclude). */
static int verdict(const struct pf_node *nd, const struct job *j)
{
    const struct plan *p = &j->plan;
    char **bad = calloc((size_t)p->nnodes, sizeof *bad), *list = NULL;
    struct err err = { "" };
    size_t nbad = 0;

    for (int i = 0; i < p->nnodes; i++)
        if (nd[i].why[0]) {
            cmd_fail(0, "preflight: %s: %s", p->nodes[i].host, nd[i].why);
            if (bad)
                bad[nbad] = (char *)p->nodes[i].host;
            nbad++;
        }
    if (nbad == 0) {
        printf("preflight: all %d node%s ok\n", p->nnodes,
               p->nnodes == 1 ? "" : "s");
        free(bad);
        return EXIT_OK;
    }
    list = bad ? hostlist_fold(bad, nbad, &err) : NULL;
    cmd_fail(0, "preflight failed on %zu of %d nodes: %s", nbad, p->nnodes,
             list ? list : "(see above)");
    if (list && j->alloc.source && strncmp(j->alloc.source, "slurm", 5) == 0)
        cmd_fail(0, "to avoid them: sbatch/salloc --exclude=%s", list);
    free(list);
    free(bad);
    return EXIT_FAIL;
}

int preflight_collect_end(struct pf_collect *c, const struct job *j,
                          const struct supervise *sv)
{
    int n = j->plan.nnodes, rc = EXIT_FAIL;
    struct pf_node *nd = calloc((size_t)n, sizeof *nd);
    struct pf_norm m;

    if (!c || !nd) {
        free(nd);
        return cmd_fail(EXIT_FAIL, "preflight: no results");
    }
    watch_stop(c->w);
    for (int i = 0; i < n; i++)
        read_node(c->c, j, i, &nd[i]);
    norm_of(nd, n, &m);
    for (int i = 0; i < n; i++)
        judge_node(&nd[i], &m, c->offset_ms[i], agent_code(sv, i));
    judge_links(nd, n, &j->plan);
    fflush(stderr);
    print_table(nd, c->offset_ms, &j->plan);
    fflush(stdout);
    rc = verdict(nd, j);
    for (int i = 0; i < n; i++)
        free(nd[i].links);
    free(nd);
    client_close(c->c);
    client_close(c->hook);
    free(c->offset_ms);
    free(c->gone);
    free(c);
    return rc;
}

int run_preflight(struct job *j, char **prog)
{
    int fanout = j->opt.remote.fanout, rc;
    sigset_t saved;

    if (j->plan.per_task)
        return cmd_fail(EXIT_USAGE, "preflight: run it outside srun/mpirun "
                        "(it starts one agent per node itself)");
    /* every agent from the head: a preflight agent starts no others */
    if (j->opt.remote.fanout < j->plan.nnodes)
        j->opt.remote.fanout = j->plan.nnodes;
    sigprocmask(SIG_SETMASK, NULL, &saved);
    j->preflight = 1;
    rc = run_head(j, prog);
    j->preflight = 0;
    j->opt.remote.fanout = fanout;
    sigprocmask(SIG_SETMASK, &saved, NULL);
    if (rc != 0 && j->opt.preflight)
        cmd_fail(0, "not starting the job: a node failed the preflight "
                 "(dlrun check --nodes shows the same table)");
    return rc;
}

static const char check_usage[] =
    "usage: dlrun check --nodes [OPTIONS] [--import MOD] [--all-pairs] "
    "[-- PROG]\n"
    "Start one agent per node of the allocation as `dlrun [OPTIONS] PROG`\n"
    "would, and check each node: reached, dlrun version, PROG (Python and\n"
    "MOD), GPUs, NCCL/CUDA, free memory, clock, TCP round trip to its ring\n"
    "neighbour (every node with --all-pairs) on the job's interface.\n"
    "Exit 0 when all pass, 1 naming the bad nodes.\n\n";

int cmd_check_nodes(int argc, char **argv)
{
    char usage[8192];
    struct job j = { 0 };
    int rc;

    snprintf(usage, sizeof usage, "%s%s", check_usage, options_help);
    rc = options_parse(argc, argv, &j.opt, usage);
    if (rc != 0)
        return rc == 1 ? EXIT_OK : rc;
    rc = job_prepare(&j, 1);
    if (rc == 0)
        rc = run_preflight(&j, j.opt.progv ? j.opt.progv : argv + argc);
    job_free(&j);
    return rc;
}
