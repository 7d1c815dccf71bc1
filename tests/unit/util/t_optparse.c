/* t_optparse.c - the one option parser: every form of a word (--opt=v,
 * --opt v, -o v, -ov, -o=v, one-dash long names, '_' as '-'), "--", the
 * operands (in place, or gathered after the options), an unknown word with
 * and without a suggestion, a missing value, a value for a word that takes
 * none, a refused word, a long word glued to its value (-np2), dialects,
 * OPTP_MAYBE, and the integer parser. */
#include "util/optparse.h"

#include <stdio.h>
#include <string.h>

#include "util/say.h"
#include "tap.h"

enum { C_TIMEOUT = 't', C_VERBOSE = 'v', C_HELP = 'h', C_GENV = 'g',
       C_N = 'n', C_MPI = 'm', C_NNODES = 'N', C_PER_NODE = 'P' };

static const struct optp_opt opts[] = {
    { "timeout", C_TIMEOUT, 1, 0, 0, NULL },
    { "t", C_TIMEOUT, 1, 0, 0, NULL },
    { "verbose", C_VERBOSE, 0, 0, 0, NULL },
    { "v", C_VERBOSE, 0, 0, 0, NULL },
    { "np", C_N, 1, 0, 0, NULL },
    { "n", C_N, 1, 0, 0, NULL },
    { "nproc-per-node", C_PER_NODE, 1, 0, OPTP_USER, NULL },
    { "N", C_NNODES, 1, 1, 0, NULL },       /* dialect 1's -N */
    { "N", C_PER_NODE, 1, 2, 0, NULL },     /* dialect 2's */
    { "genv", C_GENV, 2, 0, 0, NULL },
    { "mpi", C_MPI, 1, 0, OPTP_MAYBE, "auto,none,pmix" },
    { "display-map", 0, 0, 0, OPTP_REFUSE, "use dlrun plan" },
    { "h", C_HELP, 0, 0, 0, NULL },
    { "help", C_HELP, 0, 0, 0, NULL },
    { NULL, 0, 0, 0, 0, NULL },
};

static char said[512];

static void keep(void *ctx, const char *line)
{
    (void)ctx;
    snprintf(said, sizeof said, "%s", line);
}

/* Each option as "c:v0:v1 " into the buffer ctx; help stops with 1. */
static int record(void *ctx, const struct optp_hit *h)
{
    char *out = ctx;
    size_t n = strlen(out);

    snprintf(out + n, 512 - n, "%c:%s:%s%s ", h->opt->code,
             h->v[0] ? h->v[0] : "-", h->v[1] ? h->v[1] : "-",
             h->opt->flags & OPTP_USER ? "*" : "");
    return h->opt->code == C_HELP ? 1 : 0;
}

static const struct {
    const char *words;      /* argv[1..], space-separated */
    unsigned dialect, flags;
    int rc;
    const char *hits;       /* what record() saw */
    const char *rest;       /* argv from *first on, space-separated */
    const char *said;       /* the line said, "" for none */
} cases[] = {
    { "--timeout=5 prog", 0, 0, 0, "t:5:- ", "prog", "" },
    { "--timeout 5 prog", 0, 0, 0, "t:5:- ", "prog", "" },
    { "-timeout 5", 0, 0, 0, "t:5:- ", "", "" },
    { "-t 5 x", 0, 0, 0, "t:5:- ", "x", "" },
    { "-t5 x", 0, 0, 0, "t:5:- ", "x", "" },
    { "-t=5", 0, 0, 0, "t:5:- ", "", "" },
    { "-np 4 -n4 -v a -v", 0, 0, 0, "n:4:- n:4:- v:-:- ", "a -v", "" },
    { "--nproc_per_node 2", 0, 0, 0, "P:2:-* ", "", "" },
    { "-v -- -t 5", 0, 0, 0, "v:-:- ", "-t 5", "" },
    { "-- --", 0, 0, 0, "", "--", "" },
    { "- -v", 0, 0, 0, "", "- -v", "" },
    { "-N 2", 1, 0, 0, "N:2:- ", "", "" },
    { "-N 2", 2, 0, 0, "P:2:- ", "", "" },
    { "-genv A 1 -genv B=2 x", 0, 0, 0, "g:A:1 g:B=2:- ", "x", "" },
    { "--mpi pmix x", 0, 0, 0, "m:pmix:- ", "x", "" },
    { "--mpi x", 0, 0, 0, "m:-:- ", "x", "" },
    { "--mpi=x", 0, 0, 0, "m:x:- ", "", "" },
    { "-v -h -t 1", 0, 0, 1, "v:-:- h:-:- ", "-t 1", "" },
    /* operands between options */
    { "get k --timeout 5 -v", 0, OPTP_PERMUTE, 0, "t:5:- v:-:- ", "get k", "" },
    { "a -t 1 b -- -v c", 0, OPTP_PERMUTE, 0, "t:1:- ", "a b -v c", "" },
    { "add k -5 -v", 0, OPTP_PERMUTE | OPTP_DASH_OPERANDS, 0, "v:-:- ",
      "add k -5", "" },
    { "put k -", 0, OPTP_PERMUTE | OPTP_DASH_OPERANDS, 0, "", "put k -", "" },
    /* refusals, one line each */
    { "--timout 5", 0, 0, 2, "", NULL,
      "unknown option '--timout'; did you mean --timeout? (dlrun t --help)" },
    { "--time=5", 0, 0, 2, "", NULL,
      "unknown option '--time'; did you mean --timeout? (dlrun t --help)" },
    { "--frobnicate", 0, 0, 2, "", NULL,
      "unknown option '--frobnicate' (dlrun t --help)" },
    { "-x", 0, 0, 2, "", NULL, "unknown option '-x' (dlrun t --help)" },
    { "-vx", 0, 0, 2, "", NULL, "unknown option '-vx' (dlrun t --help)" },
    { "--frob", 0, OPTP_DASH_OPERANDS, 2, "", NULL,
      "unknown option '--frob' (dlrun t --help)" },
    { "-v --timeout", 0, 0, 2, "v:-:- ", NULL,
      "missing value for '--timeout' (it takes a value)" },
    { "-genv A", 0, 0, 2, "", NULL,
      "missing value for '-genv' (it takes NAME VALUE)" },
    { "--verbose=1", 0, 0, 2, "", NULL,
      "--verbose takes no value (got '1')" },
    { "--display-map x", 0, 0, 2, "", NULL, "use dlrun plan" },
    /* -np2 is -np 2 glued, not -n with "p2" */
    { "-np2 x", 0, 0, 2, "", NULL,
      "unknown option '-np2'; did you mean -np 2? (dlrun t --help)" },
};

