/* fuzz_hostlist.c - libFuzzer target for lib/where/hostlist.c.
 *
 * The input, as a hostlist: hostlist_expand never crashes, keeps its caps,
 * fails cleanly (no names, a one-line message), and what it expands folds
 * into a list that expands back to the same names in the same order; a
 * refusal's suggested fix expands.
 * The input again, as names one per line: whatever hostlist_fold accepts
 * expands back to those names. */
#include <limits.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "where/hostlist.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Abort unless cond: libFuzzer reports the input that did it. */
static void must(int cond)
{
    if (!cond)
        abort();
}

/* The name ends in a number of 2^64-1 or more, which fold refuses. */
static int number_too_large(const char *name)
{
    size_t len = strlen(name), d = len;

    while (d > 0 && name[d - 1] >= '0' && name[d - 1] <= '9')
        d--;
    while (d < len - 1 && name[d] == '0')
        d++;
    return len - d > 20 || (len - d == 20 &&
                            strcmp(name + d, "18446744073709551615") >= 0);
}

/* Fold names; if that works, the folded list must expand back to them.
 * must_fold: only a too-large number may make fold refuse. */
static void round_trip(char **names, size_t n, int must_fold)
{
    struct err err = { "" };
    char *folded = hostlist_fold(names, n, &err), **again = NULL;
    size_t m = 0;

    if (!folded) {
        must(err.msg[0] && !strchr(err.msg, '\n'));
        for (size_t i = 0; must_fold && i < n; i++)
            if (number_too_large(names[i]))
                must_fold = 0;
        must(!must_fold);
        return;
    }
    must(hostlist_expand(folded, &again, &m, &err) == 0 && m == n);
    for (size_t i = 0; i < n; i++)
        must(strcmp(names[i], again[i]) == 0);
    hostlist_free(again, m);
    free(folded);
}

/* A refusal's suggested fix ("; write n[1-3]", ", as in n[1-4]") must
 * itself expand.  Messages quote the input: one that holds the words
 * itself is not looked at. */
static void fix_is_valid(const char *spec, const char *msg)
{
    static const char *const leads[] = { "; write ", ", as in " };
    const char *p = NULL;
    char fix[ERR_MSG_MAX], **hosts = NULL;
    size_t n = 0;
    struct err err = { "" };

    if (strstr(spec, "write") || strstr(spec, "as in"))
        return;

    /* the last one: the quoted input before it may hold the words too */
    for (size_t i = 0; i < 2; i++)
        for (const char *q = msg; (q = strstr(q, leads[i])); q++)
            if (!p || q + strlen(leads[i]) > p)
                p = q + strlen(leads[i]);
    if (!p || strncmp(p, "it ", 3) == 0)
        return;
    snprintf(fix, sizeof fix, "%s", p);     /* the fix ends the message */
    must(hostlist_expand(fix, &hosts, &n, &err) == 0 && n > 0);
    hostlist_free(hosts, n);
}

static void fuzz_expand(const char *spec)
{
    struct err err = { "" };
    char **hosts = NULL;
    size_t n = 0, bytes = 0;

    if (hostlist_expand(spec, &hosts, &n, &err) < 0) {
        must(!hosts && n == 0 && err.msg[0] && !strchr(err.msg, '\n'));
        fix_is_valid(spec, err.msg);
        return;
    }
    must(n <= HOSTLIST_MAX_NAMES);
    for (size_t i = 0; i < n; i++) {
        must(hosts[i][0] && !strpbrk(hosts[i], " \t\n,[]"));
        bytes += strlen(hosts[i]) + 1;
    }
    must(bytes <= HOSTLIST_MAX_BYTES);
    round_trip(hosts, n, 1);
    hostlist_free(hosts, n);
}

/* The input as names, one per line (empty lines are names too). */
static void fuzz_fold(char *text)
{
    char *names[64];
    size_t n = 0;

    for (char *p = text; p && n < 64; n++) {
        names[n] = p;
        p = strchr(p, '\n');
        if (p)
            *p++ = '\0';
    }
    round_trip(names, n, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *spec = malloc(size + 1);

    if (!spec)
        return 0;
    memcpy(spec, data, size);
    spec[size] = '\0';
    fuzz_expand(spec);
    fuzz_fold(spec);
    free(spec);
    return 0;
}
