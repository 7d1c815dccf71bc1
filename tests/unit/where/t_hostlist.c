/* t_hostlist.c - Slurm hostlists: expand, fold, count, tasks per node.
 *
 * The expected names and folded strings are what `scontrol show hostnames`
 * and `scontrol show hostlist` of Slurm 22.05 print for the same input
 * (tests/e2e/t_hosts.sh compares with a live scontrol); rows marked
 * "dlrun refuses" are inputs where Slurm invents, drops or mangles hosts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "where/hostlist.h"
#include "tap.h"

/* want: the names joined with ','; NULL when refused with err_has. */
struct erow {
    const char *spec, *want, *err_has;
};

static const struct erow erows[] = {
    /* zero padding: the width is the width of the low number */
    { "gpu[001-016]", "gpu001,gpu002,gpu003,gpu004,gpu005,gpu006,gpu007,"
      "gpu008,gpu009,gpu010,gpu011,gpu012,gpu013,gpu014,gpu015,gpu016", NULL },
    { "n[08-10]", "n08,n09,n10", NULL },
    { "n[8-10]", "n8,n9,n10", NULL },
    { "n[009-011]", "n009,n010,n011", NULL },
    { "n[9-11]", "n9,n10,n11", NULL },
    { "n[001-9]", "n001,n002,n003,n004,n005,n006,n007,n008,n009", NULL },
    { "n[01-1]", "n01", NULL },
    { "n[1-01]", "n1", NULL },
    { "n[00-02]", "n00,n01,n02", NULL },
    { "n[0-0]", "n0", NULL },
    /* several bracket sets: with two, prefix-major; with three, Slurm
     * turns the last fastest, then the first, then the middle one */
    { "rack[1-2]-n[01-04]", "rack1-n01,rack1-n02,rack1-n03,rack1-n04,"
      "rack2-n01,rack2-n02,rack2-n03,rack2-n04", NULL },
    { "a[1-2]b[3-4]", "a1b3,a1b4,a2b3,a2b4", NULL },
    { "a[1-2]b[3-4]c[5-6]", "a1b3c5,a1b3c6,a2b3c5,a2b3c6,a1b4c5,a1b4c6,"
      "a2b4c5,a2b4c6", NULL },
    { "n[1]x[2]", "n1x2", NULL },
    { "n[1-2][3-4]", "n13,n14,n23,n24", NULL },
    { "n[1-3]-[4-5]", "n1-4,n1-5,n2-4,n2-5,n3-4,n3-5", NULL },
    { "n.[01-02].x[3]", "n.01.x3,n.02.x3", NULL },
    { "rack[1-2]-n[01-02],tux[0-1],x[5]",
      "rack1-n01,rack1-n02,rack2-n01,rack2-n02,tux0,tux1,x5", NULL },
    /* lists inside brackets; order and duplicates kept */
    { "n[1-3,7,9-10]", "n1,n2,n3,n7,n9,n10", NULL },
    { "n[1-3],n2", "n1,n2,n3,n2", NULL },
    { "n[1-3,2]", "n1,n2,n3,n2", NULL },
    { "n[01-3,7]", "n01,n02,n03,n7", NULL },
    { "x[5]", "x5", NULL },
    { "n[2-2]", "n2", NULL },
    { "[1-2]", "1,2", NULL },
    { "a1[2-3]", "a12,a13", NULL },
    { "A[1-2]", "A1,A2", NULL },
    { "n[18446744073709551614]", "n18446744073709551614", NULL },
    /* plain names */
    { "foo", "foo", NULL },
    { "n1a", "n1a", NULL },
    { "123", "123", NULL },
    { "007", "007", NULL },
    { "n1.cluster,n2.cluster", "n1.cluster,n2.cluster", NULL },
    { "a;b", "a;b", NULL },
    /* separators: commas, spaces and tabs outside brackets */
    { "n1 n2", "n1,n2", NULL },
    { "a, b", "a,b", NULL },
    { "\ta\tb", "a,b", NULL },
    { "a,,b", "a,b", NULL },
    { ",a", "a", NULL },
    { "n[1-2],", "n1,n2", NULL },
    { "n[1-2] , m", "n1,n2,m", NULL },
    { "", "", NULL },
    { " , ", "", NULL },
    /* Slurm reads numbers with strtoul: blanks and '+' count in the width,
     * "lo-" is lo, junk before "-hi" goes unseen.  Odd, but Slurm's. */
    { "n[1, 3]", "n1,n03", NULL },
    { "n[1,\t2]", "n1,n02", NULL },
    { "n[ 3]", "n03", NULL },
    { "n[+3]", "n03", NULL },
    { "n[1-+3]", "n1,n2,n3", NULL },
    { "n[1- 3]", "n1,n2,n3", NULL },
    { "n[1-]", "n1", NULL },
    { "n[1abc-3]", "n0001,n0002,n0003", NULL },
    { "n[1 -3]", "n01,n02,n03", NULL },
    { "n[0- -0]", "n0", NULL },
    /* refused by Slurm too */
    { "n[3-1]", NULL, "bad hostlist \"n[3-1]\": range 3-1 goes down; "
      "write n[1-3]" },
    { "x,n[1,5-2]", NULL, "range 5-2 goes down; write n[1,2-5]" },
    /* Slurm 23.11 and later: text after the last bracket set ends every
     * name (22.05 refused it) */
    { "tux[0-2]-ib", "tux0-ib,tux1-ib,tux2-ib", NULL },
    { "node[0001-0002]-int", "node0001-int,node0002-int", NULL },
    { "n[1-2].cluster", "n1.cluster,n2.cluster", NULL },
    { "a[1-2]b[3-4]c", "a1b3c,a1b4c,a2b3c,a2b4c", NULL },
    { "x,n[1-2]-x y", "x,n1-x,n2-x,y", NULL },
    { "n[1-2]7", "n17,n27", NULL },
    /* a newline separates names, like a comma */
    { "a\nb", "a,b", NULL },
    { "n[1-2]\nm[3-4]\n", "n1,n2,m3,m4", NULL },
    { "n[1,\n2]", NULL, "a newline inside the brackets of \"[1,?2]\"" },
    { "n[a-b]", NULL, "\"a-b\" in \"n[a-b]\" is not a number or a range" },
    { "n[]", NULL, "empty entry between the brackets of \"n[]\"" },
    { "n[1,,2]", NULL, "empty entry" },
    { "n[1,]", NULL, "empty entry" },
    { "n[,1]", NULL, "empty entry" },
    { "n[0x5]", NULL, "\"0x5\" in \"n[0x5]\" is not a number" },
    { "n[1x-3]", NULL, "\"1x-3\" in" },      /* Slurm's 2-D "axb" boxes */
    { "n[-1]", NULL, "not a number" },
    { "n[1--3]", NULL, "numbers cannot be negative" },
    { "n[1- -3]", NULL, "numbers cannot be negative" },
    { "n[1-3-5]", NULL, "\"1-3-5\" in \"n[1-3-5]\" is not a number" },
    { "n[1,2 ]", NULL, "\"2 \" in" },
    { "n[1 ,2]", NULL, "\"1 \" in" },
    { "n[1-65537]", NULL, "range 1-65537 names 65537 hosts; Slurm allows "
      "at most 65536" },
    { "n[0-65536]", NULL, "names 65537 hosts" },
    { "a[0-65535,0]b[0]", NULL, "bracket set 1 of \"a[0-65535,0]b[0]\" "
      "names more than 65536" },
    { "a[1]b[x]c[1]", NULL, "\"x\" in \"a[1]b[x]c[1]\"" },
    /* dlrun refuses: Slurm invents names from unbalanced brackets */
    { "n[1-", NULL, "'[' is never closed in \"[1-\"" },
    { "n[1-3", NULL, "never closed" },
    { "a[b", NULL, "never closed" },
    { "[", NULL, "never closed" },
    { "a]", NULL, "']' without a '[' before it in \"a]\"" },
    { "n[1-2]]", NULL, "']' without a '['" },
    { "a]b[1,2]", NULL, "']' without a '['" },
    { "a[1[2]", NULL, "'[' inside brackets" },
    /* dlrun refuses: no host name holds a control character */
    { "a\rb", NULL, "control character (byte 13) in \"a?b\"" },
    { "n[1-2]\r", NULL, "control character (byte 13)" },
    /* dlrun refuses: Slurm wraps or drops numbers of 2^64-1 and up */
    { "n99999999999999999999999", NULL, "is too large (the limit is "
      "18446744073709551614)" },
    { "n18446744073709551615", NULL, "too large" },
    { "n[99999999999999999999]", NULL, "too large" },
    { "n[18446744073709551614-18446744073709551615]", NULL, "too large" },
    /* dlrun refuses: Slurm skips what is wrong in a bracket set before the
     * last two and prints the rest ("x,y"; "a0b1c1" ... "a65535b1c1") */
    { "x,a[3-1]b[1]c[1],y", NULL, "range 3-1 goes down" },
    { "x,a[x]b[1]c[1],y", NULL, "\"x\" in \"a[x]b[1]c[1]\"" },
    { "a[0-65535,0]b[1]c[1]", NULL, "bracket set 1 of" },
    /* dlrun's caps (Slurm would print 1049600 and 2^32 names) */
    { "a[0-1024]b[0-1023]", NULL, "takes the list past 1048576 names" },
    { "a[0-65535]b[0-65535]c[0]", NULL, "past 1048576 names" },
};

