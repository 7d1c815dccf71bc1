/* envset.c - see envset.h. */
#include "util/envset.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct envvar *find(const struct envset *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i].name, name) == 0)
            return &s->v[i];
    return NULL;
}

static struct envvar *slot(struct envset *s, const char *name)
{
    struct envvar *e = find(s, name), *v;

    if (e)
        return e;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 32;
        v = realloc(s->v, cap * sizeof *v);
        if (!v)
            return NULL;
        s->v = v;
        s->cap = cap;
    }
    e = &s->v[s->n];
    memset(e, 0, sizeof *e);
    e->name = strdup(name);
    if (!e->name)
        return NULL;
    e->namelen = strlen(name);
    s->n++;
    return e;
}

static int set_va(struct envset *s, const char *name, const char *value,
                  struct err *err, const char *fmt, va_list ap)
{
    struct envvar *e = slot(s, name);
    char *v = NULL, *from = NULL;

    if (!e || !(v = strdup(value)) ||
        (!s->no_from && vasprintf(&from, fmt, ap) < 0)) {
        free(v);
        return err_set(err, "out of memory");
    }
    free(e->value);
    free(e->from);
    e->value = v;
    e->from = from;
    return 0;
}

int envset_set(struct envset *s, const char *name, const char *value,
               struct err *err, const char *from_fmt, ...)
{
    va_list ap;
    int rc;

    va_start(ap, from_fmt);
    rc = set_va(s, name, value, err, from_fmt, ap);
    va_end(ap);
    return rc;
}

int envset_setint(struct envset *s, const char *name, long value,
                  struct err *err, const char *from_fmt, ...)
{
    char buf[32];
    va_list ap;
    int rc;

    snprintf(buf, sizeof buf, "%ld", value);
    va_start(ap, from_fmt);
    rc = set_va(s, name, buf, err, from_fmt, ap);
    va_end(ap);
    return rc;
}

const char *envset_get(const struct envset *s, const char *name)
{
    struct envvar *e = find(s, name);

    return e ? e->value : NULL;
}

void envset_free(struct envset *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++) {
        free(s->v[i].name);
        free(s->v[i].value);
        free(s->v[i].from);
    }
    free(s->v);
    memset(s, 0, sizeof *s);
}

static int in_set(const struct envset *s, const char *entry)
{
    size_t len = strchrnul(entry, '=') - entry;

    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].namelen == len && memcmp(s->v[i].name, entry, len) == 0)
            return 1;
    return 0;
}

/* Bytes of the strings envset_envp copies: base entries the set does not
 * replace, then NAME=VALUE of each variable; keep[i] says which base
 * entries stay. */
static size_t envp_bytes(const struct envset *s, char **base, size_t nbase,
                         char *keep)
{
    size_t bytes = 0;

    for (size_t i = 0; i < nbase; i++)
        if ((keep[i] = !in_set(s, base[i])))
            bytes += strlen(base[i]) + 1;
    for (size_t i = 0; i < s->n; i++)
        bytes += s->v[i].namelen + strlen(s->v[i].value) + 2;
    return bytes;
}

char **envset_envp(const struct envset *s, char **base)
{
    size_t nbase = 0, k = 0, bytes, ptrs;
    char **out = NULL, *keep, *at;

    while (base && base[nbase])
        nbase++;
    keep = malloc(nbase + 1);
    if (!keep)
        return NULL;
    bytes = envp_bytes(s, base, nbase, keep);
    ptrs = (nbase + s->n + 1) * sizeof *out;
    out = malloc(ptrs + bytes);
    if (out) {
        at = (char *)out + ptrs;
        for (size_t i = 0; i < nbase; i++)
            if (keep[i])
                at = stpcpy(out[k++] = at, base[i]) + 1;
        for (size_t i = 0; i < s->n; i++) {
            at = stpcpy(stpcpy(out[k++] = at, s->v[i].name), "=");
            at = stpcpy(at, s->v[i].value) + 1;
        }
        out[k] = NULL;
    }
    free(keep);
    return out;
}

void envset_free_envp(char **envp)
{
    free(envp);
}
