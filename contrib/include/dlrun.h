/* dlrun.h - the rendezvous broker of dlrun, for programs that run as ranks.
 *
 * dlrun starts a broker for each multi-node job and gives every rank its
 * address and secret in DLRUN_BROKER and DLRUN_TOKEN; `dlrun broker` runs
 * one by hand.  Through it ranks share small values, count, meet at
 * barriers and agree on an NCCL unique id.  See dlrun-broker(7).
 *
 * Conventions (stable across dlrun versions):
 *  - Functions return DLRUN_OK (0) or a negative DLRUN_* code; the
 *    reason, in one line, is then in dlrun_last_error().
 *  - Keys and barrier names are C strings of 1 to 256 bytes; values are
 *    bytes, at most 1 MiB unless the broker says otherwise.
 *  - Timeouts are milliseconds: 0 = do not wait, DLRUN_FOREVER = no limit.
 *  - A dlrun_kv is one connection, for one thread at a time.
 *  - Buffers returned to you are malloc'd: free them with free().
 *    Strings from dlrun_last_error() belong to the library.
 */
#ifndef DLRUN_H
#define DLRUN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DLRUN_FOREVER (-1)
#define DLRUN_NCCL_ID_BYTES 128     /* sizeof(ncclUniqueId) */

enum {
    DLRUN_OK = 0,
    DLRUN_ERROR = -1,       /* no broker, connection lost, bad argument */
    DLRUN_TIMEOUT = -2,     /* get or barrier: the timeout passed */
    DLRUN_NOTFOUND = -3,    /* get without waiting, del: no such key */
    DLRUN_REFUSED = -4      /* the broker refused: invalid or full */
};

typedef struct dlrun_kv dlrun_kv;

/* The reason for the last failure in this thread; owned by the library,
 * valid until the next dlrun_* call in this thread. */
const char *dlrun_last_error(void);

/* Connect to the broker in DLRUN_BROKER with DLRUN_TOKEN (waiting up to
 * 30 s for it to accept).  Close with dlrun_kv_close().  NULL on failure. */
dlrun_kv *dlrun_kv_connect(void);

/* Connect to broker ("HOST:PORT") with token (32 hex digits), both
 * borrowed, waiting up to timeout_ms.  NULL on failure. */
dlrun_kv *dlrun_kv_connect_to(const char *broker, const char *token,
                              int timeout_ms);

/* Close and free kv; NULL is a no-op. */
void dlrun_kv_close(dlrun_kv *kv);

/* Set key to len bytes at value (copied). */
int dlrun_kv_put(dlrun_kv *kv, const char *key, const void *value, size_t len);

/* Get key, waiting up to timeout_ms for it to be set.  On DLRUN_OK,
 * *value is a malloc'd copy (NUL-terminated past *len; free() it) and *len
 * its size. */
int dlrun_kv_get(dlrun_kv *kv, const char *key, int timeout_ms, void **value,
                 size_t *len);

/* Add delta to the counter key (starting at 0) and store the new value in
 * *result (may be NULL).  dlrun_kv_get shows a counter as decimal text. */
int dlrun_kv_add(dlrun_kv *kv, const char *key, int64_t delta,
                 int64_t *result);

/* Wait until count ranks have called this with the same name.  After it
 * releases, the same name starts a new round. */
int dlrun_kv_barrier(dlrun_kv *kv, const char *name, unsigned count,
                     int timeout_ms);

/* Delete key. */
int dlrun_kv_del(dlrun_kv *kv, const char *key);

/* Fill id (DLRUN_NCCL_ID_BYTES, i.e. an ncclUniqueId) with the id of the
 * communicator called name, the same in every rank that calls this with
 * that name: the first caller creates it with ncclGetUniqueId (from
 * libnccl.so.2, or the library named by DLRUN_NCCL_LIBRARY) and publishes
 * it, the others wait for it (up to 10 minutes).  Use a new name for each
 * communicator (and each restart of the job).  Connects with
 * dlrun_kv_connect() for the call. */
int dlrun_nccl_unique_id(const char *name, void *id);

/* Tell dlrun this rank is making progress (adds 1 to the counter
 * "dlrun.progress", and to "dlrun.progress.RANK" of this rank, DLRUN_RANK):
 * under --stall-timeout a job whose ranks report progress is not stalled
 * even when they print nothing and use no CPU (waiting on I/O, a GPU, a
 * remote service); called once a step, it gives the step rates `dlrun
 * status` ranks and --straggler-factor judges.  Cheap enough for every
 * step; safe from any thread.  The first call connects with
 * dlrun_kv_connect() and keeps the connection; after a failure the next
 * call connects again. */
int dlrun_progress(void);

#ifdef __cplusplus
}
#endif

#endif