/* The names joined with ',' (static buffer, enough for these rows). */
static const char *joined(char **hosts, size_t n)
{
    static char buf[4096];
    size_t len = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < n && len < sizeof buf; i++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s",
                                i ? "," : "", hosts[i]);
    return buf;
}

/* fold(names) expands back to the same names. */
static int round_trips(char **hosts, size_t n)
{
    struct err err = { "" };
    char *folded = hostlist_fold(hosts, n, &err), **again = NULL;
    size_t m = 0;
    int same = folded && hostlist_expand(folded, &again, &m, &err) == 0 &&
               m == n;

    for (size_t i = 0; same && i < n; i++)
        same = strcmp(hosts[i], again[i]) == 0;
    if (!same)
        printf("#   fold gave '%s' (%s)\n", folded ? folded : "NULL", err.msg);
    hostlist_free(again, m);
    free(folded);
    return same;
}

static void test_expand_rows(void)
{
    char what[160];

    for (size_t i = 0; i < sizeof erows / sizeof erows[0]; i++) {
        const struct erow *r = &erows[i];
        struct err err = { "" };
        char **hosts = (char **)&err;   /* must be reset on failure */
        size_t n = 99;
        int rc = hostlist_expand(r->spec, &hosts, &n, &err);

        snprintf(what, sizeof what, "expand \"%.60s\"", r->spec);
        for (char *p = what; *p; p++)   /* TAP wants one line */
            *p = *p == '\n' || *p == '\r' ? '?' : *p;
        if (r->want) {
            if (!is_int(rc, 0, what))
                printf("#   %s\n", err.msg);
            is_str(joined(hosts, n), r->want, what);
            ok(round_trips(hosts, n), "  ... and its fold expands back");
        } else {
            is_int(rc, -1, what);
            ok(!hosts && n == 0, "  ... leaves no names");
            if (!ok(strstr(err.msg, r->err_has) && !strchr(err.msg, '\n') &&
                    strncmp(err.msg, "bad hostlist \"", 14) == 0,
                    "  ... says what and where, on one line"))
                printf("#   got '%s'\n#   want '%s'\n", err.msg, r->err_has);
        }
        hostlist_free(hosts, rc == 0 ? n : 0);
    }
}

