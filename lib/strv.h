/* strv.h - a growing NULL-terminated array of strings (an argv). */
#ifndef DLRUN_STRV_H
#define DLRUN_STRV_H

#include <stddef.h>

struct strv {
    char **v;           /* owned, NULL-terminated; NULL while empty */
    size_t n, cap;
    int failed;         /* an allocation failed: v is incomplete */
};

/* Append a printf-formatted copy; on failure set s->failed. */
void strv_addf(struct strv *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

void strv_free(struct strv *s);     /* frees members; s may be NULL */

#endif
