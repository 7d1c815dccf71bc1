/* client_blob.h - a blob larger than one broker value, put and read back
 * through a broker client, in broker_blob.h's layout (a head under KEY,
 * the bytes under KEY.0, KEY.1, ...).  The PMIx and simple-PMI fences
 * across nodes and the PMIx direct modex exchange their data this way. */
#ifndef DLRUN_CLIENT_BLOB_H
#define DLRUN_CLIENT_BLOB_H

#include <stddef.h>

#include "util/err.h"

struct client;

/* Store n bytes at data (borrowed) under key through c, chunked to the
 * broker's value limit, with status.  CLIENT_OK or a CLIENT_* error with
 * err (CLIENT_ERROR for more than BLOB_MAX_LEN bytes). */
int client_put_blob(struct client *c, const char *key, const char *data,
                    size_t n, int status, struct err *err);

/* Append the blob under key (waiting up to timeout_ms for it, or
 * CLIENT_FOREVER) to *buf (*len bytes so far; realloc'd, one spare byte;
 * the caller frees it, on failure too); *status, where status is not
 * NULL, gets its status.  Whoever wrote it held the token, nothing more:
 * a head that does not add up is CLIENT_ERROR with err naming the key.
 * CLIENT_OK or a CLIENT_* error with err. */
int client_get_blob(struct client *c, const char *key, int timeout_ms,
                    char **buf, size_t *len, int *status, struct err *err);

#endif
