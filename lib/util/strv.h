/* strv.h - a growing NULL-terminated array of strings (an argv). */
#ifndef DLRUN_STRV_H
#define DLRUN_STRV_H

#include <stddef.h>
#include <stdio.h>

struct strv {
    char **v;           /* owned, NULL-terminated; NULL while empty */
    size_t n, cap;
    int failed;         /* an allocation failed: v is incomplete */
};

/* Append a printf-formatted copy; on failure set s->failed. */
void strv_addf(struct strv *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

void strv_free(struct strv *s);     /* frees members; s may be NULL */

/* A string written with stdio (open_memstream): membuf_open, fprintf to
 * the FILE, then membuf_close for the text.  One place that frees the
 * buffer when a write or the close failed. */
struct membuf {
    FILE *f;
    char *s;            /* the text once closed */
    size_t len;         /* its length once closed */
};

/* Start b (zeroed here); the stream to write to, or NULL when out of
 * memory (b holds nothing then). */
FILE *membuf_open(struct membuf *b);

/* Close b: its text (the caller's to free; b->len its length), or NULL
 * when out of memory or a write failed (nothing left to free). */
char *membuf_close(struct membuf *b);

#endif
