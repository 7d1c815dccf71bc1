/* plan.c - `dlrun plan`: the whole job as a table before anything runs. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "options.h"
#include "job/job.h"
#include "util/json.h"
#include "script.h"

static const char usage_head[] =
    "usage: dlrun plan [OPTIONS] [--json] [[--] PROG [ARGS...]]\n"
    "Show every rank's host, node rank and local rank, the allocation source\n"
    "and why it was chosen, and the rendezvous address; runs nothing.  Any\n"
    "run's line works with plan in front.\n\n";

static void print_binding(const struct bind_rank *b)
{
    char gpu[96] = "-";

    if (b->ngpus > 1)
        snprintf(gpu, sizeof gpu, "%s (all %d)", b->gpu_list, b->ngpus);
    else if (b->gpu >= 0)
        snprintf(gpu, sizeof gpu, "%d (%s)", b->gpu, b->gpu_busid);
    printf(" %-20s %s", b->cpus[0] ? b->cpus : "-", gpu);
}

static void print_table(const struct job *j)
{
    const struct plan *p = &j->plan;

    printf("allocation: %s (%s)\n", j->alloc.source, j->alloc.why);
    printf("layout:     %d rank%s on %d node%s, %s\n", p->nranks,
           p->nranks == 1 ? "" : "s", p->nnodes, p->nnodes == 1 ? "" : "s",
           p->layout);
    if (j->rdv.port)
        printf("master:     %s:%d (address: %s; port: %s)\n", j->rdv.addr,
               j->rdv.port, j->rdv.addr_from, j->rdv.port_from);
    else
        printf("master:     unresolved here: %s\n", j->rdv.addr_from);
    if (j->alloc.gpus)
        printf("gpus:       %s (from %s)\n", j->alloc.gpus, j->alloc.gpus_from);
    printf("%-6s %-20s %-9s %-10s %-5s%s\n", "RANK", "HOST", "NODE_RANK",
           "LOCAL_RANK", "LOCAL", j->bind ? " CPUS                 GPU" : "");
    for (int r = 0; r < p->nranks; r++) {
        const struct plan_node *n = &p->nodes[p->rank_node[r]];
        printf("%-6d %-20s %-9d %-10d %-5d", r, n->host ? n->host : "?",
               p->rank_node[r], p->rank_local[r], n->nranks);
        if (j->bind)
            print_binding(&j->bind[r]);
        printf("%s\n", r == p->self ? "  <- this task" :
               p->rank_node[r] == p->self_node ? "  <- started here" : "");
    }
}

static void print_json(const struct job *j)
{
    const struct plan *p = &j->plan;

    printf("{\"source\":");
    json_string(stdout, j->alloc.source);
    printf(",\"reason\":");
    json_string(stdout, j->alloc.why);
    printf(",\"layout\":");
    json_string(stdout, p->layout);
    printf(",\"per_task\":%s,\"self\":%d,\"self_node\":%d,\"nranks\":%d,"
           "\"nnodes\":%d,\"master_addr\":", p->per_task ? "true" : "false",
           p->self, p->self_node, p->nranks, p->nnodes);
    json_string(stdout, j->rdv.addr);
    printf(",\"master_port\":%d,\"ranks\":[", j->rdv.port);
    for (int r = 0; r < p->nranks; r++) {
        const struct plan_node *n = &p->nodes[p->rank_node[r]];
        printf("%s{\"rank\":%d,\"host\":", r ? "," : "", r);
        json_string(stdout, n->host);
        printf(",\"node_rank\":%d,\"local_rank\":%d,\"local_world_size\":%d",
               p->rank_node[r], p->rank_local[r], n->nranks);
        if (j->bind) {
            printf(",\"cpus\":");
            json_string(stdout, j->bind[r].cpus);
            printf(",\"gpu\":%d,\"gpu_busid\":", j->bind[r].gpu);
            json_string(stdout, j->bind[r].gpu_busid);
        }
        putchar('}');
    }
    printf("]}\n");
}

/* The program a run of this line would start, as the dialect made it
 * (torchrun's train.py: python3 -u train.py). */
static void print_program(char **prog)
{
    if (!prog)
        return;
    printf("program:   ");
    for (; *prog; prog++)
        printf(" %s", *prog);
    putchar('\n');
}

int cmd_plan(int argc, char **argv)
{
    char usage[4096];
    struct job j = { 0 };
    int rc;

    /* a site's node from its profile, not this allocation */
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--profile") == 0 ||
            strncmp(argv[i], "--profile=", 10) == 0)
            return script_plan(argc, argv);
    snprintf(usage, sizeof usage, "%s%s", usage_head, options_help());
    rc = options_parse(argc, argv, &j.opt, usage);
    if (rc != 0)
        return rc == 1 ? EXIT_OK : rc;
    rc = job_prepare(&j, 0);
    if (rc != 0)
        goto out;
    if (j.opt.json) {
        print_json(&j);
    } else {
        print_program(j.opt.progv);
        print_table(&j);
    }
    rc = fflush(stdout) == 0 ? EXIT_OK : EXIT_FAIL;
out:
    job_free(&j);
    return rc;
}
