/* hostfile.c - parsing -H lists and host files into allocation nodes. */
#include "hostfile.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"

#define SLOTS_MAX 65536

static int parse_slots(const char *s, size_t len, int *out)
{
    char buf[16];
    char *end = NULL;
    long n;

    if (len == 0 || len >= sizeof buf)
        return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    if (!isdigit((unsigned char)buf[0]))
        return -1;
    errno = 0;
    n = strtol(buf, &end, 10);
    if (errno || *end || n < 1 || n > SLOTS_MAX)
        return -1;
    *out = (int)n;
    return 0;
}

/* Add every host of NAME (itself maybe a bracketed hostlist) with slots. */
static int add_hosts(struct alloc *a, const char *name, int slots,
                     struct err *err)
{
    char **hosts = NULL;
    size_t n = 0;
    int rc = -1;

    if (hostlist_expand(name, &hosts, &n, err) < 0)
        goto out;
    for (size_t i = 0; i < n; i++)
        if (alloc_add_node(a, hosts[i], slots, 1, err) < 0)
            goto out;
    rc = 0;
out:
    hostlist_free(hosts, n);
    return rc;
}

/* One "name[:slots]" item, len bytes at item.  The caller puts where it
 * came from ("-H", "file:line") before a message. */
static int hosts_item(const char *item, size_t len, struct alloc *a,
                      struct err *err)
{
    char *name = strndup(item, len);
    char *colon = NULL;
    int slots = 1, rc = -1;

    if (!name)
        return err_set(err, "out of memory");
    colon = strrchr(name, ':');
    if (colon && !strchr(colon, ']')) {
        if (parse_slots(colon + 1, strlen(colon + 1), &slots) < 0) {
            err_set(err, "%s: slots after ':' must be a number from 1 to %d "
                    "(write host:4)", name, SLOTS_MAX);
            goto out;
        }
        *colon = '\0';
    }
    if (!*name) {
        err_set(err, "empty host name before ':' (write host:4)");
        goto out;
    }
    rc = add_hosts(a, name, slots, err);
out:
    free(name);
    return rc;
}

int hosts_parse(const char *list, struct alloc *a, struct err *err)
{
    const char *p = list, *start = list;
    int depth = 0;

    for (;; p++) {
        if (*p == '[')
            depth++;
        else if (*p == ']')
            depth--;
        if ((*p == ',' && depth == 0) || *p == '\0') {
            if (p == start && *p == ',')
                return err_set(err, "-H %s: empty entry between commas", list);
            if (p > start && hosts_item(start, (size_t)(p - start), a, err) < 0)
                return err_prefix(err, "-H");
            start = p + 1;
        }
        if (*p == '\0')
            break;
    }
    if (a->nnodes == 0)
        return err_set(err, "-H: no hosts given (write -H host1:4,host2:4)");
    return 0;
}

/* "slots=4", "max_slots=8", "max-slots=8" after the host name. */
static int hostfile_key(const char *tok, size_t len, int *slots)
{
    const char *eq = memchr(tok, '=', len);
    size_t klen = eq ? (size_t)(eq - tok) : len;
    int v;

    if (!eq || parse_slots(eq + 1, len - klen - 1, &v) < 0)
        return -1;
    if (klen == 5 && strncmp(tok, "slots", 5) == 0)
        *slots = v;
    else if (klen == 9 && (strncmp(tok, "max_slots", 9) == 0 ||
                           strncmp(tok, "max-slots", 9) == 0))
        ; /* a ceiling for oversubscription: ranks never exceed slots here */
    else
        return -1;
    return 0;
}

static size_t token_len(const char *p)
{
    size_t n = 0;

    while (p[n] && !isspace((unsigned char)p[n]))
        n++;
    return n;
}

/* One line (NUL-terminated, comment already cut). */
static int hostfile_line(char *line, const char *path, int lineno,
                         struct alloc *a, struct err *err)
{
    char *p = line, *name;
    size_t len;
    int slots = 1;

    while (isspace((unsigned char)*p))
        p++;
    if (!*p)
        return 0;
    name = p;
    len = token_len(p);
    p += len;
    if (*p)
        *p++ = '\0';
    for (;;) {
        while (isspace((unsigned char)*p))
            p++;
        if (!*p)
            break;
        len = token_len(p);
        if (hostfile_key(p, len, &slots) < 0)
            return err_set(err, "%s:%d:%d: '%.*s' not understood: expected "
                           "slots=N or max_slots=N after the host name", path,
                           lineno, (int)(p - line) + 1, (int)len, p);
        p += len;
    }
    if (strchr(name, ':') && !strchr(strrchr(name, ':'), ']'))
        return hosts_item(name, strlen(name), a, err) < 0 ?
               err_prefix(err, "%s:%d", path, lineno) : 0;
    return add_hosts(a, name, slots, err) < 0 ?
           err_prefix(err, "%s:%d", path, lineno) : 0;
}

int hostfile_parse(const char *text, const char *path, struct alloc *a,
                   struct err *err)
{
    char *copy = strdup(text), *line, *next, *hash;
    int lineno = 1, rc = -1;

    if (!copy)
        return err_set(err, "out of memory");
    for (line = copy; line; line = next, lineno++) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        if (hostfile_line(line, path, lineno, a, err) < 0)
            goto out;
    }
    rc = 0;
    if (a->nnodes == 0)
        rc = err_set(err, "%s: no hosts in the file (one per line: "
                     "\"host slots=4\" or \"host:4\")", path);
out:
    free(copy);
    return rc;
}
