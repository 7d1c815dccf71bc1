/* strv.c - see strv.h.  Errors are sticky (s->failed) so that callers
 * build a whole argv and check once. */
#include "util/strv.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void strv_addf(struct strv *s, const char *fmt, ...)
{
    va_list ap;
    char *str = NULL;

    if (s->failed)
        return;
    if (s->n + 2 > s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        char **v = realloc(s->v, cap * sizeof *v);
        if (!v) {
            s->failed = 1;
            return;
        }
        s->v = v;
        s->cap = cap;
    }
    va_start(ap, fmt);
    if (vasprintf(&str, fmt, ap) < 0)
        s->failed = 1;
    va_end(ap);
    if (s->failed)
        return;
    s->v[s->n++] = str;
    s->v[s->n] = NULL;
}

void strv_free(struct strv *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof *s);
}

FILE *membuf_open(struct membuf *b)
{
    b->s = NULL;
    b->len = 0;
    b->f = open_memstream(&b->s, &b->len);
    return b->f;
}

char *membuf_close(struct membuf *b)
{
    int failed = ferror(b->f);

    if (fclose(b->f) != 0 || failed) {
        free(b->s);
        b->s = NULL;
        b->len = 0;
    }
    b->f = NULL;
    return b->s;
}
