/* pmix_names.h - the names MPI_Publish_name puts in the hosted PMIx
 * server, and the lookups that wait for one (PMIX_WAIT).
 *
 * A table of key -> (value, publisher), with the lookups still waiting
 * and their deadlines.  No locks, no threads, no clock and no libpmix:
 * the server (pmix_host.c) holds its lock around every call, passes the
 * time, and turns each answer into libpmix's callback.  Every lookup is
 * answered exactly once: at once, when a publish completes it, when its
 * deadline passes (names_expire), or when the table is cleared.
 */
#ifndef DLRUN_PMIX_NAMES_H
#define DLRUN_PMIX_NAMES_H

#include <stddef.h>
#include <stdint.h>

enum {
    NAMES_OK = 0,
    NAMES_NOT_FOUND,        /* lookup: none of the keys (in time) */
    NAMES_DUPLICATE,        /* publish: the key is taken */
    NAMES_NOT_OWNER,        /* unpublish: another process published it */
    NAMES_NOMEM,
    NAMES_CLEARED,          /* the table was cleared while waiting */
    NAMES_TIMEOUT           /* a connect across nodes: the deadline
                               passed (pmix_names_remote.h) */
};

struct pmix_names;

/* One key found: pointers into the table, valid during the answer only. */
struct names_hit {
    const char *key;
    int type;               /* the publisher's type code, kept as given */
    const void *val;        /* len bytes */
    size_t len;
    const char *nspace;     /* the publisher's */
    uint32_t rank;
    int once;               /* published to go with its first read
                               (PMIX_PERSIST_FIRST_READ) */
};

/* A lookup's answer: status NAMES_OK with nhits >= 1 hits (every key
 * asked for when the lookup waited), or an error with none. */
typedef void (*names_answer_fn)(void *ctx, int status,
                                const struct names_hit *hits, size_t nhits);

/* An empty table (caller frees with names_free), or NULL. */
struct pmix_names *names_new(void);

/* Answer every waiting lookup NAMES_CLEARED, then free; NULL is a no-op. */
void names_free(struct pmix_names *t);

/* Publish key = the len bytes at val, of type, for nspace:rank (all
 * copied); once: the first lookup that finds it takes it away
 * (PMIX_PERSIST_FIRST_READ: Open MPI publishes its connect/accept
 * exchanges so, and a server accepts again on the same port).  Lookups
 * that now have every key they wait for are answered before it returns.
 * NAMES_OK, NAMES_DUPLICATE (the key stays the first publisher's) or
 * NAMES_NOMEM. */
int names_publish(struct pmix_names *t, const char *nspace, uint32_t rank,
                  const char *key, int type, int once, const void *val,
                  size_t len);

/* Remove the keys (NULL-terminated; NULL: all) nspace:rank published.
 * NAMES_OK, or NAMES_NOT_OWNER / NAMES_NOT_FOUND for a named key another
 * process published or nobody did (the others are still removed). */
int names_unpublish(struct pmix_names *t, const char *nspace, uint32_t rank,
                    char *const *keys);

/* Look up keys (NULL-terminated, at least one; copied when it waits).
 * deadline_ms < 0: answer at once with the keys there are (NAMES_NOT_FOUND
 * when none).  Else wait until every key is published, or until
 * names_expire's now passes deadline_ms (then NAMES_NOT_FOUND).  answer
 * is called with ctx exactly once, perhaps before this returns.
 * 0, or -1 when out of memory (answer is then not called). */
int names_lookup(struct pmix_names *t, char *const *keys, long deadline_ms,
                 names_answer_fn answer, void *ctx);

/* Answer NAMES_NOT_FOUND to every lookup whose deadline is <= now_ms. */
void names_expire(struct pmix_names *t, long now_ms);

/* Lookups waiting now. */
size_t names_waiting(const struct pmix_names *t);

/* Forget every name and answer every waiting lookup NAMES_CLEARED (a
 * namespace ended: the next attempt starts with none). */
void names_clear(struct pmix_names *t);

#endif
