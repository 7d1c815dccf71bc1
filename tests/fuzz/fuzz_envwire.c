/* fuzz_envwire.c - libFuzzer target for the stream an agent reads on its
 * stdin before the lifeline (lib/run/envwire.h: secrets and -x values).
 *
 * It never crashes, stops at the end (nothing after the empty line is
 * taken), gives entries with NAME= and no NUL within the limits, decodes
 * the same in one piece as byte by byte, and what it accepts encodes back
 * to a stream that decodes to the same entries. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "run/envwire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void must(int cond)
{
    if (!cond)
        abort();
}

static int same(const struct strv *a, const struct strv *b)
{
    if (a->n != b->n)
        return 0;
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->v[i], b->v[i]) != 0)
            return 0;
    return 1;
}

/* Entries in DLRUN_X_ form, so that encode keeps every one. */
static void check_roundtrip(const struct strv *got)
{
    struct strv env = { 0 };
    struct envwire_dec d = { 0 };
    struct err err = { "" };
    size_t len = 0, used = 0;
    char *text;

    for (size_t i = 0; i < got->n; i++)
        strv_addf(&env, ENVWIRE_PREFIX "%s", got->v[i]);
    must(!env.failed);
    text = envwire_encode(env.v, &len);
    must(text != NULL);
    if (len <= ENVWIRE_TOTAL_MAX) {
        must(envwire_feed(&d, text, len, &used, &err) == 1 && used == len);
        must(same(&d.out, &env));
    }
    envwire_dec_free(&d);
    free(text);
    strv_free(&env);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct envwire_dec whole = { 0 }, bytes = { 0 };
    struct err err = { "" }, err2 = { "" };
    size_t used = 0, used2 = 0;
    int rc = envwire_feed(&whole, data, size, &used, &err), rc2 = 0;

    must(rc >= -1 && rc <= 1 && used <= size);
    must(rc != -1 || err.msg[0]);
    must(rc != 0 || used == size);
    for (size_t i = 0; rc2 == 0 && i < size; i++) {
        size_t u = 0;
        rc2 = envwire_feed(&bytes, data + i, 1, &u, &err2);
        used2 += u;
    }
    must(rc2 == rc && used2 == used && same(&whole.out, &bytes.out));
    for (size_t i = 0; i < whole.out.n; i++) {
        const char *e = whole.out.v[i];
        must(strchr(e, '=') && e[0] != '=' && strlen(e) < ENVWIRE_ENTRY_MAX);
    }
    if (rc == 1)
        check_roundtrip(&whole.out);
    envwire_dec_free(&whole);
    envwire_dec_free(&bytes);
    return 0;
}
