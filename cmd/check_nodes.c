/* check_nodes.c - `dlrun check --nodes` and the preflight of `dlrun
 * --preflight`: the library runs it (lib/job/preflight_run.h); this file
 * prints its table on stdout, one row per node, and "all N nodes ok"
 * when no node is bad (the bad nodes' lines follow on stderr). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "options.h"
#include "job/preflight_run.h"

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

static void print_table(void *ctx, const struct pf_table *t)
{
    const struct plan *p = t->plan;
    const struct pf_node *nd = t->nodes;
    int w = 4;

    (void)ctx;
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
        snprintf(clk, sizeof clk, isfinite(nd[i].offset_ms) ? "%+.1f ms" :
                 "?", nd[i].offset_ms);
        printf("%-*s  %-6s %-7.7s %-24s %-4s %-4s %-4s %-9s %-10s %s\n", w,
               p->nodes[i].host, nd[i].why[0] ? "BAD" : "ok", r->version,
               prog, gpus, r->nccl[0] ? "yes" : "no", r->cuda[0] ? "yes" :
               "no", mem, clk, link);
    }
    if (t->nbad == 0)
        printf("preflight: all %d node%s ok\n", p->nnodes,
               p->nnodes == 1 ? "" : "s");
    fflush(stdout);
}

static const struct pf_show show_table = { print_table, NULL };

int run_preflight(struct job *j, char **prog)
{
    return job_preflight(j, prog, &show_table);
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

    snprintf(usage, sizeof usage, "%s%s", check_usage, options_help());
    rc = options_parse(argc, argv, &j.opt, usage);
    if (rc != 0)
        return rc == 1 ? EXIT_OK : rc;
    rc = job_prepare(&j, 1);
    if (rc == 0)
        rc = run_preflight(&j, j.opt.progv ? j.opt.progv : argv + argc);
    job_free(&j);
    return rc;
}
