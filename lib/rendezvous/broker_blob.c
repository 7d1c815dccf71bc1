/* broker_blob.c - see broker_blob.h. */
#include "rendezvous/broker_blob.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rendezvous/client.h"

/* A decimal number of at most 19 digits (no sign, no space) at *p, below
 * end; *p moves past it.  0 / -1. */
static int parse_digits(const char **p, const char *end, unsigned long long *out)
{
    unsigned long long v = 0;
    const char *s = *p;

    if (s >= end || *s < '0' || *s > '9')
        return -1;
    for (; s < end && *s >= '0' && *s <= '9'; s++) {
        if (s - *p >= 19)
            return -1;      /* 19 digits always fit in 64 bits */
        v = v * 10 + (unsigned)(*s - '0');
    }
    *p = s;
    *out = v;
    return 0;
}

/* "LEN NCHUNKS STATUS" with single spaces, STATUS maybe negative. */
static int split_head(const char *s, const char *end, unsigned long long *len,
                      unsigned long long *chunks, long long *status)
{
    unsigned long long st;
    int neg;

    if (parse_digits(&s, end, len) < 0 || s >= end || *s++ != ' ' ||
        parse_digits(&s, end, chunks) < 0 || s >= end || *s++ != ' ')
        return -1;
    neg = s < end && *s == '-';
    s += neg;
    if (parse_digits(&s, end, &st) < 0 || s != end || st > (unsigned)INT_MAX + 1u)
        return -1;
    *status = neg ? -(long long)st : (long long)st;
    return 0;
}

int blob_head_parse(const void *v, size_t vlen, size_t max_value,
                    struct blob_head *h, struct err *err)
{
    unsigned long long len = 0, chunks = 0;
    long long status = 0;

    if (!v || vlen == 0 || vlen >= BLOB_HEAD_MAX ||
        split_head(v, (const char *)v + vlen, &len, &chunks, &status) < 0)
        return err_set(err, "not \"LEN NCHUNKS STATUS\" (three decimal "
                       "numbers)");
    if (status < INT_MIN || status > INT_MAX)
        return err_set(err, "status %lld is not an int", status);
    if (len > BLOB_MAX_LEN)
        return err_set(err, "announces %llu bytes (at most %zu)", len,
                       BLOB_MAX_LEN);
    if (max_value == 0 || chunks != (len + max_value - 1) / max_value)
        return err_set(err, "announces %llu chunks for %llu bytes (%zu-byte "
                       "values need %llu)", chunks, len, max_value,
                       max_value ? (len + max_value - 1) / max_value : 0);
    h->len = (size_t)len;
    h->chunks = (size_t)chunks;
    h->status = (int)status;
    return 0;
}

size_t blob_head_format(const struct blob_head *h, char *out)
{
    int n = snprintf(out, BLOB_HEAD_MAX, "%zu %zu %d", h->len, h->chunks,
                     h->status);

    return n < 0 ? 0 : (size_t)n;
}

/* Check chunk i's size against h and append it to *buf. */
static int append_chunk(const struct blob_head *h, size_t max_value, size_t i,
                        const void *v, size_t vlen, const char *key,
                        char **buf, size_t *len, struct err *err)
{
    size_t want = h->len - i * max_value < max_value ? h->len - i * max_value
                                                     : max_value;
    char *grown;

    if (vlen != want)
        return err_set(err, "%s.%zu holds %zu bytes, the head announced %zu",
                       key, i, vlen, want);
    if (*len > SIZE_MAX - vlen - 1)
        return err_set(err, "%s: the blobs together are too large", key);
    grown = realloc(*buf, *len + vlen + 1);
    if (!grown)
        return err_set(err, "%s: out of memory for %zu bytes", key,
                       *len + vlen + 1);
    *buf = grown;
    if (vlen)
        memcpy(*buf + *len, v, vlen);
    *len += vlen;
    return 0;
}

int blob_assemble(const struct blob_head *h, size_t max_value,
                  blob_fetch_fn fetch, void *ctx, const char *key,
                  char **buf, size_t *len, struct err *err)
{
    int rc = CLIENT_OK;

    /* blob_head_parse's promise, checked again: a caller may build h */
    if (max_value == 0 || h->len > BLOB_MAX_LEN ||
        h->chunks != (h->len + max_value - 1) / max_value)
        return err_set(err, "%s: inconsistent blob head", key);
    /* the spare byte exists even for an empty blob */
    if (!*buf && !(*buf = calloc(1, 1)))
        return err_set(err, "out of memory");
    for (size_t i = 0; rc == CLIENT_OK && i < h->chunks; i++) {
        void *v = NULL;
        size_t vlen = 0;

        rc = fetch(ctx, i, &v, &vlen, err);
        if (rc == CLIENT_OK &&
            append_chunk(h, max_value, i, v, vlen, key, buf, len, err) < 0)
            rc = CLIENT_ERROR;
        free(v);
    }
    return rc;
}
