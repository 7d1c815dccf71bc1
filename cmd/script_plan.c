/* script_plan.c - `dlrun plan --profile NAME -N 2 [-- PROG]`: where the
 * ranks of a job would run on a site's nodes (CPUs, socket, NUMA node,
 * GPU of every local rank), from the node the profile describes, before
 * any hours are spent in its queue.  Nodes with the same number of ranks
 * are the same plan: one block per group of them, not a line per rank. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "place/bind.h"
#include "cmd.h"
#include "place/nodeshape.h"
#include "options.h"
#include "place/placement.h"
#include "util/readall.h"
#include "script.h"
#include "place/topo.h"
#include "scripts/profiles.h"

static const char usage_head[] =
    "usage: dlrun plan --profile NAME [--config FILE] [-N NODES]\n"
    "           [--gpus-per-node G] [--tasks per-node|per-gpu] [OPTIONS]\n"
    "           [-- PROG ARGS]\n"
    "The placement of every rank on the site's node that profile NAME\n"
    "describes (node: or topology: in sites.yaml), its dlrun-options first;\n"
    "one block per group of nodes with the same ranks.  Runs nothing.\n"
    "      --node-xml           print the node as hwloc XML instead (for\n"
    "                           dlrun --topology FILE, lstopo -i FILE)\n\n";

/* What plan --profile was given, beside dlrun's own options. */
struct pplan {
    const char *name, *config;
    const char *gpus_arg;   /* --gpus-per-node, or NULL: the profile's */
    const char *tasks_arg;  /* --tasks, or NULL: the profile's */
    const char *binding;    /* who binds one task a GPU, or NULL */
    int node_xml;       /* --node-xml: print the node's hwloc XML */
    const struct site_profile *p;
    struct options o;
    struct topo *t;
    char desc[256];
    int nodes;          /* nodes of the job */
    long gpus;          /* GPUs a node of the job is given */
};

/* --NAME=VALUE of ours: VALUE into *to; 0 when arg is not one. */
static int take_joined(const char *arg, struct pplan *pp)
{
    static const char *const names[] = {
        "--profile=", "--config=", "--gpus-per-node=", "--tasks=",
    };
    const char **to[] = { &pp->name, &pp->config, &pp->gpus_arg,
                          &pp->tasks_arg };

    for (int i = 0; i < 4; i++)
        if (strncmp(arg, names[i], strlen(names[i])) == 0) {
            *to[i] = arg + strlen(names[i]);
            return 1;
        }
    return 0;
}

/* Take --profile NAME, --config FILE, --gpus-per-node G and --node-xml
 * (before --) out of argv into pp; argv keeps the rest, in order.
 * Returns the new argc, -1 printed. */
