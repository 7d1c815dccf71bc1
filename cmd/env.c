/* env.c - `dlrun env`: the variables a rank gets and where each came
 * from; with a program, run it with them (like env(1)). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "options.h"
#include "place/envout.h"
#include "job/job.h"
#include "job/runopts.h"
#include "util/json.h"
#include "where/pmixc.h"

static const char usage_head[] =
    "usage: dlrun env [OPTIONS] [--json] [--rank R] [--] [PROG [ARGS...]]\n"
    "Print the variables rank R gets (default: this task under srun/mpirun,\n"
    "else rank 0) as NAME='VALUE'  # where it came from; --json for one JSON\n"
    "object.  With PROG, run it in that environment instead.\n\n";

/* Quote for sh: 'it'\''s' */
static void print_sh(const char *v)
{
    putchar('\'');
    for (; *v; v++) {
        if (*v == '\'')
            fputs("'\\''", stdout);
        else
            putchar(*v);
    }
    putchar('\'');
}

static void print_text(const struct envset *s)
{
    for (size_t i = 0; i < s->n; i++) {
        printf("%s=", s->v[i].name);
        print_sh(s->v[i].value);
        printf("  # %s\n", s->v[i].from);
    }
}

static void print_json(const struct job *j, int rank, const struct envset *s)
{
    const struct plan *p = &j->plan;
    int node = p->rank_node[rank];

    printf("{\"source\":");
    json_string(stdout, j->alloc.source);
    printf(",\"reason\":");
    json_string(stdout, j->alloc.why);
    printf(",\"rank\":%d,\"world_size\":%d,\"local_rank\":%s,"
           "\"local_world_size\":%s,\"node_rank\":%s,\"host\":",
           rank, p->nranks, envset_get(s, "LOCAL_RANK"),
           envset_get(s, "LOCAL_WORLD_SIZE"), envset_get(s, "NODE_RANK"));
    json_string(stdout, p->nodes[node].host);
    for (int pass = 0; pass < 2; pass++) {
        printf(pass ? "},\"from\":{" : ",\"env\":{");
        for (size_t i = 0; i < s->n; i++) {
            printf("%s", i ? "," : "");
            json_string(stdout, s->v[i].name);
            putchar(':');
            json_string(stdout, pass ? s->v[i].from : s->v[i].value);
        }
    }
    printf("}}\n");
}

int cmd_env(int argc, char **argv)
{
    char usage[4096];
    struct job j = { 0 };
    struct envset s = { 0 };
    int rank, rc;

    snprintf(usage, sizeof usage, "%s%s", usage_head, options_help());
    rc = options_parse(argc, argv, &j.opt, usage);
    if (rc != 0)
        return rc == 1 ? EXIT_OK : rc;
    runopts_warn_exports(&j.opt);
    rc = job_prepare(&j, 1);
    if (rc != 0)
        goto out;
    rank = j.opt.rank >= 0 ? j.opt.rank : j.plan.per_task ? j.plan.self :
           j.plan.self_node >= 0 && j.plan.self_node < j.plan.nnodes ?
           j.plan.nodes[j.plan.self_node].first_rank : 0;
    job_tf_resolve(&j, j.opt.prog < argc ? j.opt.progv : NULL);
    rc = job_rank_env(&j, rank, &s);
    if (rc != 0)
        goto out;
    if (j.opt.prog < argc) {
        pmixc_finalize();
        rc = job_exec(j.opt.progv, &s, rank);  /* torchrun's: under Python */
        goto out;
    }
    if (j.opt.json)
        print_json(&j, rank, &s);
    else
        print_text(&s);
    rc = fflush(stdout) == 0 ? EXIT_OK : EXIT_FAIL;
out:
    envset_free(&s);
    job_free(&j);
    return rc;
}