/* Lists too big to write out: their count, first and last name. */
struct crow {
    const char *spec;
    size_t count;
    const char *first, *last;
};

static const struct crow crows[] = {
    { "n[1-65536]", 65536, "n1", "n65536" },
    { "n[0-65535]", 65536, "n0", "n65535" },
    { "n[1-65536],x", 65537, "n1", "x" },
    { "a[0-1023]b[0-1023]", 1048576, "a0b0", "a1023b1023" },
    { "a[0-65535]b[0-15]", 1048576, "a0b0", "a65535b15" },
    { "a[0-65535]b[0]", 65536, "a0b0", "a65535b0" },
};

static void test_counts(void)
{
    char what[160];

    for (size_t i = 0; i < sizeof crows / sizeof crows[0]; i++) {
        const struct crow *r = &crows[i];
        struct err err = { "" };
        char **hosts = NULL;
        size_t n = 0;
        int rc = hostlist_expand(r->spec, &hosts, &n, &err);

        snprintf(what, sizeof what, "count \"%s\"", r->spec);
        if (!is_int(rc, 0, what))
            printf("#   %s\n", err.msg);
        is_int(n, r->count, "  ... count");
        ok(n && strcmp(hosts[0], r->first) == 0 &&
           strcmp(hosts[n - 1], r->last) == 0, "  ... first and last name");
        hostlist_free(hosts, n);
    }
}

