/* shquote.c - quoting values for a POSIX shell. */
#include "util/shquote.h"
#include "util/strv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* '~' is left out (tilde expansion at the start of a word), '=' and ':'
 * are in (harmless outside an assignment's first word). */
static const char bare_chars[] =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    "-_./:@%+=,";

int shquote_is_bare(const char *s)
{
    return s && *s && s[strspn(s, bare_chars)] == '\0';
}

int shquote_has_control(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; p && *p; p++)
        if ((*p < 0x20 && *p != '\t') || *p == 0x7f)
            return 1;
    return 0;
}

char *shquote(const char *s)
{
    size_t quotes = 0, len = strlen(s);
    char *out, *o;

    if (shquote_is_bare(s))
        return strdup(s);
    for (const char *p = s; *p; p++)
        quotes += *p == '\'';
    /* each ' becomes '\'' (4 bytes), plus the two outer quotes and NUL */
    out = malloc(len + 3 * quotes + 3);
    if (!out)
        return NULL;
    o = out;
    *o++ = '\'';
    for (const char *p = s; *p; p++) {
        if (*p == '\'') {
            memcpy(o, "'\\''", 4);
            o += 4;
        } else {
            *o++ = *p;
        }
    }
    *o++ = '\'';
    *o = '\0';
    return out;
}

char *shquote_join(char *const *argv)
{
    struct membuf b;
    FILE *m = membuf_open(&b);
    char *out;
    int ok = m != NULL;

    for (char *const *a = argv; ok && *a; a++) {
        char *w = shquote(*a);
        ok = w && fprintf(m, a == argv ? "%s" : " %s", w) >= 0;
        free(w);
    }
    out = m ? membuf_close(&b) : NULL;
    if (!ok) {
        free(out);
        return NULL;
    }
    return out;
}
