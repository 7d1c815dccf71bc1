/* script_plan.c - `dlrun plan --profile NAME -N 2 [-- PROG]`: where the
 * ranks of a job would run on a site's nodes, from the node the profile
 * describes (lib/scripts/profileplan.h), printed one block per group of
 * nodes with the same ranks, or with --json the shape plain
 * `dlrun plan --json` prints. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "options.h"
#include "place/placement.h"
#include "script.h"
#include "scripts/profileplan.h"
#include "scripts/profiles.h"
#include "util/json.h"
#include "util/say.h"

static const char usage_head[] =
    "usage: dlrun plan --profile NAME [--config FILE] [-N NODES]\n"
    "           [--gpus-per-node G] [--tasks per-node|per-gpu]\n"
    "           [-p PARTITION] [--node SHAPE] [OPTIONS]\n"
    "           [-- PROG ARGS]\n"
    "The placement of every rank on the site's node that profile NAME\n"
    "describes (node: or topology: in sites.yaml), its dlrun-options first;\n"
    "one block per group of nodes with the same ranks.  Runs nothing.\n"
    "  -p, --partition NAME     the node of the profile's partition NAME\n"
    "      --node SHAPE         this node instead: \"package:2 core:20 gpu:4\"\n"
    "      --node-xml           print the node as hwloc XML instead (for\n"
    "                           dlrun --topology FILE, lstopo -i FILE)\n\n";

/* --NAME=VALUE of ours: VALUE into pp; 0 when arg is not one. */
static int take_joined(const char *arg, struct profile_plan *pp)
{
    static const char *const names[] = {
        "--profile=", "--config=", "--gpus-per-node=", "--tasks=",
        "--partition=", "--node=",
    };
    const char **to[] = { &pp->name, &pp->config, &pp->gpus_arg,
                          &pp->tasks_arg, &pp->partition, &pp->node };

    for (int i = 0; i < 6; i++)
        if (strncmp(arg, names[i], strlen(names[i])) == 0) {
            *to[i] = arg + strlen(names[i]);
            return 1;
        }
    return 0;
}

/* Take --profile NAME, --config FILE, --gpus-per-node G, --tasks T,
 * -p/--partition NAME, --node SHAPE and --node-xml (before --) out of
 * argv into pp and *node_xml; argv keeps
 * the rest, in order.  Returns the new argc, -1 printed. */
static int take_own(int argc, char **argv, struct profile_plan *pp,
                    int *node_xml)
{
    int k = 1;

    for (int i = 1; i < argc; i++) {
        if (take_joined(argv[i], pp))
            continue;
        const char **to = strcmp(argv[i], "--profile") == 0 ? &pp->name :
                          strcmp(argv[i], "--config") == 0 ? &pp->config :
                          strcmp(argv[i], "--gpus-per-node") == 0 ?
                          &pp->gpus_arg :
                          strcmp(argv[i], "--tasks") == 0 ? &pp->tasks_arg :
                          strcmp(argv[i], "--node") == 0 ? &pp->node :
                          strcmp(argv[i], "-p") == 0 ||
                          strcmp(argv[i], "--partition") == 0 ?
                          &pp->partition : NULL;

        if (strcmp(argv[i], "--node-xml") == 0) {
            *node_xml = 1;
            continue;
        }
        if (strcmp(argv[i], "--") == 0) {
            while (i < argc)
                argv[k++] = argv[i++];
            break;
        }
        if (to && i + 1 >= argc)
            return cmd_fail(EXIT_USAGE, "plan: %s needs a value", argv[i]), -1;
        if (to)
            *to = argv[++i];
        else
            argv[k++] = argv[i];
    }
    argv[k] = NULL;
    return k;
}

static void print_rank(const struct profile_plan *pp, int local, int first,
                       const struct bind_rank *b)
{
    char sock[64], numa[64], gpu[96] = "-";

    placement_where(pp->t, &b->mask, PLACE_SOCKET, sock, sizeof sock);
    placement_where(pp->t, &b->mask, PLACE_NUMA, numa, sizeof numa);
    if (b->ngpus > 1)
        snprintf(gpu, sizeof gpu, "%s (all %d)", b->gpu_list, b->ngpus);
    else if (b->gpu >= 0)
        snprintf(gpu, sizeof gpu, "%d (%s)", b->gpu, b->gpu_busid);
    printf("  %-6d %-6d %-7s %-5s %-20s %s\n", local, first + local,
           b->cpus[0] ? sock : "any", b->cpus[0] ? numa : "any",
           b->cpus[0] ? b->cpus : "- (not bound)", gpu);
}

/* The warning of one node's plan into out (ranks sharing a GPU, GPUs
 * left), or "" when none. */