/* The caps hold across items, and on bytes as well as names. */
static void test_caps(void)
{
    struct err err = { "" };
    char **hosts = NULL, spec[160];
    size_t n = 0;

    is_int(hostlist_expand("a[0-1023]b[0-1023],x", &hosts, &n, &err), -1,
           "the name cap counts every item");
    ok(strstr(err.msg, "more than 1048576 names"), err.msg);
    is_int(hostlist_expand("x,a[0-1023]b[0-1023]", &hosts, &n, &err), -1,
           "  ... whichever item comes last");
    ok(strstr(err.msg, "takes the list past 1048576 names"), err.msg);
    /* 1048576 names of 79 bytes: over 64 MiB */
    snprintf(spec, sizeof spec, "%070d[0-1023][0-1023]", 0);
    is_int(hostlist_expand(spec, &hosts, &n, &err), -1, "the byte cap holds");
    ok(strstr(err.msg, "more than 64 MiB"), err.msg);
    ok(!hosts && n == 0, "  ... and leaves no names");
}

/* names: joined with ','; want NULL when refused with err_has. */
struct frow {
    const char *names, *want;
};

static const struct frow frows[] = {
    { "n1,n2,n3", "n[1-3]" },
    { "n01,n1", "n[01,1]" },
    { "n1,n01", "n[1,01]" },
    { "n9,n10", "n[9-10]" },
    { "n08,n9", "n[08,9]" },
    { "n9,n010", "n[9,010]" },
    { "n9,n10,n010", "n[9-10,010]" },
    { "n09,n10,n11", "n[09-11]" },
    { "n98,n99,n100", "n[98-100]" },
    { "n099,n100,n0101", "n[099-100,0101]" },
    { "n99,n0100", "n[99,0100]" },
    { "x1,x01,x001,x2", "x[1,01,001,2]" },
    { "n007,n008", "n[007-008]" },
    { "n000,n001", "n[000-001]" },
    { "n0,n1", "n[0-1]" },
    { "gpu001,gpu002,gpu003,gpu004", "gpu[001-004]" },
    /* order and duplicates are kept: no sorting */
    { "n1,n3,n2", "n[1,3,2]" },
    { "n2,n1", "n[2,1]" },
    { "n10,n9", "n[10,9]" },
    { "n1,n1", "n[1,1]" },
    { "n1,n2,n1,n2", "n[1-2,1-2]" },
    { "n1,m1,n2", "n1,m1,n2" },
    { "n5,n6,m,n7", "n[5-6],m,n7" },
    { "foo,bar,foo", "foo,bar,foo" },
    /* only a trailing number is a number */
    { "n1a,n2a", "n1a,n2a" },
    { "n1.cluster,n2.cluster", "n1.cluster,n2.cluster" },
    { "a1b1,a1b2", "a1b[1-2]" },
    { "a12,a13", "a[12-13]" },
    { "rack1-n1,rack1-n2,rack2-n1", "rack1-n[1-2],rack2-n1" },
    { "rack01-n1,rack1-n2", "rack01-n1,rack1-n2" },
    { "n,n1", "n,n1" },
    { "n1,n", "n1,n" },
    { "1,2", "[1-2]" },
    { "0,1", "[0-1]" },
    { "x5", "x5" },
    { "n18446744073709551614", "n18446744073709551614" },
    { "", "" },
};

