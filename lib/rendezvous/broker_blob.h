/* broker_blob.h - a blob larger than one broker value, stored as chunks:
 * "LEN NCHUNKS STATUS" under KEY, its bytes under KEY.0, KEY.1, ...
 * (every chunk but the last holds exactly the broker's value limit).
 * The PMIx fence and direct modex across nodes use it.
 *
 * Whatever is read back came from a rank or an agent holding the token,
 * not from dlrun: the head is parsed strictly and every number in it is
 * checked against the value limit and BLOB_MAX_LEN before anything is
 * allocated or copied; each chunk must have exactly the size the head
 * announced.  blob_assemble is pure so that the fuzzer
 * (tests/fuzz/fuzz_broker_blob.c) drives it without a broker. */
#ifndef DLRUN_BROKER_BLOB_H
#define DLRUN_BROKER_BLOB_H

#include <stddef.h>

#include "util/err.h"

#define BLOB_MAX_LEN ((size_t)1 << 30)  /* one blob, bytes */
#define BLOB_HEAD_MAX 64                /* the head value, bytes */

struct blob_head {
    size_t len;         /* bytes of the blob */
    size_t chunks;      /* ceil(len / max_value) */
    int status;
};

/* Parse the head value v (vlen bytes, borrowed, need not end in NUL)
 * written for a broker whose values hold max_value bytes.  0, or -1 with
 * err saying which rule it breaks (not three decimal numbers, LEN above
 * BLOB_MAX_LEN, NCHUNKS not what LEN needs, STATUS not an int). */
int blob_head_parse(const void *v, size_t vlen, size_t max_value,
                    struct blob_head *h, struct err *err);

/* Write h as a head value into out (BLOB_HEAD_MAX bytes); its length. */
size_t blob_head_format(const struct blob_head *h, char *out);

/* Fetch chunk i: on 0 (CLIENT_OK), *val is malloc'd (caller frees) and
 * *len its size; else a CLIENT_* code with err. */
typedef int (*blob_fetch_fn)(void *ctx, size_t i, void **val, size_t *len,
                             struct err *err);

/* Append the blob of head h to *buf (*len bytes so far; realloc'd as
 * chunks arrive, one spare byte; the caller frees it, on failure too),
 * fetching its chunks with fetch.  0 (CLIENT_OK), a CLIENT_* code from
 * fetch, or CLIENT_ERROR with err (a chunk of the wrong size, *len
 * would overflow, out of memory).  key names the blob in err. */
int blob_assemble(const struct blob_head *h, size_t max_value,
                  blob_fetch_fn fetch, void *ctx, const char *key,
                  char **buf, size_t *len, struct err *err);

#endif