static void warn_gpus(const struct profile_plan *pp, int n,
                      const struct bind_rank *b, const char *nodes,
                      char *out, size_t size)
{
    long usable = pp->gpus;

    out[0] = '\0';
    if (usable <= 0 || pp->line.bind.gpu == GPU_BIND_NONE)
        return;
    if (n > usable)
        snprintf(out, size, "warning: %s: %d ranks share %ld GPU%s (rank %d "
                 "and rank %ld both on GPU %d): memory and time are shared "
                 "too", nodes, n, usable, usable == 1 ? "" : "s", 0, usable,
                 b[0].gpu);
    else if (n == 1 && usable > 1)
        /* as at run time (lib/place/bind.c): the only rank gets every GPU */
        snprintf(out, size, "warning: %s: one rank and %ld GPUs: it is given "
                 "them all (GPUs %s) and the cores next to them; the program "
                 "must drive them all (TF MirroredStrategy, spawn-based DDP) "
                 "or they stay unused", nodes, usable, b[0].gpu_list[0] ?
                 b[0].gpu_list : "of the node");
    else if (n < usable)
        snprintf(out, size, "warning: %s: %d rank%s and %ld GPUs: %ld unused",
                 nodes, n, n == 1 ? "" : "s", usable, usable - n);
}

/* One block: nodes a..z (same ranks n each), first rank of node a. */
static int print_group(const struct profile_plan *pp, int a, int z, int n,
                       int first)
{
    struct bind_rank *b = calloc((size_t)(n ? n : 1), sizeof *b);
    char nodes[64], warning[512];
    int rc;

    if (!b)
        return cmd_fail(EXIT_FAIL, "out of memory");
    snprintf(nodes, sizeof nodes, a == z ? "node %d" : "nodes %d-%d", a, z);
    rc = n ? profileplan_place(pp, n, b) : EXIT_OK;
    if (rc == EXIT_OK) {
        printf("\n%s (%d node%s), %d rank%s each: rank%s %d", nodes,
               z - a + 1, a == z ? "" : "s", n, n == 1 ? "" : "s",
               n == 1 ? "" : "s", first);
        if (n > 1)
            printf("-%d", first + n - 1);
        printf(" on node %d%s\n", a, a == z ? "" : ", the same on the next "
               "nodes with the ranks after them");
        printf("  %-6s %-6s %-7s %-5s %-20s %s\n", "LOCAL", "RANK", "SOCKET",
               "NUMA", "CPUS", "GPU");
        for (int k = 0; k < n; k++)
            print_rank(pp, k, first, &b[k]);
        warn_gpus(pp, n, b, nodes, warning, sizeof warning);
        if (warning[0])
            printf("%s\n", warning);
    }
    free(b);
    return rc;
}

static int print_plan(const struct profile_plan *pp, const char *origin)
{
    int first = 0, total = 0, rc = EXIT_OK;

    for (int i = 0; i < pp->nodes; i++)
        total += profileplan_node_ranks(pp, i);
    printf("profile:    %s (%s)\n", pp->name, origin ? origin : "?");
    printf("node:       %s\n", pp->desc);
    printf("layout:     %d rank%s on %d node%s, %ld GPU%s a node given\n",
           total, total == 1 ? "" : "s", pp->nodes, pp->nodes == 1 ? "" : "s",
           pp->gpus, pp->gpus == 1 ? "" : "s");
    if (pp->binding)
        printf("binding:    %s\n", pp->binding);
    for (int a = 0; a < pp->nodes && rc == EXIT_OK;) {
        int n = profileplan_node_ranks(pp, a), z = a;

        while (z + 1 < pp->nodes && profileplan_node_ranks(pp, z + 1) == n)
            z++;
        rc = print_group(pp, a, z, n, first);
        first += n * (z - a + 1);
        a = z + 1;
    }
    return rc;
}

/* Nodes a..z's ranks (n each, the first of node a: first) as JSON
 * objects, the shape `dlrun plan --json` gives; the warnings said. */
static int json_group(const struct profile_plan *pp, int a, int z, int n,
                      int first)
{
    struct bind_rank *b = calloc((size_t)(n ? n : 1), sizeof *b);
    char nodes[64], warning[512], host[32];
    int rc;

    if (!b)
        return cmd_fail(EXIT_FAIL, "out of memory");
    snprintf(nodes, sizeof nodes, a == z ? "node %d" : "nodes %d-%d", a, z);
    rc = n ? profileplan_place(pp, n, b) : EXIT_OK;
    for (int i = a; rc == EXIT_OK && i <= z; i++)
        for (int k = 0; k < n; k++) {
            int r = first + (i - a) * n + k;

            snprintf(host, sizeof host, "node%d", i);
            printf("%s{\"rank\":%d,\"host\":", r ? "," : "", r);
            json_string(stdout, host);
            printf(",\"node_rank\":%d,\"local_rank\":%d,"
                   "\"local_world_size\":%d,\"cpus\":", i, k, n);
            json_string(stdout, b[k].cpus);
            printf(",\"gpu\":%d,\"gpu_busid\":", b[k].gpu);
            json_string(stdout, b[k].gpu_busid);
            putchar('}');
        }
    if (rc == EXIT_OK) {
        warn_gpus(pp, n, b, nodes, warning, sizeof warning);
        if (warning[0])
            say("%s", warning);
    }
    free(b);
    return rc;
}

