/* t_runopts.c - the options of run, env and plan read through
 * lib/util/optparse with the dialect table: dlrun's words, torchrun's,
 * mpirun's and Hydra's spellings, horovodrun's --mpi flag, MPMD parts,
 * the refusals and the did-you-mean, -x names (unset, not a name), each
 * line said as dlrun says it. */
#include "job/runopts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job/dialect.h"
#include "util/say.h"
#include "tap.h"

static char said[512];

static void keep(void *ctx, const char *line)
{
    (void)ctx;
    snprintf(said, sizeof said, "%s", line);
}

/* What o holds, in a few words: the fields a case may check. */
static void summary(const struct options *o, char *out, size_t n)
{
    char words[256] = "";

    for (int i = 0; o->progv && o->progv[i]; i++)
        snprintf(words + strlen(words), sizeof words - strlen(words), "%s%s",
                 i ? " " : "", o->progv[i]);
    snprintf(out, n, "np=%d nodes=%d per=%d hosts=%s mpi=%d tag=%d x=%s,%s,%s "
             "kill=%d filter=%d torch=%d prog=[%s]", o->plan.ranks,
             o->plan.nodes, o->plan.per_node,
             o->alloc.hosts ? o->alloc.hosts : "-", (int)o->mpi,
             o->tag_output, o->nexports > 0 ? o->exports[0] : "-",
             o->nexports > 1 ? o->exports[1] : "-",
             o->nexports > 2 ? o->exports[2] : "-", o->kill_timeout_ms,
             o->nfilter, o->torch.used, words);
}

