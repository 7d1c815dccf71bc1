/* fuzz_ranges.c - libFuzzer target for ranges_parse (--spawn).
 *
 * It never crashes, refuses cleanly, keeps every value in [0, max) and at
 * most max of them, and what it accepts formats back to a string that
 * parses to the same values. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "where/ranges.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void must(int cond)
{
    if (!cond)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct err err = { "" };
    char *s = malloc(size + 1);
    int *v = NULL, *w = NULL, n, m, max = 1000;
    char *back;

    must(s != NULL);
    memcpy(s, data, size);
    s[size] = '\0';
    n = ranges_parse(s, max, &v, &err);
    must(n == -1 ? v == NULL && err.msg[0] : n >= 1 && n <= max);
    for (int i = 0; i < n; i++)
        must(v[i] >= 0 && v[i] < max);
    if (n > 0) {
        back = ranges_format(v, n);
        must(back != NULL);
        m = ranges_parse(back, max, &w, &err);
        must(m == n && memcmp(v, w, (size_t)n * sizeof *v) == 0);
        free(back);
        free(w);
    }
    free(v);
    free(s);
    return 0;
}
