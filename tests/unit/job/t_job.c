/* t_job.c - the steps run, env and plan share: a rank's environment (its
 * rank, the world, the restart it belongs to), torchrun's --node-rank on
 * one node refused with its line, the job's private folder and the root
 * cause a rank wrote into its TORCHELASTIC_ERROR_FILE (the earliest of
 * several, said in one line; the folder goes with job_free), and the
 * per-task exec of a program that is not there (127, the rank named). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "job/job.h"
#include "place/envout.h"
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
    root_cause(&k);
    exec_missing(&k);
    return tap_done();
}
