/* t_profileplan.c - `dlrun plan --profile`: the profile and its node
 * found (a profile without one refused with the fix), its node as XML,
 * --gpus-per-node checked, the profile's dlrun-options put first (its
 * --map-by left out for another GPU count), the job's shape, who binds a
 * task per GPU, the ranks of each node, and a node's ranks placed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scripts/profileplan.h"
#include "scripts/profiles.h"
#include "util/say.h"
#include "tap.h"

static char said[2048];

static void keep(void *ctx, const char *line)
{
    (void)ctx;
    snprintf(said, sizeof said, "%s", line);
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void loaded(const char *yaml)
{
    struct profile_plan pp;
    struct sites s = { 0 };
    char *xml = NULL, **origin = NULL;
    size_t len = 0;

    memset(&pp, 0, sizeof pp);
    pp.name = "bare";
    pp.config = yaml;
    said[0] = '\0';
    ok(profileplan_load(&pp, &s, &origin) < 0 &&
       strstr(said, "plan: profile bare describes no node: add node:"),
       "a profile without a node: the fix named");
    profiles_origins_free(origin, s.n);
    sites_free(&s);
    memset(&s, 0, sizeof s);
    pp.name = "nope";
    ok(profileplan_load(&pp, &s, &origin) < 0 &&
       strstr(said, "plan: no profile 'nope'"), "a profile not there");
    profiles_origins_free(origin, s.n);
    sites_free(&s);
    memset(&s, 0, sizeof s);
    pp.name = "site";
    ok(profileplan_load(&pp, &s, &origin) == 0 && pp.t && pp.desc[0],
       "the profile's node loaded");
    ok(profileplan_node_xml(&pp, &xml, &len) == EXIT_OK && xml &&
       len == strlen(xml) && strstr(xml, "<topology"), "its node as XML");
    free(xml);
    profileplan_free(&pp);
    profiles_origins_free(origin, s.n);
    sites_free(&s);
}

static void profile(struct site_profile *p, char **opts, const char *sched)
{
    memset(p, 0, sizeof *p);
    p->name = "site";
    p->v[SITE_SCHEDULER] = (struct site_value){ 1, (char *)sched, NULL, 0, 0 };
    p->v[SITE_GPUS_PER_NODE] = (struct site_value){ 1, "4", NULL, 0, 0 };
    p->v[SITE_NODES] = (struct site_value){ 1, "3", NULL, 0, 0 };
    p->v[SITE_TASKS] = (struct site_value){ 1, "per-gpu", NULL, 0, 0 };
    p->v[SITE_LAUNCHER] = (struct site_value){ 1, "mpirun", NULL, 0, 0 };
    p->v[SITE_DLRUN_OPTIONS] = (struct site_value){ 1, NULL, opts, 3, 0 };
    p->v[SITE_NODE] = (struct site_value){ 1, "package:2 core:8 gpu:4",
                                           NULL, 0, 0 };
}

static void argv_and_shape(void)
{
    char *opts[] = { "--map-by", "ppr:2:socket", "-l", NULL };
    char *argv[] = { "plan", "--", "x", NULL }, **v;
    struct profile_plan pp;
    struct site_profile p;
    struct dlrun_line line;
    struct bind_rank out[4];
    int n = 0;

    profile(&p, opts, "pbs");
    memset(&pp, 0, sizeof pp);
    pp.name = "site";
    pp.p = &p;
    pp.gpus_arg = "x2";
    ok(profileplan_check_gpus(&pp) < 0 &&
       strstr(said, "--gpus-per-node x2: expected a whole number"),
       "--gpus-per-node x2 refused");
    pp.gpus_arg = "4";
    v = profileplan_argv(&pp, 3, argv, &n);
    ok(v && n == 6 && strcmp(v[1], "--map-by") == 0 &&
       strcmp(v[4], "--") == 0, "the profile's options first");
    free(v);
    pp.gpus_arg = "2";
    v = profileplan_argv(&pp, 3, argv, &n);
    ok(v && n == 4 && strcmp(v[1], "-l") == 0,
       "another GPU count: its --map-by left out");
    free(v);
    pp.t = scriptcheck_profile_topo(&p, "site", pp.desc, sizeof pp.desc);
    memset(&line, 0, sizeof line);
    profileplan_shape(&pp, &line);
    ok(pp.nodes == 3 && pp.gpus == 2, "nodes the profile's, GPUs the option's");
    ok(pp.line.bind.bind == BIND_CORE && pp.binding &&
       strstr(pp.binding, "--bind-to core"),
       "a task per GPU under mpirun: bound to a core, said");
    ok(profileplan_node_ranks(&pp, 2) == 2, "one rank a GPU");
    ok(pp.t && profileplan_place(&pp, 2, out) == 0 && out[1].gpu == 1,
       "a node's ranks placed");
    line.ranks = 5;
    line.per_node = 2;
    profileplan_shape(&pp, &line);
    ok(profileplan_node_ranks(&pp, 0) == 2 && profileplan_node_ranks(&pp, 2) == 1,
       "--nproc-per-node until -np runs out");
    profile(&p, opts, "slurm");
    memset(&line, 0, sizeof line);
    pp.binding = NULL;
    profileplan_shape(&pp, &line);
    ok(pp.binding && strncmp(pp.binding, "srun's", 6) == 0,
       "a task per GPU under Slurm: srun binds");
    profileplan_free(&pp);
}

int main(void)
{
    char yaml[] = "/tmp/t_profileplan.XXXXXX";
    int fd = mkstemp(yaml);

    say_set_sink(keep, NULL);
    setenv("HOME", "/nonexistent", 1);
    unsetenv("DLRUN_CONFIG");
    if (fd < 0)
        return 1;
    close(fd);
    put(yaml, "profiles:\n  bare:\n    scheduler: slurm\n  site:\n"
        "    scheduler: pbs\n    node: \"package:2 core:8 gpu:4\"\n");
    loaded(yaml);
    unlink(yaml);
    argv_and_shape();
    return tap_done();
}
