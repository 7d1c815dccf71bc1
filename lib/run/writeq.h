/* writeq.h - a thread that writes buffers to file descriptors in the order
 * they were queued.
 *
 * The output engine reads the ranks' pipes and formats lines on the
 * supervising thread; copying the lines into the console (a file, a pipe)
 * is the larger part of the work, and here it runs beside it: on two cores
 * both go at once.  A small ring of buffers bounds the memory and makes a
 * slow console slow down the reading (and so the ranks), never lose data.
 */
#ifndef DLRUN_WRITEQ_H
#define DLRUN_WRITEQ_H

#include <stddef.h>

#include "util/err.h"

struct writeq;

/* nbufs buffers of size bytes and the thread.  Caller frees with
 * writeq_destroy.  NULL with err. */
struct writeq *writeq_create(size_t size, int nbufs, struct err *err);

/* An empty buffer (size bytes) to fill, waiting while all are queued.
 * Borrowed until the next writeq_submit. */
char *writeq_buffer(struct writeq *q);

/* Queue the first len bytes of the buffer writeq_buffer gave to be written
 * to fd (len may be 0: the buffer is given back). */
void writeq_submit(struct writeq *q, int fd, size_t len);

/* The errno of the first write that failed since the last call or flush,
 * 0 if none; does not wait. */
int writeq_failed(struct writeq *q);

/* Wait until everything queued is written.  0, or -1 with errno set to
 * the first write error since the last flush. */
int writeq_flush(struct writeq *q);

/* Flush, stop the thread, free.  NULL is a no-op. */
void writeq_destroy(struct writeq *q);

#endif
