/* hostfile.c - parsing -H lists and host files into allocation nodes.
 *
 * Host files follow Open MPI's hostfile reader (orte/util/hostfile, and
 * PRRTE's after it): '#' and '//' start a comment that ends with the line,
 * '/' '*' one that ends at '*' '/'; "key = value" may have blanks around
 * '='; slots (count, cpu), max_slots (max-slots, slots_max, slots-max) and
 * username (user-name, user_name) are the keys dlrun reads.  Where Open
 * MPI quietly guesses, dlrun refuses (see hostfile.h).
 */
#include "where/hostfile.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "where/hostlist.h"
#include "where/hostname.h"

#define SLOTS_MAX 65536
#define KEYS_WANTED "expected slots=N, max_slots=N or username=NAME after " \
    "the host name"

/* "[login@]NAME[:N]" taken apart.  name is a Slurm hostlist, or one IPv6
 * address ("[fe80::1]:4" in brackets, or bare and then without ":N"). */
struct entry {
    char *login;        /* owned or NULL */
    char *name;         /* owned */
    int ipv6;
    int slots;          /* from ":N", 0 when none */
};

/* What a host file said about each node so far (index = node index). */
struct seen {
    int *line;          /* the line that first named it, 0 = not yet */
    int *given;         /* slots given there, 0 for a bare name */
    size_t cap;
};

static void entry_free(struct entry *e)
{
    free(e->login);
    free(e->name);
    memset(e, 0, sizeof *e);
}

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

static int bad_slots(const char *text, size_t len, struct err *err)
{
    return err_set(err, "%.*s: slots after ':' must be a number from 1 to %d "
                   "(write host:4)", (int)len, text, SLOTS_MAX);
}

/* The host part (after any "login@"), len bytes at h, into e. */
static int split_host(const char *h, size_t len, struct entry *e,
                      struct err *err)
{
    const char *close = h[0] == '[' ? memchr(h, ']', len) : NULL;
    const char *colon = memrchr(h, ':', len);
    size_t nlen = len;

    if (close && memchr(h, ':', (size_t)(close - h))) {     /* [v6][:N] */
        size_t rest = len - (size_t)(close + 1 - h);
        e->ipv6 = 1;
        if (rest && (close[1] != ':' ||
                     parse_slots(close + 2, rest - 1, &e->slots) < 0))
            return bad_slots(h, len, err);
        e->name = strndup(h + 1, (size_t)(close - h - 1));
    } else if (colon && memchr(h, ':', (size_t)(colon - h))) {
        e->ipv6 = 1;                    /* bare IPv6: no ":N" after it */
        e->name = strndup(h, len);
    } else {
        if (colon && !memchr(colon, ']', len - (size_t)(colon - h))) {
            if (parse_slots(colon + 1, len - (size_t)(colon + 1 - h),
                            &e->slots) < 0)
                return bad_slots(h, len, err);
            nlen = (size_t)(colon - h);
        }
        if (nlen == 0)
            return err_set(err, "empty host name before ':' (write host:4)");
        e->name = strndup(h, nlen);
    }
    return e->name ? 0 : err_set(err, "out of memory");
}

/* "[login@]NAME[:N]", len bytes at text, into e (zeroed; the caller
 * frees it with entry_free whatever this returns). */
static int split_entry(const char *text, size_t len, struct entry *e,
                       struct err *err)
{
    const char *at = memchr(text, '@', len);

    if (at) {
        size_t llen = (size_t)(at - text);
        if (hostname_check_login(text, llen, err) < 0)
            return -1;
        if (!(e->login = strndup(text, llen)))
            return err_set(err, "out of memory");
        len -= llen + 1;
        text = at + 1;
    }
    if (len == 0)
        return err_set(err, "no host name after '@' (write user@host)");
    return split_host(text, len, e, err);
}

/* Give node i the login of e; a host cannot have two. */
static int set_login(struct alloc *a, size_t i, const char *login,
                     struct err *err)
{
    struct alloc_node *n = &a->nodes[i];

    if (!login)
        return 0;
    if (n->login && strcmp(n->login, login) != 0)
        return err_set(err, "host %s: login %s and login %s; give each host "
                       "one login", n->name, n->login, login);
    if (!n->login && !(n->login = strdup(login)))
        return err_set(err, "out of memory");
    return 0;
}

/* Call fn for every host that e names (its hostlist expanded). */
static int each_host(const struct entry *e,
                     int (*fn)(const char *host, void *arg, struct err *err),
                     void *arg, struct err *err)
{
    char **hosts = NULL;
    size_t n = 0;
    int rc = -1;

    if (e->ipv6)
        return fn(e->name, arg, err);
    if (hostlist_expand(e->name, &hosts, &n, err) < 0)
        goto out;
    for (size_t i = 0; i < n; i++)
        if (fn(hosts[i], arg, err) < 0)
            goto out;
    rc = 0;
out:
    hostlist_free(hosts, n);
    return rc;
}