/* Split a ','-joined list into an array (no empty names). */
static size_t split(char *s, char **v, size_t max)
{
    size_t n = 0;

    for (char *save = NULL, *t = strtok_r(s, ",", &save); t && n < max;
         t = strtok_r(NULL, ",", &save))
        v[n++] = t;
    return n;
}

static void test_fold_rows(void)
{
    char what[160], buf[256], *v[16];

    for (size_t i = 0; i < sizeof frows / sizeof frows[0]; i++) {
        struct err err = { "" };
        char *got;
        size_t n;

        snprintf(buf, sizeof buf, "%s", frows[i].names);
        n = split(buf, v, 16);
        got = hostlist_fold(v, n, &err);
        snprintf(what, sizeof what, "fold %s", frows[i].names);
        is_str(got, frows[i].want, what);
        ok(got && round_trips(v, n), "  ... and expands back");
        free(got);
    }
}

/* Names that no hostlist can carry, or that Slurm would rewrite. */
static void test_fold_refusals(void)
{
    static const struct {
        const char *name, *err_has;
    } rows[] = {
        { "", "cannot fold an empty host name" },
        { "a b", "cannot fold host name \"a b\": a hostlist cannot hold "
          "whitespace" },
        { "a\tb", "whitespace" },
        { "a,b", "a comma" },
        { "a[1]", "a bracket" },
        { "a]", "a bracket" },
        { "a\nb", "a control character" },
        { "n18446744073709551615", "its number is too large" },
    };

    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct err err = { "" };
        char *v[2] = { "n1", (char *)rows[i].name };
        char *got = hostlist_fold(v, 2, &err);

        ok(!got && strstr(err.msg, rows[i].err_has) && !strchr(err.msg, '\n'),
           rows[i].err_has);
        free(got);
    }
}

/* want: the counts joined with ','; NULL when refused with err_has. */
struct trow {
    const char *spec, *want, *err_has;
};

static const struct trow trows[] = {
    { "2(x3),1", "2,2,2,1", NULL },
    { "4", "4", NULL },
    { "1(x2),3(x1)", "1,1,3", NULL },
    { "8(x2)", "8,8", NULL },
    { "0002", "2", NULL },
    { "2(x03)", "2,2,2", NULL },
    { "65535", "65535", NULL },
    { "1,2,3", "1,2,3", NULL },
    { "", NULL, "bad tasks-per-node \"\": expected a count at \"\"" },
    { "65536", NULL, "a count over 65535" },
    { "0", NULL, "a count of 0" },
    { "1,0(x2)", NULL, "a count of 0 (Slurm lists no node without tasks) "
      "at \"0(x2)\"" },
    { "1(x0)", NULL, "a repeat count outside 1..1048576" },
    { "1(x1048577)", NULL, "a repeat count outside" },
    { "2(x1048576),1", NULL, "more than 1048576 nodes" },
    { "65535(x40000)", NULL, "more than 2147483647 tasks in all" },
    { "2(x3", NULL, "expected N(xR)" },
    { "2(x)", NULL, "expected N(xR)" },
    { "2(3)", NULL, "unexpected text at \"(3)\"" },
    { "2(x3)(x2)", NULL, "unexpected text" },
    { "2,,1", NULL, "expected a count at \",1\"" },
    { "2,", NULL, "expected a count" },
    { " 2", NULL, "expected a count" },
    { "2 ", NULL, "unexpected text at \" \"" },
    { "-1", NULL, "expected a count" },
    { "+1", NULL, "expected a count" },
    { "2(X3)", NULL, "unexpected text" },
    { "abc", NULL, "expected a count at \"abc\"" },
};