static int take_own(int argc, char **argv, struct pplan *pp)
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
                          NULL;

        if (strcmp(argv[i], "--node-xml") == 0) {
            pp->node_xml = 1;
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

/* Whether the profile's --map-by is left out, as dlrun script does: the
 * GPUs per node changed and argv gives no --map-by of its own. */
static int drop_map_by(const struct pplan *pp, int argc, char **argv)
{
    const struct site_value *g = &pp->p->v[SITE_GPUS_PER_NODE];

    if (!pp->gpus_arg || !g->set || atol(g->text) == atol(pp->gpus_arg))
        return 0;
    for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
        if (strcmp(argv[i], "--map-by") == 0)
            return 0;
    return 1;
}

/* argv with the profile's dlrun-options after argv[0] (less its --map-by
 * when drop): a new array of borrowed strings (NULL: out of memory). */
static char **with_profile(int argc, char **argv, const struct site_profile *p,
                           int drop, int *n)
{
    char *const *prof = p->v[SITE_DLRUN_OPTIONS].set ?
                        p->v[SITE_DLRUN_OPTIONS].items : NULL;
    size_t np = p->v[SITE_DLRUN_OPTIONS].set ? p->v[SITE_DLRUN_OPTIONS].nitems
                                              : 0;
    char **v = calloc((size_t)argc + np + 1, sizeof *v);

    if (!v)
        return NULL;
    v[0] = argv[0];
    *n = 1;
    for (size_t i = 0; i < np; i++) {
        if (drop && i + 1 < np && strcmp(prof[i], "--map-by") == 0)
            i++;
        else
            v[(*n)++] = prof[i];
    }
    for (int i = 1; i < argc; i++)
        v[(*n)++] = argv[i];
    return v;
}

/* Ranks of node i of the job: --nproc-per-node on every node (until -np
 * runs out), -np spread evenly, else one a GPU. */
static int node_ranks(const struct pplan *pp, int i)
{
    int per = pp->o.plan.per_node, np = pp->o.plan.ranks, n = pp->nodes;

    if (per > 0 && np > 0)
        return np - per * i >= per ? per : np - per * i > 0 ? np - per * i : 0;
    if (per > 0)
        return per;
    if (np > 0)
        return np / n + (i < np % n);
    return pp->gpus > 0 ? (int)pp->gpus : 1;
}

static void print_rank(const struct pplan *pp, int local, int first,
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

/* The warnings of one node's plan: ranks sharing a GPU, GPUs left. */
static void warn_gpus(const struct pplan *pp, int n,
                      const struct bind_rank *b, const char *nodes)
{
    long usable = pp->gpus;

    if (usable <= 0 || pp->o.bind.gpu == GPU_BIND_NONE)
        return;
    if (n > usable)
        printf("warning: %s: %d ranks share %ld GPU%s (rank %d and rank "
               "%ld both on GPU %d): memory and time are shared too\n",
               nodes, n, usable, usable == 1 ? "" : "s", 0, usable,
               b[0].gpu);
    else if (n == 1 && usable > 1)
        /* as at run time (lib/place/bind.c): the only rank gets every GPU */
        printf("warning: %s: one rank and %ld GPUs: it is given them all "
               "(GPUs %s) and the cores next to them; the program must "
               "drive them all (TF MirroredStrategy, spawn-based DDP) or "
               "they stay unused\n", nodes, usable, b[0].gpu_list[0] ?
               b[0].gpu_list : "of the node");
    else if (n < usable)
        printf("warning: %s: %d rank%s and %ld GPUs: %ld unused\n", nodes,
               n, n == 1 ? "" : "s", usable, usable - n);
}

/* One block: nodes a..z (same ranks n each), first rank of node a. */
static int print_group(const struct pplan *pp, int a, int z, int n,
                       int first)
{
    struct bind_rank *b = calloc((size_t)(n ? n : 1), sizeof *b);
    char nodes[64];
    int rc;

    if (!b)
        return cmd_fail(EXIT_FAIL, "out of memory");
    snprintf(nodes, sizeof nodes, a == z ? "node %d" : "nodes %d-%d", a, z);
    /* the ranks a node come from --gpus-per-node unless given */
    rc = n ? scriptcheck_place(pp->t, pp->desc, pp->name, &pp->o.bind,
                               pp->gpus, n, pp->o.plan.per_node > 0 ||
                               pp->o.plan.ranks > 0 ? NULL : "--gpus-per-node",
                               b)
           : EXIT_OK;
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
        warn_gpus(pp, n, b, nodes);
    }
    free(b);
    return rc;
}

/* One task per GPU, each a rank: dlrun binds it only when told to
 * (--map-by, --bind-to); else srun does (Slurm), and under mpirun, which
 * the script tells --bind-to none, the script's dlrun line says
 * --bind-to core (lib/scripts/jobscript.c): planned so here too. */
static void task_binding(struct pplan *pp)
{
    const struct site_value *v = pp->p->v;
    const char *tasks = pp->tasks_arg ? pp->tasks_arg :
                        v[SITE_TASKS].set ? v[SITE_TASKS].text : "";

    if (strcmp(tasks, "per-gpu") != 0 || pp->o.bind_given)
        return;
    if (v[SITE_SCHEDULER].set && strcmp(v[SITE_SCHEDULER].text, "slurm") == 0)
        pp->binding = "srun's (tasks: per-gpu, --cpus-per-task); dlrun "
                      "binds as below with --map-by or --bind-to";
    else if (v[SITE_LAUNCHER].set &&
             strcmp(v[SITE_LAUNCHER].text, "mpirun") == 0) {
        pp->o.bind.bind = BIND_CORE;
        pp->o.bind_given = 1;
        pp->binding = "--bind-to core (one mpirun task a GPU, mpirun told "
                      "--bind-to none: the script's dlrun line says it)";
    }
}

static int print_plan(const struct pplan *pp, const char *origin)
{
    int first = 0, total = 0, rc = EXIT_OK;

    for (int i = 0; i < pp->nodes; i++)
        total += node_ranks(pp, i);
    printf("profile:    %s (%s)\n", pp->name, origin ? origin : "?");
    printf("node:       %s\n", pp->desc);
    printf("layout:     %d rank%s on %d node%s, %ld GPU%s a node given\n",
           total, total == 1 ? "" : "s", pp->nodes, pp->nodes == 1 ? "" : "s",
           pp->gpus, pp->gpus == 1 ? "" : "s");
    if (pp->binding)
        printf("binding:    %s\n", pp->binding);
    for (int a = 0; a < pp->nodes && rc == EXIT_OK;) {
        int n = node_ranks(pp, a), z = a;

        while (z + 1 < pp->nodes && node_ranks(pp, z + 1) == n)
            z++;
        rc = print_group(pp, a, z, n, first);
        first += n * (z - a + 1);
        a = z + 1;
    }
    return rc;
}

/* Nodes and GPUs a node: the command line's, the profile's, the node's. */
static void job_shape(struct pplan *pp)
{
    const struct site_value *n = &pp->p->v[SITE_NODES];
    const struct site_value *g = &pp->p->v[SITE_GPUS_PER_NODE];
    struct topo_summary s;

    topo_describe(pp->t, &s);
    pp->nodes = pp->o.plan.nodes > 0 ? pp->o.plan.nodes :
                n->set ? atoi(n->text) : 1;
    pp->gpus = pp->gpus_arg ? atol(pp->gpus_arg) : g->set ? atol(g->text) :
               s.gpus;
}

static int load(struct pplan *pp, struct sites *s, char ***origin)
{
    if (profiles_load(pp->config, s, origin) < 0)
        return -1;
    pp->p = sites_find(s, pp->name);
    if (!pp->p)
        return cmd_fail(EXIT_USAGE, "plan: no profile '%s' (dlrun script "
                        "--list-profiles lists them)", pp->name), -1;
    pp->t = scriptcheck_profile_topo(pp->p, pp->name, pp->desc, sizeof pp->desc);
    if (!pp->t && !pp->desc[0])
        return cmd_fail(EXIT_USAGE, "plan: profile %s describes no node: add "
                        "node: \"package:2 core:38 gpu:8\" or topology: "
                        "FILE.xml (man dlrun-sites.yaml)", pp->name), -1;
    return pp->t ? 0 : -1;
}

/* The profile's node as hwloc XML on stdout: its topology: file as it
 * is, or the XML its node: line makes. */
static int print_node_xml(const struct pplan *pp)
{
    const struct site_value *topo = &pp->p->v[SITE_TOPOLOGY];
    struct nodeshape shape;
    struct err e = { "" };
    char *xml = NULL;
    size_t len = 0;
    FILE *f;
    int rc;

    if (topo->set && (f = fopen(topo->text, "r"))) {
        xml = read_all(f, 64 << 20, &len);
        fclose(f);
    } else if (!topo->set &&
               nodeshape_parse(pp->p->v[SITE_NODE].text, &shape, &e) == 0) {
        xml = nodeshape_xml(&shape);
        len = xml ? strlen(xml) : 0;
    }
    if (!xml)
        return cmd_fail(EXIT_FAIL, "plan --node-xml: cannot read %s",
                        topo->set ? topo->text : "the node");
    rc = fwrite(xml, 1, len, stdout) == len && fflush(stdout) == 0 ?
         EXIT_OK : EXIT_FAIL;
    free(xml);
    return rc;
}

int script_plan(int argc, char **argv)
{
    struct pplan pp;
    struct sites s = { 0 };
    char usage[4096], **origin = NULL, **v = NULL;
    int rc = EXIT_USAGE, n;

    memset(&pp, 0, sizeof pp);
    snprintf(usage, sizeof usage, "%s%s", usage_head, options_help);
    argc = take_own(argc, argv, &pp);
    if (argc < 0 || load(&pp, &s, &origin) < 0)
        goto out;
    if (pp.node_xml) {
        rc = print_node_xml(&pp);
        goto out;
    }
    if (pp.gpus_arg && (atol(pp.gpus_arg) < 0 || atol(pp.gpus_arg) > 1024 ||
                        pp.gpus_arg[strspn(pp.gpus_arg, "0123456789")])) {
        rc = cmd_fail(EXIT_USAGE, "plan: --gpus-per-node %s: expected a "
                      "whole number from 0 to 1024", pp.gpus_arg);
        goto out;
    }
    if (!(v = with_profile(argc, argv, pp.p, drop_map_by(&pp, argc, argv),
                           &n))) {
        rc = cmd_fail(EXIT_FAIL, "out of memory");
        goto out;
    }
    cmd_fail_context("plan --profile: ");
    rc = options_parse(n, v, &pp.o, usage);
    cmd_fail_context(NULL);
    if (rc != 0) {
        rc = rc == 1 ? EXIT_OK : rc;
        goto out;
    }
    job_shape(&pp);
    task_binding(&pp);
    rc = print_plan(&pp, origin[pp.p - s.profiles]);
    if (rc == EXIT_OK && fflush(stdout) != 0)
        rc = EXIT_FAIL;
out:
    options_free(&pp.o);
    topo_free(pp.t);
    free(v);
    profiles_origins_free(origin, s.n);
    sites_free(&s);
    return rc;
}
