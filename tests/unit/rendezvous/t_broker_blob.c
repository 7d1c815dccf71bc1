/* t_broker_blob.c - blobs stored in chunks through the broker (the PMIx
 * fence and direct modex): heads and chunks written by a hostile token
 * holder are refused before anything is allocated or copied.  The head
 * `18446744073709551615 1 0` once wrapped the size computation and a
 * 4 KiB chunk was copied into a 1-byte buffer. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rendezvous/broker_blob.h"
#include "rendezvous/client.h"
#include "tap.h"


struct head_case {
    const char *text;
    size_t max_value;
    int ok;
    size_t len, chunks;
    int status;
};

static const struct head_case heads[] = {
    { "0 0 0", 16, 1, 0, 0, 0 },
    { "16 1 -27", 16, 1, 16, 1, -27 },
    { "17 2 3", 16, 1, 17, 2, 3 },
    { "1000 63 0", 16, 1, 1000, 63, 0 },
    { "18446744073709551615 1 0", 4096, 0, 0, 0, 0 },   /* the overflow */
    { "18446744073709551615 0 0", 4096, 0, 0, 0, 0 },
    { "1073741825 1 0", 1u << 30, 0, 0, 0, 0 },         /* > BLOB_MAX_LEN */
    { "-1 1 0", 16, 0, 0, 0, 0 },
    { "5 2 0", 16, 0, 0, 0, 0 },                        /* too many chunks */
    { "17 1 0", 16, 0, 0, 0, 0 },                       /* too few */
    { "1 1 2147483648", 16, 0, 0, 0, 0 },
    { "1 1 -2147483648", 16, 1, 1, 1, -2147483647 - 1 },
    { "1 1 0 ", 16, 0, 0, 0, 0 },
    { " 1 1 0", 16, 0, 0, 0, 0 },
    { "1  1 0", 16, 0, 0, 0, 0 },
    { "+1 1 0", 16, 0, 0, 0, 0 },
    { "1 1", 16, 0, 0, 0, 0 },
    { "", 16, 0, 0, 0, 0 },
    { "1 1 0", 0, 0, 0, 0, 0 },
};

static void test_heads(void)
{
    char what[128];

    for (size_t i = 0; i < sizeof heads / sizeof *heads; i++) {
        const struct head_case *c = &heads[i];
        struct blob_head h = { 7, 7, 7 };
        struct err err = { "" };
        int rc = blob_head_parse(c->text, strlen(c->text), c->max_value, &h,
                                 &err);

        snprintf(what, sizeof what, "head '%s' (values of %zu): %s", c->text,
                 c->max_value, c->ok ? "taken" : "refused");
        ok(c->ok ? rc == 0 && h.len == c->len && h.chunks == c->chunks &&
                   h.status == c->status
                 : rc < 0 && err.msg[0], what);
    }
}

/* A fetch that hands out the chunks of a table. */
struct chunks {
    const char *const *v;
    size_t n;
};

static int fetch(void *ctx, size_t i, void **val, size_t *len, struct err *err)
{
    const struct chunks *c = ctx;

    if (i >= c->n)
        return err_set(err, "no chunk %zu", i), CLIENT_TIMEOUT;
    *len = strlen(c->v[i]);
    *val = strdup(c->v[i]);
    return CLIENT_OK;
}

static void test_assemble(void)
{
    static const char *const good[] = { "abcd", "ef" },
                             *const long_last[] = { "abcd", "efg" },
                             *const short_mid[] = { "abc", "def" };
    struct blob_head h = { 6, 2, 0 };
    struct err err = { "" };
    char *buf = NULL;
    size_t len = 0;

    is_int(blob_assemble(&h, 4, fetch, &(struct chunks){ good, 2 }, "k",
                         &buf, &len, &err), CLIENT_OK, "two chunks of 4+2");
    ok(len == 6 && memcmp(buf, "abcdef", 6) == 0, "  the bytes in order");
    is_int(blob_assemble(&h, 4, fetch, &(struct chunks){ long_last, 2 }, "k",
                         &buf, &len, &err), CLIENT_ERROR,
           "a last chunk longer than announced: refused");
    ok(strstr(err.msg, "k.1 holds 3 bytes, the head announced 2") != NULL,
       "  says which chunk and both sizes");
    is_int(blob_assemble(&h, 4, fetch, &(struct chunks){ short_mid, 2 }, "k",
                         &buf, &len, &err), CLIENT_ERROR,
           "a middle chunk shorter than the value limit: refused");
    h = (struct blob_head){ 5, 1, 0 };
    is_int(blob_assemble(&h, 4, fetch, &(struct chunks){ good, 2 }, "k",
                         &buf, &len, &err), CLIENT_ERROR,
           "a head built by hand that does not add up: refused");
    h = (struct blob_head){ 6, 2, 0 };
    is_int(blob_assemble(&h, 4, fetch, &(struct chunks){ good, 1 }, "k",
                         &buf, &len, &err), CLIENT_TIMEOUT,
           "a missing chunk: fetch's code");
    free(buf);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    test_heads();
    test_assemble();
    return tap_done();
}
