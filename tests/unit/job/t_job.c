/* t_job.c - the steps run, env and plan share: a rank's environment (its
 * rank, the world, the restart it belongs to), torchrun's --node-rank on
 * one node refused with its line, the job's private folder and the root
 * cause a rank wrote into its TORCHELASTIC_ERROR_FILE (the earliest of
 * several, said in one line; the folder goes with job_free), and the
 * per-task exec of a program that is not there (127, the rank named);
 * torchrun's --nnodes MIN:MAX in an allocation (-H): at most MAX nodes,
 * the others spares, -np and too few nodes refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "job/job.h"
#include "place/envout.h"
#include "place/nodeset.h"
#include "util/say.h"
#include "where/hostfile.h"
#include "said.h"
#include "tap.h"

/* n ranks on localhost, planned and resolved as `dlrun run` does. */
static int job_on(struct job *j, int n)
{
    struct err err = { "" };
    char hosts[32];

    memset(j, 0, sizeof *j);
    snprintf(hosts, sizeof hosts, "localhost:%d", n);
    j->opt.bind.bind = BIND_NONE;
    j->opt.bind.gpu = GPU_BIND_NONE;
    if (hosts_parse(hosts, &j->alloc, &err) == 0 &&
        plan_build(&j->alloc, &j->opt.plan, &j->plan, &err) == 0) {
        j->alloc.source = "hosts";
        return job_prepare_planned(j, 1);
    }
    printf("# %s\n", err.msg);
    return -1;
}

static void rank_env(void)
{
    struct envset s = { .no_from = 1 };
    struct job j;

    if (!ok(job_on(&j, 2) == 0, "a job of 2 ranks, prepared"))
        return;
    j.restart = 3;
    ok(job_rank_env(&j, 1, &s) == 0 && envset_get(&s, "RANK") &&
       strcmp(envset_get(&s, "RANK"), "1") == 0 &&
       strcmp(envset_get(&s, "WORLD_SIZE"), "2") == 0 &&
       strcmp(envset_get(&s, "TORCHELASTIC_RESTART_COUNT"), "3") == 0,
       "rank 1's environment: RANK, WORLD_SIZE, the restart");
    envset_free(&s);
    job_free(&j);
}

static void node_rank(struct said *k)
{
    struct job j = { 0 };

    j.opt.torch.used = 1;
    j.opt.torch.node_rank = 2;
    j.opt.plan.nodes = 1;
    is_int(job_prepare(&j, 0), EXIT_USAGE, "torchrun's --node-rank 2, one "
           "node: exit 2");
    is_str(k->last, "torchrun's --node-rank 2 with one node: node ranks run "
           "from 0 to --nnodes - 1", "  said");
    job_free(&j);
}

/* -H sim[1-5] --spares 1 --nnodes MIN:MAX, --nproc-per-node 2 (np: -np) */
static int elastic_job(struct job *j, int min, int max, int np)
{
    memset(j, 0, sizeof *j);
    j->opt.alloc.hosts = "sim[1-5]";
    j->opt.rdv.master_addr = "127.0.0.1";
    j->opt.rdv.master_port = 29512;
    j->opt.bind.bind = BIND_NONE;
    j->opt.bind.gpu = GPU_BIND_NONE;
    j->opt.torch.used = 1;
    j->opt.torch.node_rank = -1;
    j->opt.plan.nodes = min;
    j->opt.torch.nnodes_max = max;
    j->opt.plan.per_node = 2;
    j->opt.plan.ranks = np;
    j->opt.spares = 1;
    j->opt.max_restarts = 3;
    return job_prepare(j, 0);
}

static void elastic(struct said *k)
{
    struct job j;

    if (ok(elastic_job(&j, 2, 3, 0) == 0, "-H, 5 nodes, --spares 1 "
           "--nnodes 2:3: prepared")) {
        ok(j.plan.nnodes == 3 && j.plan.nranks == 6, "  6 ranks on 3 nodes");
        ok(j.nodeset && j.nodeset->nspare == 2 && j.nodeset->min_nodes == 2,
           "  sim4 (past MAX) and sim5 spares; MIN 2");
    }
    job_free(&j);
    ok(elastic_job(&j, 2, 8, 0) == 0 && j.plan.nnodes == 4 &&
       j.nodeset->nspare == 1, "--nnodes 2:8: the 4 nodes not held as spare");
    job_free(&j);
    is_int(elastic_job(&j, 5, 8, 0), EXIT_USAGE, "--nnodes 5:8, 4 to run "
           "on: exit 2");
    ok(strstr(k->last, "fewer than 5 to run on") != NULL, "  said");
    job_free(&j);
    is_int(elastic_job(&j, 2, 3, 8), EXIT_USAGE, "with -np: exit 2");
    ok(strstr(k->last, "give --nproc-per-node instead of -np") != NULL,
       "  said");
    job_free(&j);
}

/* Rank r's error file in the job's folder, written at ts. */
static void error_file(const struct job *j, int r, const char *msg, long ts)
{
    char path[4096];
    FILE *f;

    envout_error_file(j->errdir, j->restart, r, path, sizeof path);
    if ((f = fopen(path, "w"))) {
        fprintf(f, "{\"message\": {\"message\": \"%s\", \"extraInfo\": "
                "{\"timestamp\": \"%ld\"}}}", msg, ts);
        fclose(f);
    }
}

static void root_cause(struct said *k)
{
    struct job j;
    char dir[4096] = "";
    struct stat st;

    if (job_on(&j, 3) != 0)
        return;
    job_errdir(&j);
    if (!ok(j.errdir && stat(j.errdir, &st) == 0 && (st.st_mode & 077) == 0,
            "the job's private folder"))
        return;
    snprintf(dir, sizeof dir, "%s", j.errdir);
    k->n = 0;
    job_report_root_cause(&j);
    is_int(k->n, 0, "no error file: nothing said");
    error_file(&j, 2, "ValueError: late", 200);
    error_file(&j, 1, "RuntimeError: first", 100);
    job_report_root_cause(&j);
    is_str(k->last, "rank 1's root cause (its TORCHELASTIC_ERROR_FILE): "
           "RuntimeError: first", "the earliest error file, in one line");
    job_free(&j);
    ok(stat(dir, &st) < 0, "job_free removes the folder");
}

static void exec_missing(struct said *k)
{
    char *argv[] = { "/nonexistent/dlrun-test-prog", NULL };
    struct envset s = { .no_from = 1 };

    is_int(job_exec(argv, &s, 3), EXIT_NOTFOUND,
           "per-task exec of a missing program: 127");
    ok(strncmp(k->last, "rank 3: ", 8) == 0, "  the rank named");
}

int main(void)
{
    struct said k = { 0 };

    say_set_sink(said_keep, &k);
    rank_env();
    node_rank(&k);
    elastic(&k);
    root_cause(&k);
    exec_missing(&k);
    return tap_done();
}
