/* t_bindings.c - where dlrun binds its ranks (job_bind) on a synthetic
 * --topology: each rank its own cores; none under the scheduler unless
 * asked; a default binding that cannot be made is a warning (the job runs
 * unbound), an asked one an error; --report-bindings one line a rank. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job/job.h"
#include "util/say.h"
#include "where/hostfile.h"
#include "said.h"
#include "tap.h"

#define SMALL "synthetic:package:1 core:4 pu:1"

/* Two ranks on localhost, binding to cores on topology. */
static int job_on(struct job *j, const char *topology)
{
    struct err err = { "" };

    memset(j, 0, sizeof *j);
    j->opt.topology = topology;
    j->opt.bind.bind = BIND_CORE;
    j->opt.bind.gpu = GPU_BIND_NONE;
    j->opt.plan.ranks = 2;
    if (hosts_parse("localhost:2", &j->alloc, &err) == 0 &&
        plan_build(&j->alloc, &j->opt.plan, &j->plan, &err) == 0) {
        j->alloc.source = "hosts";
        j->alloc.kind = ALLOC_HOSTS;
        return 0;
    }
    printf("# %s\n", err.msg);
    return -1;
}

static void job_done(struct job *j)
{
    free(j->bind);
    plan_free(&j->plan);
    alloc_free(&j->alloc);
}

static void bound(struct said *k)
{
    struct job j;
    int ranks[2] = { 0, 1 };

    if (!ok(job_on(&j, SMALL) == 0, "a job of 2 ranks"))
        return;
    is_int(job_bind(&j), 0, "bind to cores on 4 cores: 0");
    ok(j.bind && strcmp(j.bind[0].cpus, "0-1") == 0 &&
       strcmp(j.bind[1].cpus, "2-3") == 0, "  each rank its own 2 cores");
    k->n = 0;
    job_report_bindings(&j, ranks, 2);
    is_int(k->n, 2, "--report-bindings: one line a rank");
    ok(strncmp(k->last, "rank 1 host localhost ", 22) == 0 &&
       strstr(k->last, "2-3"), "  rank, host, its CPUs");
    free(j.bind);
    j.bind = NULL;
    job_report_bindings(&j, ranks, 1);
    is_str(k->last, "rank 0 host localhost not bound", "  unbound: said so");
    j.plan.per_task = 1;
    is_int(job_bind(&j), 0, "the scheduler started the ranks: 0");
    ok(!j.bind, "  and no binding of dlrun's");
    job_done(&j);
}

static void failing(struct said *k)
{
    struct job j;

    if (job_on(&j, "/nonexistent/topo.xml") != 0)
        return;
    k->n = 0;
    is_int(job_bind(&j), 0, "a default binding that fails: 0");
    ok(!j.bind && k->n == 1 &&
       strncmp(k->last, "warning: not binding: ", 22) == 0 &&
       strstr(k->last, " (pass --bind-to to insist)"), "  unbound, warned");
    j.opt.bind_given = 1;
    is_int(job_bind(&j), EXIT_USAGE, "an asked binding that fails: exit 2");
    ok(!j.bind && k->n == 2 && strstr(k->last, "/nonexistent/topo.xml"),
       "  the reason said");
    job_done(&j);
}

/* --map-by ppr:N:OBJ without -np on this host alone: N times its OBJs
 * (as mpirun starts them); not with -np, ranks per node or given slots. */
static void ppr_ranks(void)
{
    struct job j;
    struct err err = { "" };

    memset(&j, 0, sizeof j);
    j.opt.topology = SMALL;
    j.alloc.kind = ALLOC_LOCAL;
    ok(bind_parse_map_by("ppr:2:core", &j.opt.bind, &err) == 0, "ppr:2:core");
    is_int(job_ppr_ranks(&j), 0, "  without -np: 0");
    is_int(j.opt.plan.per_node, 8, "  8 ranks per node on 4 cores");
    j.opt.plan.per_node = 0;
    j.opt.plan.ranks = 3;
    job_ppr_ranks(&j);
    is_int(j.opt.plan.per_node, 0, "  -np given: no ranks per node set");
    j.opt.plan.ranks = 0;
    j.alloc.kind = ALLOC_HOSTS;
    job_ppr_ranks(&j);
    is_int(j.opt.plan.per_node, 0, "  slots given (-H): they are the ranks");
    j.alloc.kind = ALLOC_LOCAL;
    ok(bind_parse_map_by("ppr:2:node", &j.opt.bind, &err) == 0, "ppr:2:node");
    job_ppr_ranks(&j);
    is_int(j.opt.plan.per_node, 0, "  left to the options (per node)");
}

int main(void)
{
    struct said k = { 0 };

    say_set_sink(said_keep, &k);
    bound(&k);
    failing(&k);
    ppr_ranks();
    return tap_done();
}
