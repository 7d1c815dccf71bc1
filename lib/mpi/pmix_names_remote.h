/* pmix_names_remote.h - MPI's published names and PMIx connect /
 * disconnect across nodes, through dlrun's broker: what pmix_names.h and
 * pmix_host_dyn.c do among the ranks of one node, for ranks on several.
 *
 * No libpmix and no threads: each call takes a broker client (the calling
 * thread's own; one request at a time) and the namespace's key prefix
 * ("pmix.NSPACE"), blocks at most until the deadline it is given (polling
 * stop between short waits, so that the end of a namespace cuts a wait
 * short), and returns a NAMES_* code of pmix_names.h, or -1 with err when
 * the broker fails, refuses, or holds a record that does not parse.
 *
 * Keys under PREFIX:
 *   .nm.KEY           the record of published KEY (names_record_format)
 *   .nm.KEY.n         its claim counter: the publish that takes it from 0
 *                     to 1 owns KEY (two at once: one wins, one is told
 *                     NAMES_DUPLICATE); unpublish gives it back
 *   .cx.OP.SET.SEQ.n  the nodes arrived at connect (OP 'c') or disconnect
 *                     ('d') number SEQ of the process set SET
 *   .cx.OP.SET.SEQ.go set by the node that arrives last
 * A record comes from whoever holds the token, not necessarily dlrun: it
 * is parsed strictly (tests/fuzz/fuzz_pmix_names_remote.c). */
#ifndef DLRUN_PMIX_NAMES_REMOTE_H
#define DLRUN_PMIX_NAMES_REMOTE_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"
#include "mpi/pmix_names.h"

struct client;

#define NAMES_SET_ID_LEN 32     /* names_set_id's text, with its NUL */

/* Stops a wait (1) or lets it go on (0); called between polls. */
typedef int (*names_stop_fn)(void *ctx);

/* A published name's record: "RANK TYPE ONCE NSPACE", a NUL, the value's
 * len bytes (ONCE: 1 when the name goes with its first read).  *out is
 * malloc'd (caller frees), *outlen its size.  0 / -1 (out of memory, or
 * nspace empty or longer than 255 bytes). */
int names_record_format(const char *nspace, uint32_t rank, int type,
                        int once, const void *val, size_t len, char **out,
                        size_t *outlen);

/* Parse record v (n bytes, borrowed; need not end in NUL) into h, whose
 * nspace and val then point into v (h->key is left alone): RANK at most
 * 4294967295, TYPE at most 65535, both plain decimal, ONCE 0 or 1,
 * NSPACE 1 to 255 bytes.  0 / -1 with err. */
int names_record_parse(const void *v, size_t n, struct names_hit *h,
                       struct err *err);

/* Publish key (1..200 bytes) for nspace:rank as the len bytes at val of
 * type; once: the first lookup that finds it takes it away.  NAMES_OK,
 * NAMES_DUPLICATE, or -1 with err. */
int names_remote_publish(struct client *c, const char *prefix,
                         const char *nspace, uint32_t rank, const char *key,
                         int type, int once, const void *val, size_t len,
                         struct err *err);

/* Unpublish key for nspace:rank.  NAMES_OK, NAMES_NOT_FOUND,
 * NAMES_NOT_OWNER (another process published it), or -1 with err. */
int names_remote_unpublish(struct client *c, const char *prefix,
                           const char *nspace, uint32_t rank,
                           const char *key, struct err *err);

/* What a lookup found: hits[i].key points into the keys given,
 * nspace and val into vals[i] (the broker's values).  Free with
 * names_found_free. */
struct names_found {
    struct names_hit *hits;
    void **vals;
    size_t n;
};

void names_found_free(struct names_found *f);

/* Look keys (NULL-terminated, at least one, borrowed until the found
 * are freed) up; a name published once is then unpublished (two lookups
 * at the same moment may both find it).  deadline_ms < 0: at once, the
 * keys there are; else wait
 * (clock_ms) until every key is published or deadline_ms passed.
 * NAMES_OK with out->n >= 1, NAMES_NOT_FOUND (none, or not all in time),
 * NAMES_CLEARED (stop said so), or -1 with err.  out is empty unless
 * NAMES_OK. */
int names_remote_lookup(struct client *c, const char *prefix,
                        char *const *keys, long deadline_ms,
                        names_stop_fn stop, void *ctx,
                        struct names_found *out, struct err *err);

/* The id of a process set: ranks (n, any order, borrowed) sorted, with
 * repeats dropped, hashed; every node computes the same for the same set.
 * out holds NAMES_SET_ID_LEN bytes. */
void names_set_id(const uint32_t *ranks, size_t n,
                  char out[NAMES_SET_ID_LEN]);

/* One node's arrival at the connect (op 'c') or disconnect ('d') number
 * seq of set, which nnodes nodes (this one included) take part in; wait
 * until every one arrived or deadline_ms (clock_ms; < 0: none) passed.
 * NAMES_OK, NAMES_TIMEOUT, NAMES_CLEARED (stop said so), or -1 with err. */
int names_remote_connect(struct client *c, const char *prefix, char op,
                         const char *set, unsigned seq, int nnodes,
                         long deadline_ms, names_stop_fn stop, void *ctx,
                         struct err *err);

#endif
