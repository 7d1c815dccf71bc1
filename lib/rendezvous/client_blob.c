/* client_blob.c - broker_blob's layout through a broker client
 * (client_blob.h). */
#include "rendezvous/client_blob.h"

#include <stdio.h>
#include <stdlib.h>

#include "rendezvous/broker_blob.h"
#include "rendezvous/broker_proto.h"
#include "rendezvous/client.h"

#define KEY_ROOM (BP_MAX_KEY + 1)

/* Chunk i's key: the blob's key (cut to leave room) and ".i". */
static void chunk_key(char *k, const char *key, size_t i)
{
    snprintf(k, KEY_ROOM, "%.230s.%zu", key, i);
}

int client_put_blob(struct client *c, const char *key, const char *data,
                    size_t n, int status, struct err *err)
{
    size_t max = client_max_value(c);
    struct blob_head h = { n, max ? (n + max - 1) / max : 0, status };
    char k[KEY_ROOM], head[BLOB_HEAD_MAX];
    int rc = CLIENT_OK;

    if (n > BLOB_MAX_LEN) {
        err_set(err, "%zu bytes under %s (at most %zu)", n, key, BLOB_MAX_LEN);
        return CLIENT_ERROR;
    }
    for (size_t i = 0; rc == CLIENT_OK && i < h.chunks; i++) {
        size_t len = n - i * max < max ? n - i * max : max;
        chunk_key(k, key, i);
        rc = client_put(c, k, data + i * max, len, err);
    }
    return rc == CLIENT_OK ?
           client_put(c, key, head, blob_head_format(&h, head), err) : rc;
}

/* blob_assemble's fetch: chunk i of the blob under key, through c. */
struct chunk_src {
    struct client *c;
    const char *key;
    int timeout_ms;
};

static int fetch_chunk(void *ctx, size_t i, void **val, size_t *len,
                       struct err *err)
{
    const struct chunk_src *src = ctx;
    char k[KEY_ROOM];

    chunk_key(k, src->key, i);
    return client_get(src->c, k, src->timeout_ms, val, len, err);
}

int client_get_blob(struct client *c, const char *key, int timeout_ms,
                    char **buf, size_t *len, int *status, struct err *err)
{
    struct chunk_src src = { c, key, timeout_ms };
    struct blob_head h = { 0 };
    void *v = NULL;
    size_t vlen = 0;
    int rc = client_get(c, key, timeout_ms, &v, &vlen, err);

    if (rc != CLIENT_OK)
        return rc;
    if (blob_head_parse(v, vlen, client_max_value(c), &h, err) < 0) {
        err_prefix(err, "bad blob head under %s", key);
        rc = CLIENT_ERROR;
        goto out;
    }
    rc = blob_assemble(&h, client_max_value(c), fetch_chunk, &src, key, buf,
                       len, err);
    if (rc == CLIENT_OK && status)
        *status = h.status;
out:
    free(v);
    return rc;
}
