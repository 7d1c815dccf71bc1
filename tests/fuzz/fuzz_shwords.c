/* fuzz_shwords.c - libFuzzer target for shwords_split (the dlrun line of
 * a job script given to `dlrun script --check`).
 *
 * It never crashes, refuses with a message, and what it accepts has no
 * more words than the line has bytes plus one, none longer than the
 * line. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/shwords.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void must(int cond)
{
    if (!cond)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct err err = { "" };
    struct strv v = { 0 };
    char *s = malloc(size + 1);

    must(s != NULL);
    memcpy(s, data, size);
    s[size] = '\0';
    if (shwords_split(s, &v, &err) < 0) {
        must(err.msg[0] != '\0');
    } else {
        must(v.n <= strlen(s) + 1);
        for (size_t i = 0; i < v.n; i++)
            must(strlen(v.v[i]) <= strlen(s));
    }
    strv_free(&v);
    free(s);
    return 0;
}
