/* readall.h - a whole stream into memory, with a bound; a whole buffer
 * out to a file descriptor. */
#ifndef DLRUN_READALL_H
#define DLRUN_READALL_H

#include <stddef.h>
#include <stdio.h>

/* Read f to its end into a malloc'd buffer with a NUL after the data
 * (caller frees); *len gets the number of bytes.  NULL with errno set:
 * EFBIG when there are more than max bytes, else the read or allocation
 * error.  Memory grows with the data, never to max up front. */
char *read_all(FILE *f, size_t max, size_t *len);

/* Write all len bytes of buf to fd: on EAGAIN (a non-blocking fd) wait
 * for it in poll, retry on EINTR.  0, or -1 with errno.  The one
 * write-everything loop (the output engine, the relays, script files,
 * caches). */
int write_all(int fd, const void *buf, size_t len);

#endif
