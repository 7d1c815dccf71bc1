/* fuzz_tasks.c - libFuzzer target for tasks_per_node_parse.
 *
 * It never crashes, fails cleanly (no counts, a one-line message), keeps
 * its bounds (1..TASKS_PER_NODE_MAX each, at most HOSTLIST_MAX_NAMES
 * nodes, a sum that fits an int), and the counts, written back in Slurm's
 * "N(xR)" form, parse to the same counts. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "where/hostlist.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void must(int cond)
{
    if (!cond)
        abort();
}

/* counts in Slurm's form: runs of one count as "N(xR)", others as "N". */
static char *render(const int *counts, size_t n)
{
    char *out = malloc(n * 20 + 1);
    size_t len = 0;

    must(out != NULL);
    for (size_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && counts[j] == counts[i]; j++)
            ;
        len += (size_t)sprintf(out + len, j - i > 1 ? "%s%d(x%zu)" : "%s%d",
                               i ? "," : "", counts[i], j - i);
    }
    out[len] = '\0';
    return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct err err = { "" };
    char *spec = malloc(size + 1), *again_spec;
    int *counts = NULL, *again = NULL;
    size_t n = 0, m = 0;
    long sum = 0;

    must(spec != NULL);
    memcpy(spec, data, size);
    spec[size] = '\0';
    if (tasks_per_node_parse(spec, &counts, &n, &err) < 0) {
        must(!counts && n == 0 && err.msg[0] && !strchr(err.msg, '\n'));
        free(spec);
        return 0;
    }
    must(n >= 1 && n <= HOSTLIST_MAX_NAMES);
    for (size_t i = 0; i < n; i++) {
        must(counts[i] >= 1 && counts[i] <= TASKS_PER_NODE_MAX);
        sum += counts[i];
    }
    must(sum <= INT_MAX);
    again_spec = render(counts, n);
    must(tasks_per_node_parse(again_spec, &again, &m, &err) == 0 && m == n &&
         memcmp(again, counts, n * sizeof *counts) == 0);
    free(again_spec);
    free(again);
    free(counts);
    free(spec);
    return 0;
}