/* Every node's ranks placed, to be said before any JSON is printed:
 * EXIT_OK, or the failure after its one line. */
static int place_all(const struct profile_plan *pp)
{
    int rc = EXIT_OK;

    for (int i = 0; i < pp->nodes && rc == EXIT_OK; i++) {
        int n = profileplan_node_ranks(pp, i);
        struct bind_rank *b = calloc((size_t)(n ? n : 1), sizeof *b);

        rc = !b ? cmd_fail(EXIT_FAIL, "out of memory") :
             n && (i == 0 || profileplan_node_ranks(pp, i - 1) != n) ?
             profileplan_place(pp, n, b) : EXIT_OK;
        free(b);
    }
    return rc;
}

/* The plan as `dlrun plan --json` prints one: the hosts are the profile's
 * nodes by number (node0, node1, ...) and the port is 0, both known only
 * in the job. */
static int print_plan_json(const struct profile_plan *pp, const char *origin)
{
    char why[512];
    int first = 0, total = 0, rc = place_all(pp);

    if (rc != EXIT_OK)
        return rc;
    for (int i = 0; i < pp->nodes; i++)
        total += profileplan_node_ranks(pp, i);
    snprintf(why, sizeof why, "profile %s (%s): %s", pp->name,
             origin ? origin : "?", pp->desc);
    printf("{\"source\":\"profile\",\"reason\":");
    json_string(stdout, why);
    printf(",\"layout\":\"block (fill each node's slots in order)\","
           "\"per_task\":false,\"self\":-1,\"self_node\":-1,"
           "\"nranks\":%d,\"nnodes\":%d,\"master_addr\":\"node0\","
           "\"master_port\":0,\"ranks\":[", total, pp->nodes);
    for (int a = 0; a < pp->nodes && rc == EXIT_OK;) {
        int n = profileplan_node_ranks(pp, a), z = a;

        while (z + 1 < pp->nodes && profileplan_node_ranks(pp, z + 1) == n)
            z++;
        rc = json_group(pp, a, z, n, first);
        first += n * (z - a + 1);
        a = z + 1;
    }
    printf("]}\n");
    return rc;
}

/* The profile's node as hwloc XML on stdout. */
static int print_node_xml(const struct profile_plan *pp)
{
    char *xml = NULL;
    size_t len = 0;
    int rc = profileplan_node_xml(pp, &xml, &len);

    if (rc == EXIT_OK)
        rc = fwrite(xml, 1, len, stdout) == len && fflush(stdout) == 0 ?
             EXIT_OK : EXIT_FAIL;
    free(xml);
    return rc;
}

/* argv (our own options taken out) with the profile's dlrun-options
 * through dlrun run's parser, then the plan printed. */
static int plan(struct profile_plan *pp, int argc, char **argv,
                const char *origin)
{
    struct options o;
    struct dlrun_line line;
    char usage[4096], **v;
    int rc, n;

    memset(&o, 0, sizeof o);
    if (!(v = profileplan_argv(pp, argc, argv, &n)))
        return cmd_fail(EXIT_FAIL, "out of memory");
    snprintf(usage, sizeof usage, "%s%s", usage_head, options_help());
    cmd_fail_context("plan --profile: ");
    rc = options_parse(n, v, &o, usage);
    cmd_fail_context(NULL);
    if (rc == 1)                /* --help printed */
        rc = EXIT_OK;
    else if (rc == 0) {
        script_line_of(&o, &line);
        profileplan_shape(pp, &line);
        rc = o.json ? print_plan_json(pp, origin) : print_plan(pp, origin);
        if (rc == EXIT_OK && fflush(stdout) != 0)
            rc = EXIT_FAIL;
    }
    options_free(&o);
    free(v);
    return rc;
}

int script_plan(int argc, char **argv)
{
    struct profile_plan pp;
    struct sites s = { 0 };
    char **origin = NULL;
    int rc = EXIT_USAGE, node_xml = 0;

    memset(&pp, 0, sizeof pp);
    argc = take_own(argc, argv, &pp, &node_xml);
    if (argc < 0 || profileplan_load(&pp, &s, &origin) < 0)
        goto out;
    if (node_xml)
        rc = print_node_xml(&pp);
    else if (profileplan_check_gpus(&pp) == 0)
        rc = plan(&pp, argc, argv, origin[pp.at]);
out:
    profileplan_free(&pp);
    profiles_origins_free(origin, s.n);
    sites_free(&s);
    return rc;
}