static void split(const char *words, char *buf, size_t n, char **argv,
                  int *argc)
{
    char *save = NULL;

    snprintf(buf, n, "%s", words);
    argv[0] = "t";
    *argc = 1;
    for (char *w = strtok_r(buf, " ", &save); w && *argc < 15;
         w = strtok_r(NULL, " ", &save))
        argv[(*argc)++] = w;
    argv[*argc] = NULL;
}

static void run_case(size_t k)
{
    struct optp p = { opts, "t", cases[k].dialect, cases[k].flags,
                      NULL };
    char buf[256], hits[512] = "", rest[256] = "", what[300];
    char *argv[16];
    int argc, first = -1, rc;

    split(cases[k].words, buf, sizeof buf, argv, &argc);
    said[0] = '\0';
    rc = optp_parse(&p, argc, argv, &first, record, hits);
    snprintf(what, sizeof what, "'%s': exit code", cases[k].words);
    is_int(rc, cases[k].rc, what);
    snprintf(what, sizeof what, "'%s': the options", cases[k].words);
    is_str(hits, cases[k].hits, what);
    snprintf(what, sizeof what, "'%s': what was said", cases[k].words);
    is_str(said, cases[k].said, what);
    if (!cases[k].rest)
        return;
    for (int i = first; i < argc; i++)
        snprintf(rest + strlen(rest), sizeof rest - strlen(rest), "%s%s",
                 i > first ? " " : "", argv[i]);
    snprintf(what, sizeof what, "'%s': the operands", cases[k].words);
    is_str(rest, cases[k].rest, what);
}

/* A subcommand's own lines for an unknown word and a missing value. */
static int own_fail(void *ctx, int why, const struct optp_hit *h,
                    const char *near)
{
    (void)ctx;
    snprintf(said, sizeof said, "%s: %s%s%s", h->shown,
             why == OPTP_NO_VALUE ? "needs a value" : "unknown option",
             near ? ", near " : "", near ? near : "");
    return 7;
}

static void test_fail_hook(void)
{
    struct optp p = { opts, "t", 0, 0, own_fail };
    char buf[64], hits[512] = "", *argv[16];
    int argc, first;

    split("-np", buf, sizeof buf, argv, &argc);
    is_int(optp_parse(&p, argc, argv, &first, record, hits), 7,
           "fail: its exit code");
    is_str(said, "-np: needs a value", "fail says a missing value");
    split("--timout 1", buf, sizeof buf, argv, &argc);
    optp_parse(&p, argc, argv, &first, record, hits);
    is_str(said, "--timout: unknown option, near timeout",
           "fail says an unknown word, with the closest one");
    split("-lz", buf, sizeof buf, argv, &argc);
    optp_parse(&p, argc, argv, &first, record, hits);
    is_str(said, "-lz: unknown option", "and one with none near");
}

static void test_int(void)
{
    int v = 7;

    said[0] = '\0';
    is_int(optp_int("--port", "80", 1, 65535, &v), 0, "a whole number");
    is_int(v, 80, "is read");
    is_int(optp_int("--port", "-3", -5, 5, &v), 0, "a negative one in range");
    is_int(v, -3, "is read");
    is_int(optp_int("--port", "8x", 1, 9, &v), -1, "8x is refused");
    is_str(said, "--port 8x: expected a whole number from 1 to 9",
           "in the one message form");
    is_int(optp_int("-np", "", 1, 9, &v), -1, "an empty one is refused");
    is_int(optp_int("-np", "10", 1, 9, &v), -1, "above max is refused");
    is_int(optp_int("-np", "0", 1, 9, &v), -1, "below min is refused");
    is_int(optp_int("-np", "99999999999999999999", 1, 9, &v), -1,
           "an overflow is refused");
    is_int(v, -3, "and *out is left alone");
}

int main(void)
{
    say_set_sink(keep, NULL);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        run_case(k);
    test_int();
    test_fail_hook();
    ok(optp_suggest(opts, "nproc") != NULL &&
       strcmp(optp_suggest(opts, "nproc"), "nproc-per-node") == 0,
       "a prefix of 3 or more suggests the word");
    ok(optp_suggest(opts, "display-mop") == NULL,
       "a refused word is never suggested");
    ok(optp_find(opts, "N", 2)->code == C_PER_NODE,
       "optp_find takes the dialect's entry");
    return tap_done();
}
