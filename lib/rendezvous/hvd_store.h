/* hvd_store.h - the key-value store behind Horovod's Gloo rendezvous:
 * values by scope and key, as horovodrun's rendezvous server keeps them
 * (horovod/runner/http/http_server.py), with a memory budget.
 *
 * Finalize: a scope the launcher declared with its size (the plan's
 * "global", "local_HOST", "cross_LOCALRANK") is emptied once that many
 * different keys were deleted from it (each rank deletes its rank when its
 * rendezvous is done); in any other scope a delete removes the key, and
 * the scope goes when its last key does.
 *
 * Not thread-safe: the server serializes the calls. */
#ifndef DLRUN_HVD_STORE_H
#define DLRUN_HVD_STORE_H

#include <stddef.h>

#include "util/err.h"

struct hvd_store;

/* An empty store that holds at most max_bytes (keys, values and a fixed
 * cost per entry counted).  NULL with err when out of memory. */
struct hvd_store *hvd_store_create(size_t max_bytes, struct err *err);

/* Free s and everything in it (NULL is fine). */
void hvd_store_destroy(struct hvd_store *s);

/* Declare scope (copied) as one whose keys all go once size keys were
 * deleted from it.  0 / -1 with err (out of memory). */
int hvd_store_scope_size(struct hvd_store *s, const char *scope, int size,
                         struct err *err);

/* Set scope/key to len bytes of val (copied), replacing an older value.
 * 0, or -1 with err when the budget would be exceeded or out of memory
 * (the store is unchanged then). */
int hvd_store_put(struct hvd_store *s, const char *scope, const char *key,
                  const void *val, size_t len, struct err *err);

/* The value of scope/key and its length, or NULL when there is none.
 * Borrowed: valid until the next change to s. */
const void *hvd_store_get(const struct hvd_store *s, const char *scope,
                          const char *key, size_t *len);

/* A rank's DELETE of scope/key: finalize semantics above. */
void hvd_store_delete(struct hvd_store *s, const char *scope, const char *key);

/* Drop every value and every finished mark; declared scope sizes stay
 * (a new attempt of the same plan). */
void hvd_store_clear(struct hvd_store *s);

/* Bytes counted against the budget now; and entries (values) held. */
size_t hvd_store_bytes(const struct hvd_store *s);
size_t hvd_store_count(const struct hvd_store *s);

#endif
