/* profileplan.c - `dlrun plan --profile`: a job's ranks on the node a
 * site profile describes (profileplan.h). */
#include "scripts/profileplan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "place/nodeshape.h"
#include "place/topo.h"
#include "scripts/profiles.h"
#include "util/readall.h"
#include "util/say.h"
#include "where/sched.h"

int profileplan_load(struct profile_plan *pp, struct sites *s,
                     char ***origin)
{
    const struct site_profile *found;

    if (profiles_load(pp->config, s, origin) < 0)
        return -1;
    found = sites_find(s, pp->name);
    if (!found)
        return say_fail(EXIT_USAGE, "plan: no profile '%s' (dlrun script "
                        "--list-profiles lists them)", pp->name), -1;
    pp->at = (size_t)(found - s->profiles);
    if (profiles_pick(found, pp->partition, pp->node, NULL, 0, &pp->own) < 0)
        return -1;
    pp->p = &pp->own;
    pp->t = scriptcheck_profile_topo(pp->p, pp->name, pp->desc,
                                     sizeof pp->desc);
    if (pp->t)
        return 0;
    if (!pp->desc[0])
        say_fail(EXIT_USAGE, "plan: profile %s describes no node: add "
                 "node: \"package:2 core:38 gpu:8\" or topology: "
                 "FILE.xml (man dlrun-sites.yaml)", pp->name);
    profileplan_free(pp);
    return -1;
}

int profileplan_node_xml(const struct profile_plan *pp, char **xml,
                         size_t *len)
{
    const struct site_value *topo = &pp->p->v[SITE_TOPOLOGY];
    struct nodeshape shape;
    struct err e = { "" };
    FILE *f;

    *xml = NULL;
    *len = 0;
    if (topo->set && (f = fopen(topo->text, "r"))) {
        *xml = read_all(f, 64 << 20, len);
        fclose(f);
    } else if (!topo->set &&
               nodeshape_parse(pp->p->v[SITE_NODE].text, &shape, &e) == 0) {
        *xml = nodeshape_xml(&shape);
        *len = *xml ? strlen(*xml) : 0;
    }
    if (!*xml)
        return say_fail(EXIT_FAIL, "plan --node-xml: cannot read %s",
                        topo->set ? topo->text : "the node");
    return EXIT_OK;
}

int profileplan_check_gpus(const struct profile_plan *pp)
{
    const char *g = pp->gpus_arg;

    if (g && (atol(g) < 0 || atol(g) > 1024 || g[strspn(g, "0123456789")]))
        return say_fail(EXIT_USAGE, "plan: --gpus-per-node %s: expected a "
                        "whole number from 0 to 1024", g), -1;
    return 0;
}

/* Whether the profile's --map-by is left out, as dlrun script does: the
 * GPUs per node changed and argv gives no --map-by of its own. */
static int drop_map_by(const struct profile_plan *pp, int argc, char **argv)
{
    const struct site_value *g = &pp->p->v[SITE_GPUS_PER_NODE];

    if (!pp->gpus_arg || !g->set || atol(g->text) == atol(pp->gpus_arg))
        return 0;
    for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
        if (strcmp(argv[i], "--map-by") == 0)
            return 0;
    return 1;
}

char **profileplan_argv(const struct profile_plan *pp, int argc,
                        char **argv, int *n)
{
    const struct site_value *opts = &pp->p->v[SITE_DLRUN_OPTIONS];
    char *const *prof = opts->set ? opts->items : NULL;
    size_t np = opts->set ? opts->nitems : 0;
    int drop = drop_map_by(pp, argc, argv);
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

/* Whether the profile's scheduler starts and binds one task a GPU itself
 * (its row's starts_tasks: Slurm's srun with --cpus-per-task). */
static int scheduler_binds_tasks(const struct site_profile *p)
{
    const struct site_value *s = &p->v[SITE_SCHEDULER];
    const struct sched *sched = s->set ? sched_find(s->text) : NULL;

    return sched && sched->starts_tasks;
}

/* One task per GPU, each a rank: dlrun binds it only when told to
 * (--map-by, --bind-to); else srun does (Slurm), and under mpirun, which
 * the script tells --bind-to none, the script's dlrun line says
 * --bind-to core (lib/scripts/jobscript.c): planned so here too. */
static void task_binding(struct profile_plan *pp)
{
    const struct site_value *v = pp->p->v;
    const char *tasks = pp->tasks_arg ? pp->tasks_arg :
                        v[SITE_TASKS].set ? v[SITE_TASKS].text : "";

    if (strcmp(tasks, "per-gpu") != 0 || pp->line.bind_given)
        return;
    if (scheduler_binds_tasks(pp->p))
        pp->binding = "srun's (tasks: per-gpu, --cpus-per-task); dlrun "
                      "binds as below with --map-by or --bind-to";
    else if (v[SITE_LAUNCHER].set &&
             strcmp(v[SITE_LAUNCHER].text, "mpirun") == 0) {
        pp->line.bind.bind = BIND_CORE;
        pp->line.bind_given = 1;
        pp->binding = "--bind-to core (one mpirun task a GPU, mpirun told "
                      "--bind-to none: the script's dlrun line says it)";
    }
}

void profileplan_shape(struct profile_plan *pp, const struct dlrun_line *line)
{
    const struct site_value *n = &pp->p->v[SITE_NODES];
    const struct site_value *g = &pp->p->v[SITE_GPUS_PER_NODE];
    struct topo_summary s;

    pp->line = *line;
    topo_describe(pp->t, &s);
    pp->nodes = line->nodes > 0 ? line->nodes : n->set ? atoi(n->text) : 1;
    pp->gpus = pp->gpus_arg ? atol(pp->gpus_arg) : g->set ? atol(g->text) :
               s.gpus;
    task_binding(pp);
}

int profileplan_node_ranks(const struct profile_plan *pp, int i)
{
    int per = pp->line.per_node, np = pp->line.ranks, n = pp->nodes;

    if (per > 0 && np > 0)
        return np - per * i >= per ? per : np - per * i > 0 ? np - per * i : 0;
    if (per > 0)
        return per;
    if (np > 0)
        return np / n + (i < np % n);
    return pp->gpus > 0 ? (int)pp->gpus : 1;
}

int profileplan_place(const struct profile_plan *pp, int n,
                      struct bind_rank *out)
{
    /* the ranks a node come from --gpus-per-node unless given */
    const char *knob = pp->line.per_node > 0 || pp->line.ranks > 0 ?
                       NULL : "--gpus-per-node";

    return scriptcheck_place(pp->t, pp->desc, pp->name, &pp->line.bind,
                             pp->gpus, n, knob, out);
}

void profileplan_free(struct profile_plan *pp)
{
    if (pp) {
        topo_free(pp->t);
        pp->t = NULL;
        if (pp->p)
            sites_profile_free(&pp->own);
        pp->p = NULL;
    }
}