/* -H: a repeated name adds its slots (as mpirun's -H does). */
struct h_arg {
    struct alloc *a;
    const struct entry *e;
};

static int h_add(const char *host, void *arg, struct err *err)
{
    struct h_arg *h = arg;
    int i = alloc_add_node(h->a, host, h->e->slots ? h->e->slots : 1, 1, err);

    return i < 0 ? -1 : set_login(h->a, (size_t)i, h->e->login, err);
}

/* One "[login@]name[:slots]" item of -H, len bytes at item. */
static int hosts_item(const char *item, size_t len, struct alloc *a,
                      struct err *err)
{
    struct entry e = { 0 };
    struct h_arg h = { a, &e };
    int rc = split_entry(item, len, &e, err);

    if (rc == 0)
        rc = each_host(&e, h_add, &h, err);
    entry_free(&e);
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

/* ---- host files ---- */

/* One line's facts: the entry and the keys after it. */
struct line {
    const char *path;
    int no;
    struct entry e;
    int slots, max_slots;       /* 0 = not given */
    struct seen *seen;
    struct alloc *a;
};

/* The slots line l gives each of its hosts, 0 for a bare name. */
static int line_slots(const struct line *l)
{
    if (l->e.slots)
        return l->e.slots;
    return l->slots ? l->slots : l->max_slots;
}

static int seen_grow(struct seen *s, size_t n, struct err *err)
{
    size_t cap = s->cap ? s->cap : 64;
    int *line, *given;

    if (n <= s->cap)
        return 0;
    while (cap < n)
        cap *= 2;
    line = realloc(s->line, cap * sizeof *line);
    if (line)
        s->line = line;
    given = line ? realloc(s->given, cap * sizeof *given) : NULL;
    if (!given)
        return err_set(err, "out of memory");
    s->given = given;
    memset(s->line + s->cap, 0, (cap - s->cap) * sizeof *line);
    s->cap = cap;
    return 0;
}

/* "slots=4" or "no slots" for messages. */
static const char *slots_words(char *buf, size_t size, int given)
{
    if (given)
        snprintf(buf, size, "slots=%d", given);
    else
        snprintf(buf, size, "no slots (one per line)");
    return buf;
}

/* A host of a line: a bare name repeated adds a slot (PBS style); a host
 * given slots twice must be given the same (Open MPI would add them up,
 * which quietly changes the world size). */
static int hf_add(const char *host, void *arg, struct err *err)
{
    struct line *l = arg;
    int given = line_slots(l), i = alloc_add_node(l->a, host, 0, 1, err);
    struct seen *s = l->seen;
    char was[48], now[48];

    if (i < 0 || seen_grow(s, l->a->nnodes, err) < 0)
        return -1;
    if (!s->line[i]) {
        s->line[i] = l->no;
        s->given[i] = given;
        l->a->nodes[i].slots = given ? given : 1;
    } else if (!given && !s->given[i]) {
        l->a->nodes[i].slots++;
    } else if (given != s->given[i]) {
        return err_set(err, "host %s has %s here but %s at line %d; give "
                       "each host once, with all its slots", host,
                       slots_words(now, sizeof now, given),
                       slots_words(was, sizeof was, s->given[i]), s->line[i]);
    }
    return set_login(l->a, (size_t)i, l->e.login, err);
}

/* The value of one key (v, vlen bytes) into l. */
static int hf_key(struct line *l, const char *k, size_t klen, const char *v,
                  size_t vlen, struct err *err)
{
    static const char *const slot_keys[] = { "slots", "count", "cpu", NULL };
    static const char *const max_keys[] = {
        "max_slots", "max-slots", "slots_max", "slots-max", NULL };
    static const char *const user_keys[] = {
        "username", "user-name", "user_name", NULL };
    int *to = NULL;

    for (int i = 0; slot_keys[i] && !to; i++)
        if (strlen(slot_keys[i]) == klen && !strncmp(k, slot_keys[i], klen))
            to = &l->slots;
    for (int i = 0; max_keys[i] && !to; i++)
        if (strlen(max_keys[i]) == klen && !strncmp(k, max_keys[i], klen))
            to = &l->max_slots;
    for (int i = 0; user_keys[i]; i++)
        if (strlen(user_keys[i]) == klen && !strncmp(k, user_keys[i], klen)) {
            if (l->e.login)
                return err_set(err, "a login given twice (user@host and "
                               "username=)");
            if (hostname_check_login(v, vlen, err) < 0)
                return -1;
            return (l->e.login = strndup(v, vlen)) ? 0 :
                   err_set(err, "out of memory");
        }
    if (!to)
        return err_set(err, "'%.*s' not understood: %s", (int)klen, k,
                       KEYS_WANTED);
    if (*to || (to == &l->slots && l->e.slots))
        return err_set(err, "'%.*s' given twice", (int)klen, k);
    if (parse_slots(v, vlen, to) < 0)
        return err_set(err, "%.*s must be a number from 1 to %d",
                       (int)klen, k, SLOTS_MAX);
    return 0;
}

static const char *skip_blanks(const char *p)
{
    while (*p && isspace((unsigned char)*p))
        p++;
    return p;
}

/* The "key = value" pairs after the host name.  A message about a key
 * says where: "FILE:LINE:COLUMN: ...", and then -2 is returned. */
static int hf_keys(struct line *l, const char *line, const char *p,
                   struct err *err)
{
    for (p = skip_blanks(p); *p; p = skip_blanks(p)) {
        const char *k = p, *v;
        size_t klen = strspn(k, "abcdefghijklmnopqrstuvwxyz_-");
        int col = (int)(k - line) + 1;

        p = skip_blanks(k + klen);
        if (klen == 0 || *p != '=')
            return err_set(err, "%s:%d:%d: '%.*s' not understood: %s",
                           l->path, l->no, col, (int)strcspn(k, " \t"), k,
                           KEYS_WANTED), -2;
        v = skip_blanks(p + 1);
        p = v + strcspn(v, " \t\r\v\f");
        if (hf_key(l, k, klen, v, (size_t)(p - v), err) < 0)
            return err_prefix(err, "%s:%d:%d", l->path, l->no, col), -2;
    }
    if (l->slots && l->max_slots && l->slots > l->max_slots)
        return err_set(err, "slots=%d is more than max_slots=%d",
                       l->slots, l->max_slots);
    if (l->e.slots && l->max_slots && l->e.slots > l->max_slots)
        return err_set(err, ":%d is more than max_slots=%d", l->e.slots,
                       l->max_slots);
    return 0;
}

/* One line (NUL-terminated, comments blanked). */
static int hostfile_line(char *line, struct line *l, struct err *err)
{
    char *p = (char *)skip_blanks(line);
    size_t len = strcspn(p, " \t\r\v\f");
    int rc;

    if (!*p)
        return 0;
    rc = split_entry(p, len, &l->e, err);
    if (rc == 0)
        rc = hf_keys(l, line, p + len, err);
    if (rc == 0)
        rc = each_host(&l->e, hf_add, l, err);
    entry_free(&l->e);
    if (rc == -2)               /* the message already says where */
        return -1;
    return rc < 0 ? err_prefix(err, "%s:%d", l->path, l->no) : 0;
}

/* Blank out comments, keeping the newlines (lines keep their numbers).
 * Returns -1 with err for a block comment that is never closed. */
static int strip_comments(char *s, const char *path, struct err *err)
{
    int lineno = 1, open_at = 0;

    for (char *p = s; *p; p++) {
        if (*p == '\n') {
            lineno++;
        } else if (open_at) {
            if (p[0] == '*' && p[1] == '/') {
                open_at = 0;
                *p++ = ' ';
            }
            *p = ' ';
        } else if (*p == '#' || (p[0] == '/' && p[1] == '/')) {
            while (*p && *p != '\n')
                *p++ = ' ';
            p--;
        } else if (p[0] == '/' && p[1] == '*') {
            open_at = lineno;
            *p++ = ' ';
            *p = ' ';
        }
    }
    if (open_at)
        return err_set(err, "%s:%d: a '/*' comment is never closed (end it "
                       "with '*/')", path, open_at);
    return 0;
}

int hostfile_parse(const char *text, const char *path, struct alloc *a,
                   struct err *err)
{
    char *copy = strdup(text), *line, *next;
    struct seen seen = { 0 };
    struct line l = { .path = path, .seen = &seen, .a = a };
    int rc = -1;

    if (!copy)
        return err_set(err, "out of memory");
    if (strip_comments(copy, path, err) < 0)
        goto out;
    for (line = copy, l.no = 1; line; line = next, l.no++) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        l.slots = l.max_slots = 0;
        if (hostfile_line(line, &l, err) < 0)
            goto out;
    }
    rc = 0;
    if (a->nnodes == 0)
        rc = err_set(err, "%s: no hosts in the file (one per line: "
                     "\"host slots=4\" or \"host:4\")", path);
out:
    free(copy);
    free(seen.line);
    free(seen.given);
    return rc;
}
