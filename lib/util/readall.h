/* readall.h - a whole stream into memory, with a bound. */
#ifndef DLRUN_READALL_H
#define DLRUN_READALL_H

#include <stddef.h>
#include <stdio.h>

/* Read f to its end into a malloc'd buffer with a NUL after the data
 * (caller frees); *len gets the number of bytes.  NULL with errno set:
 * EFBIG when there are more than max bytes, else the read or allocation
 * error.  Memory grows with the data, never to max up front. */
char *read_all(FILE *f, size_t max, size_t *len);

#endif