#define DEF "nodes=0 per=0 hosts=-"
static const struct {
    const char *words;  /* argv[1..], space-separated */
    int rc;
    const char *got;    /* summary() on 0, what was said otherwise */
} cases[] = {
    { "-np 4 -H a:2,b:2 --tag-output prog x", 0,
      "np=4 nodes=0 per=0 hosts=a:2,b:2 mpi=0 tag=1 x=-,-,- kill=10000 "
      "filter=0 torch=0 prog=[prog x]" },
    { "-n4 --label -- -prog", 0,
      "np=4 " DEF " mpi=0 tag=1 x=-,-,- kill=10000 filter=0 torch=0 "
      "prog=[-prog]" },
    { "--nproc_per_node=2 --nnodes 1 train.py", 0,
      "np=0 nodes=1 per=2 hosts=- mpi=0 tag=0 x=-,-,- kill=10000 filter=0 "
      "torch=1 prog=[python3 -u train.py]" },
    { "--mpi prog", 0,
      "np=0 " DEF " mpi=2 tag=0 x=-,-,- kill=10000 filter=0 torch=0 "
      "prog=[prog]" },
    { "--mpi none prog", 0,
      "np=0 " DEF " mpi=1 tag=0 x=-,-,- kill=10000 filter=0 torch=0 "
      "prog=[prog]" },
    { "-mca btl tcp -genv A=1 -x B prog", 0,
      "np=0 " DEF " mpi=0 tag=0 x=OMPI_MCA_btl=tcp,A=1,B kill=10000 "
      "filter=0 torch=0 prog=[prog]" },
    { "--kill-timeout 3 --ranks-filter 0,3 -npernode 2", 0,
      "np=0 nodes=0 per=2 hosts=- mpi=0 tag=0 x=-,-,- kill=3000 filter=2 "
      "torch=0 prog=[]" },
    { "-np 2 ./a : -np 3 ./b", 0,
      "np=5 " DEF " mpi=0 tag=0 x=-,-,- kill=10000 filter=0 torch=0 "
      "prog=[/bin/sh -c r=$DLRUN_RANK; if [ \"$r\" -lt 2 ]; then exec ./a; "
      "elif [ \"$r\" -lt 5 ]; then exec ./b; fi; exit 127 dlrun-mpmd]" },
    { "-n 1 -env A 1 ./a", 0,
      "np=1 " DEF " mpi=0 tag=0 x=A=1,-,- kill=10000 filter=0 torch=0 "
      "prog=[./a]" },
    { "-genv A 1 -np 1 ./a : -np 1 ./b", 0,
      "np=2 " DEF " mpi=0 tag=0 x=A=1,-,- kill=10000 filter=0 torch=0 "
      "prog=[/bin/sh -c r=$DLRUN_RANK; if [ \"$r\" -lt 1 ]; then exec ./a; "
      "elif [ \"$r\" -lt 2 ]; then exec ./b; fi; exit 127 dlrun-mpmd]" },
    { "-n 1 -env A 1 ./a : -n 1 ./b", 2, "-env with several programs "
      "(MPMD): under Hydra it is the first part's alone, dlrun gives every "
      "part one environment: use -genv NAME VALUE for all parts, or -np N "
      "env NAME=VALUE PROG for one" },
    { "-n 1 -envlist A ./a : -n 1 ./b", 2, "-envlist with several programs "
      "(MPMD): under Hydra it is the first part's alone, dlrun gives every "
      "part one environment: use -genv NAME VALUE for all parts, or -np N "
      "env NAME=VALUE PROG for one" },
    { "-n 1 ./a : -n 1 -env A 2 ./b", 2, "MPMD part 2: -env: dlrun takes "
      "only -np N before a part's program; other options go before the "
      "first program, for all parts (a part's own variable: -np N env "
      "NAME=VALUE PROG)" },
    { "-h prog", 1, "" },
    { "--nproc 2 prog", 2, "unknown option '--nproc'; did you mean "
      "--nproc-per-node? (dlrun run --help)" },
    { "-hfoo", 2, "unknown option '-hfoo' (dlrun run --help)" },
    { "--display-map prog", 2, "mpirun's --display-map: run `dlrun plan` "
      "with the same options to see every rank's host" },
    { "-np x prog", 2, "-np x: expected a whole number from 1 to 16777216" },
    { "-np", 2, "missing value for '-np' (it takes a value)" },
    { "--oversubscribe=1", 2, "--oversubscribe takes no value (got '1')" },
    { "--mpi=x prog", 2, "--mpi 'x': expected auto, pmix, pmi1, pmi2, none "
      "or srun" },
    { "--redirects 0:1 prog", 2, "--redirects '0:1': a map per local rank "
      "is not supported; give one value 0-3 for every rank, or --output-dir "
      "DIR --ranks-filter LIST (the ranks shown on the console)" },
    { "-x BAD-NAME=1 prog", 2, "-x 'BAD-NAME=1': 'BAD-NAME' is not an "
      "environment variable name (letters, digits and _, not starting with "
      "a digit)" },
    { "-x 9A prog", 2, "-x '9A': '9A' is not an environment variable name "
      "(letters, digits and _, not starting with a digit)" },
};

static void run_case(size_t k)
{
    char buf[256], got[512] = "", what[300], *save = NULL, *argv[24];
    struct options o;
    int argc = 1, rc;

    snprintf(buf, sizeof buf, "%s", cases[k].words);
    argv[0] = "run";
    for (char *w = strtok_r(buf, " ", &save); w && argc < 23;
         w = strtok_r(NULL, " ", &save))
        argv[argc++] = w;
    argv[argc] = NULL;
    said[0] = '\0';
    rc = runopts_parse(argc, argv, &o);
    snprintf(what, sizeof what, "'%s': exit code", cases[k].words);
    is_int(rc, cases[k].rc, what);
    if (rc == 0)
        summary(&o, got, sizeof got);
    snprintf(what, sizeof what, "'%s': %s", cases[k].words,
             rc == 0 ? "the options" : "what was said");
    is_str(rc == 0 ? got : said, cases[k].got, what);
    if (rc == 0)
        options_free(&o);
}

