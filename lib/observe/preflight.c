/* preflight.c - a node's preflight report and link results as text lines
 * "key=value": readable in `dlrun kv get`, and a newer agent's extra keys
 * are skipped by an older head. */
#include "observe/preflight.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { F_INT, F_LL, F_STR };

struct field {
    const char *key;
    int type;
    size_t off;
};

#define S(k, m) { k, F_STR, offsetof(struct pf_report, m) }
static const struct field fields[] = {
    { "node", F_INT, offsetof(struct pf_report, node) },
    S("host", host), S("version", version), S("prog", prog),
    S("prog_err", prog_err), S("python", python), S("import", import_mod),
    S("import_err", import_err),
    { "gpus", F_INT, offsetof(struct pf_report, gpus) },
    S("nccl", nccl), S("cuda", cuda),
    { "mem_free_mb", F_LL, offsetof(struct pf_report, mem_free_mb) },
    S("addr", addr),
};
#undef S
#define NFIELDS (sizeof fields / sizeof fields[0])

/* s with newlines and control bytes as '?', so that one value stays one
 * line. */
static void put_clean(FILE *m, const char *s)
{
    for (; *s; s++)
        fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, m);
}

static int finish(FILE *m, char **out)
{
    if (fclose(m) != 0) {
        free(*out);
        *out = NULL;
        return -1;
    }
    return 0;
}

int pf_encode(const struct pf_report *r, char **out, size_t *len)
{
    FILE *m = open_memstream(out, len);

    if (!m)
        return -1;
    for (size_t i = 0; i < NFIELDS; i++) {
        const char *p = (const char *)r + fields[i].off;
        fprintf(m, "%s=", fields[i].key);
        if (fields[i].type == F_INT)
            fprintf(m, "%d", *(const int *)p);
        else if (fields[i].type == F_LL)
            fprintf(m, "%lld", *(const long long *)p);
        else
            put_clean(m, p);
        fputc('\n', m);
    }
    return finish(m, out);
}

/* The whole of s (n bytes) as a number in [lo, hi]. */
static int parse_num(const char *s, size_t n, long long lo, long long hi,
                     long long *v)
{
    char buf[32], *end = NULL;

    if (n == 0 || n >= sizeof buf)
        return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    errno = 0;
    *v = strtoll(buf, &end, 10);
    return errno || *end || (buf[0] != '-' && (buf[0] < '0' || buf[0] > '9'))
           || *v < lo || *v > hi ? -1 : 0;
}

/* One "key=value" line (n bytes, no newline) into r; seen marks keys. */
static int decode_line(const char *s, size_t n, struct pf_report *r,
                       unsigned *seen, struct err *err)
{
    const char *eq = memchr(s, '=', n);
    size_t klen = eq ? (size_t)(eq - s) : 0, vlen = eq ? n - klen - 1 : 0;
    long long v;

    if (!eq)
        return err_set(err, "a line without '='");
    for (size_t i = 0; i < NFIELDS; i++) {
        char *p = (char *)r + fields[i].off;
        if (strlen(fields[i].key) != klen || memcmp(fields[i].key, s, klen))
            continue;
        if (*seen & (1u << i))
            return err_set(err, "%s given twice", fields[i].key);
        *seen |= 1u << i;
        if (fields[i].type == F_STR) {
            if (vlen >= PF_STR || memchr(eq + 1, '\0', vlen))
                return err_set(err, "%s: too long or not text",
                               fields[i].key);
            memcpy(p, eq + 1, vlen);
            p[vlen] = '\0';
        } else if (parse_num(eq + 1, vlen, -1, fields[i].type == F_INT ?
                             INT_MAX : LLONG_MAX / 2, &v) < 0) {
            return err_set(err, "%s: not a number", fields[i].key);
        } else if (fields[i].type == F_INT) {
            *(int *)p = (int)v;
        } else {
            *(long long *)p = v;
        }
        return 0;
    }
    return 0;   /* a key this version does not know */
}

int pf_decode(const char *buf, size_t len, struct pf_report *r,
              struct err *err)
{
    unsigned seen = 0;
    size_t i = 0;

    memset(r, 0, sizeof *r);
    r->node = -1;
    r->gpus = -1;
    r->mem_free_mb = -1;
    while (i < len) {
        const char *nl = memchr(buf + i, '\n', len - i);
        size_t n = nl ? (size_t)(nl - (buf + i)) : len - i;
        if (n > 0 && decode_line(buf + i, n, r, &seen, err) < 0)
            return err_prefix(err, "preflight report");
        i += n + 1;
    }
    if (!(seen & 1u) || r->node < 0)
        return err_set(err, "preflight report: no node");
    return 0;
}

int pf_links_encode(const struct pf_link *l, int n, char **out, size_t *len)
{
    FILE *m = open_memstream(out, len);

    if (!m)
        return -1;
    for (int i = 0; i < n; i++) {
        fprintf(m, "link=%d %ld ", l[i].peer, l[i].rtt_us);
        put_clean(m, l[i].err);
        fputc('\n', m);
    }
    return finish(m, out);
}

/* "link=PEER RTT REASON" (n bytes) into *l. */
static int decode_link(const char *s, size_t n, int nnodes, struct pf_link *l,
                       struct err *err)
{
    const char *p = s + 5, *end = s + n, *sp1, *sp2;
    long long peer, rtt;

    if (n < 5 || memcmp(s, "link=", 5) != 0)
        return 1;   /* another key: skipped */
    sp1 = memchr(p, ' ', (size_t)(end - p));
    sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(end - sp1 - 1)) : NULL;
    if (!sp2 || parse_num(p, (size_t)(sp1 - p), 0, nnodes - 1, &peer) < 0 ||
        parse_num(sp1 + 1, (size_t)(sp2 - sp1 - 1), -1, LONG_MAX / 2,
                  &rtt) < 0)
        return err_set(err, "link results: not \"link=PEER RTT_US REASON\"");
    if ((size_t)(end - sp2 - 1) >= PF_STR || memchr(sp2 + 1, '\0',
                                                     (size_t)(end - sp2 - 1)))
        return err_set(err, "link results: reason too long or not text");
    l->peer = (int)peer;
    l->rtt_us = (long)rtt;
    memcpy(l->err, sp2 + 1, (size_t)(end - sp2 - 1));
    l->err[end - sp2 - 1] = '\0';
    return 0;
}

int pf_links_decode(const char *buf, size_t len, struct pf_link *l, int max,
                    int nnodes, int *n, struct err *err)
{
    size_t i = 0;

    *n = 0;
    while (i < len) {
        const char *nl = memchr(buf + i, '\n', len - i);
        size_t k = nl ? (size_t)(nl - (buf + i)) : len - i;
        int rc;
        if (k > 0 && *n >= max)
            return err_set(err, "link results: more than %d", max);
        rc = k > 0 ? decode_link(buf + i, k, nnodes, &l[*n], err) : 1;
        if (rc < 0)
            return -1;
        *n += rc == 0;
        i += k + 1;
    }
    return 0;
}
