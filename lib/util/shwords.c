/* shwords.c - splitting one line of a job script into words (see
 * shwords.h). */
#include "util/shwords.h"

#include <stdlib.h>
#include <string.h>

/* The word being built. */
struct word {
    char *buf;
    size_t len, cap;
    int started;        /* quotes make a word even when empty */
};

static int add(struct word *w, char c)
{
    if (w->len + 2 > w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 64;
        char *b = realloc(w->buf, cap);

        if (!b)
            return -1;
        w->buf = b;
        w->cap = cap;
    }
    w->buf[w->len++] = c;
    w->buf[w->len] = '\0';
    w->started = 1;
    return 0;
}

static void finish(struct word *w, struct strv *out)
{
    if (w->started)
        strv_addf(out, "%s", w->len ? w->buf : "");
    w->len = 0;
    w->started = 0;
}

static int is_name(char c, int first)
{
    return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
           (!first && c >= '0' && c <= '9');
}

/* At s: '...'.  Returns the length taken, -1 unterminated. */
static long single(const char *s, struct word *w)
{
    const char *end = strchr(s + 1, '\'');

    if (!end)
        return -1;
    w->started = 1;
    for (const char *p = s + 1; p < end; p++)
        if (add(w, *p) < 0)
            return -2;
    return end - s + 1;
}

/* At s: "...". */
static long dquote(const char *s, struct word *w)
{
    const char *p = s + 1;

    w->started = 1;
    for (; *p && *p != '"'; p++) {
        if (*p == '`')
            return -3;
        if (*p == '\\' && p[1] && strchr("\"\\$`", p[1]))
            p++;
        if (add(w, *p) < 0)
            return -2;
    }
    return *p == '"' ? p - s + 1 : -1;
}

/* At s: $NAME, ${NAME} (nothing) or ${NAME+WORDS} (WORDS split into out
 * through depth + 1). */
static long dollar(const char *s, struct word *w, struct strv *out,
                   int depth, struct err *err);

static int split(const char *s, size_t len, struct strv *out, int depth,
                 struct err *err);

static long dollar(const char *s, struct word *w, struct strv *out,
                   int depth, struct err *err)
{
    const char *p = s + 1, *end;

    if (*p != '{') {
        if (!is_name(*p, 1))
            return -3;
        while (is_name(*p, 0))
            p++;
        return p - s;
    }
    if (!is_name(*++p, 1))
        return -3;
    while (is_name(*p, 0))
        p++;
    if (*p == '}')
        return p - s + 1;
    if (*p != '+' || !(end = strchr(p, '}')))
        return -3;
    finish(w, out);
    if (split(p + 1, (size_t)(end - p - 1), out, depth + 1, err) < 0)
        return -4;
    return end - s + 1;
}

static int fail(long rc, struct err *err)
{
    if (rc == -4)
        return -1;
    return err_set(err, rc == -1 ? "an unterminated quote or ${" :
                   rc == -2 ? "out of memory" :
                   "shell syntax dlrun script does not write (` $( ; | & < > "
                   "or an expansion other than ${NAME} and ${NAME+WORDS})");
}

static int split(const char *s, size_t len, struct strv *out, int depth,
                 struct err *err)
{
    struct word w = { NULL, 0, 0, 0 };
    size_t i = 0;
    long rc = 0;

    if (depth > 4)
        return err_set(err, "${...} nested too deep");
    while (i < len && rc >= 0) {
        char c = s[i];

        if (c == ' ' || c == '\t') {
            finish(&w, out);
            rc = 1;
        } else if (c == '#' && !w.started) {
            break;
        } else if (c == '\'') {
            rc = single(s + i, &w);
        } else if (c == '"') {
            rc = dquote(s + i, &w);
        } else if (c == '$') {
            rc = dollar(s + i, &w, out, depth, err);
        } else if (c == '\\' && i + 1 < len) {
            rc = add(&w, s[i + 1]) < 0 ? -2 : 2;
        } else if (strchr("`;|&<>(){}\\", c)) {
            rc = -3;
        } else {
            rc = add(&w, c) < 0 ? -2 : 1;
        }
        if (rc > 0)
            i += (size_t)rc;
    }
    /* a quote or ${ that ends past len (inside ${...+...}) is unterminated */
    if (rc >= 0 && i > len)
        rc = -1;
    if (rc >= 0)
        finish(&w, out);
    free(w.buf);
    return rc < 0 ? fail(rc, err) : out->failed ? err_set(err, "out of memory")
                                                : 0;
}

int shwords_split(const char *line, struct strv *out, struct err *err)
{
    size_t len = strlen(line);

    if (len > SHWORDS_MAX_LINE)
        return err_set(err, "a line over %d bytes", SHWORDS_MAX_LINE);
    return split(line, len, out, 0, err);
}
