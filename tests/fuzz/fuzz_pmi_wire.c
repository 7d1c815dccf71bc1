/* fuzz_pmi_wire.c - libFuzzer target for the simple PMI engine: any bytes
 * a rank writes on its PMI_FD, fed in pieces the first byte chooses.  It
 * never crashes; every answer is a whole PMI-1 line ("cmd=...\n") or a
 * PMI-2 message whose 6-character length is its size; a fence is ended
 * each time one is entered.  The same bytes as another node's fence blob
 * (pmi_pairs_each, what crosses the broker): every pair it takes has a
 * key of 1-64 bytes and a value of at most 1024. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/pmi_serve_int.h"
#include "mpi/pmi_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char store_key[PMI_WIRE_KEY_MAX + 1], store_val[PMI_WIRE_VAL_MAX + 1];
static int fenced;

static int f_put(void *ctx, int rank, const char *key, const char *val)
{
    (void)ctx;
    (void)rank;
    if (strlen(key) > PMI_WIRE_KEY_MAX || strlen(val) > PMI_WIRE_VAL_MAX)
        abort();
    snprintf(store_key, sizeof store_key, "%s", key);
    snprintf(store_val, sizeof store_val, "%s", val);
    return 0;
}

static const char *f_get(void *ctx, int rank, const char *key)
{
    (void)ctx;
    (void)rank;
    return strcmp(key, store_key) == 0 ? store_val : NULL;
}

static void f_fence(void *ctx, int rank)
{
    (void)ctx;
    (void)rank;
    fenced = 1;
}

static int f_respond(void *ctx, int rank, const char *buf, size_t len)
{
    char head[7];

    (void)ctx;
    (void)rank;
    if (len >= 4 && memcmp(buf, "cmd=", 4) == 0) {
        if (buf[len - 1] != '\n' || memchr(buf, '\n', len - 1))
            abort();
        return 0;
    }
    if (len < 6)
        abort();
    memcpy(head, buf, 6);
    head[6] = '\0';
    if ((size_t)atoi(head) != len - 6 || memcmp(buf + 6, "cmd=", 4) != 0)
        abort();
    return 0;
}

static void f_abort(void *ctx, int rank, int code, const char *msg)
{
    (void)ctx;
    (void)rank;
    (void)code;
    (void)msg;
}

static int pair_ok(void *ctx, const char *key, const char *val)
{
    (void)ctx;
    if (!*key || strlen(key) > PMI_WIRE_KEY_MAX ||
        strlen(val) > PMI_WIRE_VAL_MAX)
        abort();
    return 0;
}

static const struct pmi_wire_ops ops = { f_put, f_get, f_fence, f_respond,
                                         f_abort };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const struct pmi_wire_job job = { .size = 2, .kvsname = "kvs_1",
                                             .mapping = "(vector,(0,1,2))" };
    struct err err = { "" };
    struct pmi_wire *w = pmi_wire_create(&job, &ops, NULL, 1, &err);
    size_t step = size ? (size_t)data[0] % 17 + 1 : 1;

    store_key[0] = '\0';
    fenced = 0;
    for (size_t at = 0; w && at < size; at += step) {
        size_t n = size - at < step ? size - at : step;
        if (pmi_wire_feed(w, (const char *)data + at, n, &err) < 0) {
            if (!err.msg[0])
                abort();
            break;
        }
        if (fenced && pmi_wire_fence_done(w, 0, &err) < 0)
            abort();
        fenced = 0;
    }
    pmi_wire_destroy(w);
    if (pmi_pairs_each((const char *)data, size, pair_ok, NULL) > (int)size)
        abort();
    return 0;
}
