/* err.h - the error struct every library function fills on failure.
 *
 * Library code never prints: it returns -1 or NULL and leaves one line of
 * text here (what, where, how to fix).  Only cmd/ shows it to the user.
 */
#ifndef DLRUN_ERR_H
#define DLRUN_ERR_H

#include <stdarg.h>
#include <stddef.h>

#define ERR_MSG_MAX 512

struct err {
    char msg[ERR_MSG_MAX];
};

/* Fill err (may be NULL) from a printf format; always returns -1 so that
 * callers can write `return err_set(err, ...);`. */
int err_set(struct err *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Prefix the message already in err with "prefix: " (context from a caller). */
int err_prefix(struct err *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* len bytes of s (user text) to quote in a one-line message: bytes that
 * do not print become '?', and text past max bytes ends in "...".  buf
 * holds max + 4 bytes; returns buf. */
const char *err_quote(char *buf, size_t max, const char *s, size_t len);

#endif