/* -x NAME copies NAME from here: one not here is said, as mpirun does. */
static void test_unset_export(void)
{
    char *argv[] = { "run", "-x", "DLRUN_T_SET", "prog", NULL };
    struct options o;

    unsetenv("DLRUN_T_NOT_SET");
    setenv("DLRUN_T_SET", "1", 1);
    said[0] = '\0';
    is_int(runopts_parse(4, argv, &o), 0, "-x NAME set: runs");
    runopts_warn_exports(&o);
    is_str(said, "", "and says nothing");
    options_free(&o);
    argv[2] = "DLRUN_T_NOT_SET";
    is_int(runopts_parse(4, argv, &o), 0, "-x NAME not set: still runs");
    is_str(said, "", "parsing says nothing (a script runs elsewhere)");
    runopts_warn_exports(&o);
    is_str(said, "warning: could not find environment variable "
           "\"DLRUN_T_NOT_SET\" (-x DLRUN_T_NOT_SET)", "with a warning");
    options_free(&o);
}

/* --nnodes MIN:MAX asks the allocation for up to MAX nodes (an
 * interactive step's one task then means the job's nodes, as -N MAX). */
static void test_nnodes_want(void)
{
    char *elastic[] = { "run", "--nnodes", "1:3", "prog", NULL };
    char *fixed[] = { "run", "--nnodes", "2", "prog", NULL };
    struct options o;

    ok(runopts_parse(4, elastic, &o) == 0 && o.plan.nodes == 1 &&
       o.torch.nnodes_max == 3 && o.alloc.want_nodes == 3,
       "--nnodes 1:3: MIN 1, MAX 3, up to 3 wanted");
    options_free(&o);
    ok(runopts_parse(4, fixed, &o) == 0 && o.alloc.want_nodes == 2,
       "--nnodes 2: 2 wanted");
    options_free(&o);
}

/* --no-cgroup: off; by default on (a cgroup where one can be made). */
static void test_no_cgroup(void)
{
    char *with[] = { "run", "--no-cgroup", "prog", NULL };
    char *without[] = { "run", "prog", NULL };
    struct options o;

    ok(runopts_parse(3, with, &o) == 0 && o.no_cgroup == 1,
       "--no-cgroup: the job makes no cgroup");
    options_free(&o);
    ok(runopts_parse(2, without, &o) == 0 && o.no_cgroup == 0,
       "without it: a cgroup where one can be made");
    options_free(&o);
}

/* Hydra's -hosts and -ppn deal ranks round the hosts (never refused);
 * dlrun's own --hosts, --ppn and -H keep the slots. */
static void test_hydra_deal(void)
{
    static const struct { const char *word; int deal; } w[] = {
        { "-hosts", 1 }, { "-ppn", 1 }, { "--hosts", 0 }, { "--ppn", 0 },
        { "-H", 0 }, { "-npernode", 0 },
    };
    struct options o;

    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
        char *argv[] = { "run", (char *)w[i].word, "2", "prog", NULL };
        int rc = runopts_parse(4, argv, &o);
        char what[80];

        snprintf(what, sizeof what, "%s: %s", w[i].word,
                 w[i].deal ? "Hydra's dealing, never refused" : "the slots");
        ok(rc == 0 && o.plan.deal == w[i].deal &&
           o.plan.oversubscribe == w[i].deal, what);
        if (rc == 0)
            options_free(&o);
    }
}

int main(void)
{
    unsetenv("PYTHON_EXEC");
    say_set_sink(keep, NULL);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        run_case(k);
    test_unset_export();
    test_no_cgroup();
    test_nnodes_want();
    test_hydra_deal();
    is_int(dialect_of("/usr/bin/mpirun"), D_MPIRUN, "mpirun's dialect");
    is_int(dialect_of("mpiexec.hydra"), D_MPIRUN, "Hydra's");
    is_int(dialect_of("torchrun"), D_TORCHRUN, "torchrun's");
    is_int(dialect_of("horovodrun"), D_HOROVODRUN, "horovodrun's");
    is_int(dialect_of("dlrun"), D_DLRUN, "dlrun's own");
    ok(optp_find(dialect_table, "N", D_MPIRUN)->code == OPT_PER_NODE,
       "mpirun's -N is ranks per node");
    ok(optp_find(dialect_table, "N", D_DLRUN)->code == 'N',
       "dlrun's -N is nodes");
    return tap_done();
}
