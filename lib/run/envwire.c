/* envwire.c - see envwire.h. */
#include "run/envwire.h"
#include "util/strv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

#define PREFIX_LEN (sizeof ENVWIRE_PREFIX - 1)

int envwire_travels(const char *entry, size_t namelen)
{
    return (namelen == 12 && strncmp(entry, "DLRUN_BROKER", 12) == 0) ||
           (namelen == 11 && strncmp(entry, "DLRUN_TOKEN", 11) == 0) ||
           (namelen > PREFIX_LEN &&
            strncmp(entry, ENVWIRE_PREFIX, PREFIX_LEN) == 0);
}

static const char *env_value(char **envp, const char *name)
{
    size_t n = strlen(name);

    for (; envp && *envp; envp++)
        if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
            return *envp + n + 1;
    return NULL;
}

int envwire_put_export(struct envset *out, const char *entry, char **envp,
                       struct err *err)
{
    const char *eq = strchr(entry, '='), *value;
    size_t n = eq ? (size_t)(eq - entry) : strlen(entry);
    char *name = malloc(PREFIX_LEN + n + 1);
    int rc;

    if (!name)
        return err_set(err, "out of memory");
    memcpy(name, ENVWIRE_PREFIX, PREFIX_LEN);
    memcpy(name + PREFIX_LEN, entry, n);
    name[PREFIX_LEN + n] = '\0';
    value = eq ? eq + 1 : env_value(envp, name + PREFIX_LEN);
    rc = !value ? 0 : envset_set(out, name, value, err, "-x") < 0 ? -1 : 1;
    free(name);
    return rc;
}

/* Append x (borrowed) to the NULL-terminated list. */
static int list_add(char ***v, int *n, char *x)
{
    char **nv = realloc(*v, (size_t)(*n + 2) * sizeof *nv);

    if (!nv)
        return -1;
    nv[(*n)++] = x;
    nv[*n] = NULL;
    *v = nv;
    return 0;
}

int envwire_take_exports(char ***exports, int *n, struct strv *owned,
                         struct err *err)
{
    struct strv names = { 0 };
    size_t first = owned->n;
    int rc = -1;

    for (char **e = environ; e && *e; e++) {
        const char *eq = strchr(*e, '=');
        if (!eq || (size_t)(eq - *e) <= PREFIX_LEN ||
            strncmp(*e, ENVWIRE_PREFIX, PREFIX_LEN) != 0)
            continue;
        strv_addf(owned, "%s", *e + PREFIX_LEN);
        strv_addf(&names, "%.*s", (int)(eq - *e), *e);
    }
    if (owned->failed || names.failed)
        goto out;
    /* after the walk: unsetenv moves environ's entries */
    for (size_t i = 0; i < names.n; i++)
        unsetenv(names.v[i]);
    for (size_t i = first; i < owned->n; i++)
        if (list_add(exports, n, owned->v[i]) < 0)
            goto out;
    rc = 0;
out:
    strv_free(&names);
    return rc < 0 ? err_set(err, "out of memory") : 0;
}

/* Append entry escaped, and a newline, to m. */
static void put_line(FILE *m, const char *entry)
{
    for (const char *p = entry; *p; p++) {
        if (*p == '\\')
            fputs("\\\\", m);
        else if (*p == '\n')
            fputs("\\n", m);
        else
            fputc(*p, m);
    }
    fputc('\n', m);
}

char *envwire_encode(char **envp, size_t *len)
{
    struct membuf b;
    FILE *m = membuf_open(&b);
    char *text;

    if (!m)
        return NULL;
    for (; envp && *envp; envp++) {
        const char *eq = strchr(*envp, '=');
        if (eq && envwire_travels(*envp, (size_t)(eq - *envp)))
            put_line(m, *envp);
    }
    fputc('\n', m);
    text = membuf_close(&b);
    *len = b.len;
    return text;
}

/* One decoded byte into the entry being read. */
static int dec_put(struct envwire_dec *d, char c, struct err *err)
{
    if (d->len + 2 > ENVWIRE_ENTRY_MAX)
        return err_set(err, "an entry longer than %d bytes",
                       ENVWIRE_ENTRY_MAX);
    if (d->len + 2 > d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 256;
        char *b = realloc(d->buf, cap);
        if (!b)
            return err_set(err, "out of memory");
        d->buf = b;
        d->cap = cap;
    }
    d->buf[d->len++] = c;
    return 0;
}

/* A whole line read: 1 at the end (an empty line), else the entry kept. */
static int dec_line(struct envwire_dec *d, struct err *err)
{
    char *eq;

    if (d->len == 0)
        return 1;
    d->buf[d->len] = '\0';
    eq = strchr(d->buf, '=');
    if (!eq || eq == d->buf)
        return err_set(err, "an entry without NAME=");
    strv_addf(&d->out, "%s", d->buf);
    d->len = 0;
    return d->out.failed ? err_set(err, "out of memory") : 0;
}

/* One byte of the stream: 1 at the end, 0 more, -1 with err. */
static int dec_byte(struct envwire_dec *d, char c, struct err *err)
{
    if (++d->total > ENVWIRE_TOTAL_MAX)
        return err_set(err, "more than %d bytes", ENVWIRE_TOTAL_MAX);
    if (c == '\0')
        return err_set(err, "a NUL byte");
    if (d->esc) {
        d->esc = 0;
        if (c != '\\' && c != 'n')
            return err_set(err, "a bad escape '\\%c'", c);
        return dec_put(d, c == 'n' ? '\n' : '\\', err);
    }
    if (c == '\\') {
        d->esc = 1;
        return 0;
    }
    return c == '\n' ? dec_line(d, err) : dec_put(d, c, err);
}

int envwire_feed(struct envwire_dec *d, const void *data, size_t len,
                 size_t *used, struct err *err)
{
    const char *p = data;

    for (size_t i = 0; i < len; i++) {
        int rc = dec_byte(d, p[i], err);
        *used = i + 1;
        if (rc != 0)
            return rc;
    }
    *used = len;
    return 0;
}

void envwire_dec_free(struct envwire_dec *d)
{
    if (!d)
        return;
    strv_free(&d->out);
    free(d->buf);
    memset(d, 0, sizeof *d);
}

int envwire_read(int fd, struct strv *out, struct err *err)
{
    struct envwire_dec d = { 0 };
    int rc = 0;

    while (rc == 0) {
        char c;
        size_t used;
        ssize_t n = read(fd, &c, 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = err_set(err, "cannot read: %s", strerror(errno));
            break;
        }
        if (n == 0) {
            rc = err_set(err, "it ended before its empty last line");
            break;
        }
        rc = envwire_feed(&d, &c, 1, &used, err);
    }
    if (rc == 1) {
        *out = d.out;
        memset(&d.out, 0, sizeof d.out);
        rc = 0;
    }
    envwire_dec_free(&d);
    return rc;
}