static void test_tasks(void)
{
    char what[160], got[256];

    for (size_t i = 0; i < sizeof trows / sizeof trows[0]; i++) {
        const struct trow *r = &trows[i];
        struct err err = { "" };
        int *counts = (int *)&err;      /* must be reset on failure */
        size_t n = 99, len = 0;
        int rc = tasks_per_node_parse(r->spec, &counts, &n, &err);

        snprintf(what, sizeof what, "tasks per node \"%s\"", r->spec);
        got[0] = '\0';
        for (size_t k = 0; rc == 0 && k < n && len < sizeof got; k++)
            len += (size_t)snprintf(got + len, sizeof got - len, "%s%d",
                                    k ? "," : "", counts[k]);
        if (r->want) {
            is_str(rc == 0 ? got : err.msg, r->want, what);
        } else {
            ok(rc == -1 && !counts && n == 0, what);
            if (!ok(strstr(err.msg, r->err_has) != NULL, "  ... message"))
                printf("#   got '%s'\n#   want '%s'\n", err.msg, r->err_has);
        }
        free(rc == 0 ? counts : NULL);
    }
}

static void test_misc(void)
{
    struct err err = { "" };
    char **hosts = NULL, spec[600];
    int *counts = NULL;
    size_t n = 0;

    hostlist_free(NULL, 0);
    ok(1, "hostlist_free(NULL) is a no-op");
    is_int(hostlist_expand(NULL, &hosts, &n, &err), -1, "expand NULL");
    is_int(tasks_per_node_parse(NULL, &counts, &n, &err), -1, "tasks NULL");
    /* a long list is cut short in the message, which stays one line */
    memset(spec, 'a', sizeof spec);
    memcpy(spec + 500, "[3-1]", 6);
    is_int(hostlist_expand(spec, &hosts, &n, &err), -1, "a long bad list");
    ok(strlen(err.msg) < 300 && strstr(err.msg, "aaa...\"") &&
       strstr(err.msg, "goes down"), err.msg);
    is_int(tasks_per_node_parse("1(x1048576)", &counts, &n, &err), 0,
           "1048576 nodes of tasks");
    ok(n == 1048576 && counts[n - 1] == 1, "  ... all there");
    free(counts);
}

/* The text a message offers as the fix ("...; write n[1-3]", "as in
 * n[1-4]") copied into buf, or NULL when it offers none. */
static const char *suggested_fix(const char *msg, char *buf, size_t size)
{
    static const char *const leads[] = { "; write ", ", as in " };
    const char *p = NULL;

    /* the last one: the quoted input before it may hold the words too */
    for (size_t i = 0; i < 2; i++)
        for (const char *q = msg; (q = strstr(q, leads[i])); q++)
            if (!p || q + strlen(leads[i]) > p)
                p = q + strlen(leads[i]);
    if (!p || strncmp(p, "it ", 3) == 0)
        return NULL;
    snprintf(buf, size, "%s", p);       /* the fix ends the message */
    return buf;
}

/* Issue 11 item 12: a refusal's suggested fix must itself be valid input;
 * one too long to quote whole is not offered shortened. */
static void test_fixes_are_valid(void)
{
    static const char *const bad[] = {
        "n[3-1]", "x,n[1,5-2]", "n[1-", "n[]", "n[1,,2]", "n[a-b]", "[",
        "n[09-1]-ib", "rack[1-2]-n[4-3]", "n[5-2,1 ]", "n[5-2, 1]",
        "n[5-2,x]", "n[1-3,,2]", "n[4-\t3]-ib",
        "a-very-long-host-name-prefix-that-goes-on-and-on-for-a-while-longer-"
        "than-a-message-quotes[9-1]",
    };
    char fix[256];
    int offered = 0, valid = 0;

    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct err err = { "" };
        char **h = NULL;
        size_t n = 0;

        if (hostlist_expand(bad[i], &h, &n, &err) == 0 ||
            !suggested_fix(err.msg, fix, sizeof fix))
            continue;
        offered++;
        if (hostlist_expand(fix, &h, &n, &err) == 0 && n > 0 &&
            !strstr(fix, "..."))
            valid++;
        else
            printf("#   '%s' suggests '%s': %s\n", bad[i], fix, err.msg);
        hostlist_free(h, n);
    }
    ok(offered >= 6, "refusals suggest a fix");
    is_int(valid, offered, "every suggested fix expands");
}

int main(void)
{
    test_expand_rows();
    test_counts();
    test_caps();
    test_fold_rows();
    test_fold_refusals();
    test_tasks();
    test_misc();
    test_fixes_are_valid();
    return tap_done();
}
