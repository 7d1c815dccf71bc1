/* pmix_names_remote.c - published names and connections across nodes
 * through the broker (pmix_names_remote.h). */
#include "mpi/pmix_names_remote.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/clock.h"
#include "rendezvous/broker_proto.h"
#include "rendezvous/client.h"

#define KEY_ROOM (BP_MAX_KEY + 1)
#define NAME_MAX_KEY 200        /* of a published name, bytes */
#define NSPACE_MAX 255          /* PMIX_MAX_NSLEN */
#define POLL_MS 200             /* longest wait between looks at stop */

int names_record_format(const char *nspace, uint32_t rank, int type,
                        int once, const void *val, size_t len, char **out,
                        size_t *outlen)
{
    size_t ns = strlen(nspace);
    char head[40];
    int h = snprintf(head, sizeof head, "%u %d %d ", (unsigned)rank, type,
                     once != 0);

    *out = NULL;
    if (ns == 0 || ns > NSPACE_MAX || type < 0 || type > 65535 || h < 0 ||
        len > SIZE_MAX - ns - (size_t)h - 1)
        return -1;
    *outlen = (size_t)h + ns + 1 + len;
    *out = malloc(*outlen);
    if (!*out)
        return -1;
    memcpy(*out, head, (size_t)h);
    memcpy(*out + h, nspace, ns + 1);
    if (len)
        memcpy(*out + h + ns + 1, val, len);
    return 0;
}

/* Plain decimal (no sign, no leading zero but "0") at *p below end, at
 * most max; *p moves past it.  0 / -1. */
static int parse_num(const char **p, const char *end, unsigned long max,
                     unsigned long *out)
{
    const char *s = *p;
    unsigned long v = 0;

    if (s >= end || *s < '0' || *s > '9' || (*s == '0' && s + 1 < end &&
                                             s[1] >= '0' && s[1] <= '9'))
        return -1;
    for (; s < end && *s >= '0' && *s <= '9'; s++) {
        v = v * 10 + (unsigned long)(*s - '0');
        if (v > max)
            return -1;
    }
    *p = s;
    *out = v;
    return 0;
}

int names_record_parse(const void *v, size_t n, struct names_hit *h,
                       struct err *err)
{
    const char *s = v, *end = s + n, *ns, *nul;
    unsigned long rank = 0, type = 0, once = 0;

    if (!v || parse_num(&s, end, 4294967295UL, &rank) < 0 || s >= end ||
        *s++ != ' ' || parse_num(&s, end, 65535, &type) < 0 || s >= end ||
        *s++ != ' ' || parse_num(&s, end, 1, &once) < 0 || s >= end ||
        *s++ != ' ')
        return err_set(err, "not \"RANK TYPE ONCE NSPACE\" (three decimal "
                       "numbers and a namespace)");
    ns = s;
    nul = memchr(ns, '\0', (size_t)(end - ns));
    if (!nul || nul == ns || nul - ns > NSPACE_MAX)
        return err_set(err, "no namespace of 1 to %d bytes ending in NUL",
                       NSPACE_MAX);
    h->nspace = ns;
    h->rank = (uint32_t)rank;
    h->type = (int)type;
    h->once = (int)once;
    h->val = nul + 1;
    h->len = (size_t)(end - nul - 1);
    return 0;
}

/* PREFIX.nm.KEY and PREFIX.nm.KEY.n.  0 / -1 with err (key too long). */
static int name_keys(const char *prefix, const char *key, char rec[KEY_ROOM],
                     char claim[KEY_ROOM], struct err *err)
{
    size_t k = strlen(key), p = strlen(prefix);

    if (k == 0 || k > NAME_MAX_KEY || p + k + 6 >= KEY_ROOM)
        return err_set(err, "a published name of %zu bytes (1 to %d here, "
                       "with the namespace's prefix within %d)", k,
                       NAME_MAX_KEY, BP_MAX_KEY);
    memcpy(rec, prefix, p);
    memcpy(rec + p, ".nm.", 4);
    memcpy(rec + p + 4, key, k + 1);
    memcpy(claim, rec, p + 4 + k);
    memcpy(claim + p + 4 + k, ".n", 3);
    return 0;
}

int names_remote_publish(struct client *c, const char *prefix,
                         const char *nspace, uint32_t rank, const char *key,
                         int type, int once, const void *val, size_t len,
                         struct err *err)
{
    char rec[KEY_ROOM], claim[KEY_ROOM], *r = NULL;
    size_t rlen = 0;
    int64_t n = 0;
    int rc;

    if (name_keys(prefix, key, rec, claim, err) < 0)
        return -1;
    if (names_record_format(nspace, rank, type, once, val, len, &r,
                            &rlen) < 0)
        return err_set(err, "publish %s: out of memory or a bad namespace",
                       key);
    rc = client_add(c, claim, 1, &n, err);
    if (rc == CLIENT_OK && n != 1) {
        rc = client_add(c, claim, -1, NULL, err);
        free(r);
        return rc == CLIENT_OK ? NAMES_DUPLICATE : -1;
    }
    if (rc == CLIENT_OK)
        rc = client_put(c, rec, r, rlen, err);
    free(r);
    return rc == CLIENT_OK ? NAMES_OK : -1;
}

int names_remote_unpublish(struct client *c, const char *prefix,
                           const char *nspace, uint32_t rank,
                           const char *key, struct err *err)
{
    char rec[KEY_ROOM], claim[KEY_ROOM];
    struct names_hit h = { 0 };
    void *v = NULL;
    size_t n = 0;
    int rc, ret = -1;

    if (name_keys(prefix, key, rec, claim, err) < 0)
        return -1;
    rc = client_get(c, rec, 0, &v, &n, err);
    if (rc == CLIENT_NOTFOUND)
        return NAMES_NOT_FOUND;
    if (rc != CLIENT_OK)
        return -1;
    if (names_record_parse(v, n, &h, err) < 0) {
        err_prefix(err, "the record of published name %s", key);
        goto out;
    }
    if (h.rank != rank || strcmp(h.nspace, nspace) != 0) {
        ret = NAMES_NOT_OWNER;
        goto out;
    }
    rc = client_del(c, rec, err);
    if (rc == CLIENT_OK || rc == CLIENT_NOTFOUND)
        rc = client_add(c, claim, -1, NULL, err);
    ret = rc == CLIENT_OK ? NAMES_OK : -1;
out:
    free(v);
    return ret;
}

void names_found_free(struct names_found *f)
{
    for (size_t i = 0; i < f->n; i++)
        free(f->vals[i]);
    free(f->vals);
    free(f->hits);
    memset(f, 0, sizeof *f);
}

/* How long the next wait may be: 0 without a deadline to wait for, else
 * at most POLL_MS; -1 once the deadline passed. */
static int slice_ms(long deadline_ms)
{
    long left;

    if (deadline_ms < 0)
        return 0;
    left = deadline_ms - clock_ms();
    if (left <= 0)
        return -1;
    return left < POLL_MS ? (int)left : POLL_MS;
}

/* The value of key: waiting (in slices, checking stop) until deadline_ms,
 * or once when it is < 0.  CLIENT_OK, CLIENT_NOTFOUND (not there in
 * time), NAMES_CLEARED as a positive number (stopped), or a CLIENT_*
 * error with err. */
static int get_until(struct client *c, const char *key, long deadline_ms,
                     names_stop_fn stop, void *ctx, void **v, size_t *n,
                     struct err *err)
{
    for (;;) {
        int ms = slice_ms(deadline_ms), rc;

        if (ms < 0)
            return CLIENT_NOTFOUND;
        if (stop && stop(ctx))
            return NAMES_CLEARED;
        rc = client_get(c, key, ms, v, n, err);
        if (rc != CLIENT_TIMEOUT || deadline_ms < 0)
            return rc;
    }
}

/* Look key i up into out (one more hit when found).  NAMES_OK,
 * NAMES_NOT_FOUND, NAMES_CLEARED, or -1 with err. */
static int lookup_one(struct client *c, const char *prefix, const char *key,
                      long deadline_ms, names_stop_fn stop, void *ctx,
                      struct names_found *out, struct err *err)
{
    char rec[KEY_ROOM], claim[KEY_ROOM];
    void *v = NULL;
    size_t n = 0;
    int rc;

    if (name_keys(prefix, key, rec, claim, err) < 0)
        return -1;
    rc = get_until(c, rec, deadline_ms, stop, ctx, &v, &n, err);
    if (rc == NAMES_CLEARED || rc == CLIENT_NOTFOUND)
        return rc == NAMES_CLEARED ? NAMES_CLEARED : NAMES_NOT_FOUND;
    if (rc != CLIENT_OK)
        return -1;
    out->vals[out->n] = v;
    if (names_record_parse(v, n, &out->hits[out->n], err) < 0) {
        free(v);
        return err_prefix(err, "the record of published name %s", key);
    }
    out->hits[out->n++].key = key;
    /* read once: take it away, and give its key back */
    if (out->hits[out->n - 1].once) {
        rc = client_del(c, rec, err);
        if (rc == CLIENT_OK)
            rc = client_add(c, claim, -1, NULL, err);
        if (rc != CLIENT_OK && rc != CLIENT_NOTFOUND)
            return -1;
    }
    return NAMES_OK;
}

int names_remote_lookup(struct client *c, const char *prefix,
                        char *const *keys, long deadline_ms,
                        names_stop_fn stop, void *ctx,
                        struct names_found *out, struct err *err)
{
    size_t nkeys = 0;
    int rc = NAMES_OK;

    memset(out, 0, sizeof *out);
    while (keys[nkeys])
        nkeys++;
    out->hits = calloc(nkeys ? nkeys : 1, sizeof *out->hits);
    out->vals = calloc(nkeys ? nkeys : 1, sizeof *out->vals);
    if (!out->hits || !out->vals) {
        names_found_free(out);
        return err_set(err, "out of memory");
    }
    for (size_t i = 0; i < nkeys && rc != -1 && rc != NAMES_CLEARED; i++) {
        rc = lookup_one(c, prefix, keys[i], deadline_ms, stop, ctx, out, err);
        /* a waiting lookup wants every key; one at once, those there are */
        if (rc == NAMES_NOT_FOUND && deadline_ms >= 0)
            break;
    }
    if (rc == NAMES_NOT_FOUND && deadline_ms < 0 && out->n)
        rc = NAMES_OK;
    if (rc != NAMES_OK)
        names_found_free(out);
    return rc;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

    return x < y ? -1 : x > y;
}

void names_set_id(const uint32_t *ranks, size_t n,
                  char out[NAMES_SET_ID_LEN])
{
    uint32_t *s = n ? malloc(n * sizeof *s) : NULL;
    uint64_t h = 1469598103934665603ULL;   /* FNV-1a */
    size_t m = 0;

    if (s) {
        memcpy(s, ranks, n * sizeof *s);
        qsort(s, n, sizeof *s, cmp_u32);
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t r = s ? s[i] : ranks[i];   /* no memory: unsorted */
        if (s && i && s[i] == s[i - 1])
            continue;
        for (int b = 0; b < 4; b++) {
            h ^= (r >> (8 * b)) & 0xff;
            h *= 1099511628211ULL;
        }
        m++;
    }
    free(s);
    snprintf(out, NAMES_SET_ID_LEN, "%zx.%016llx", m & 0xffffff,
             (unsigned long long)h);
}

int names_remote_connect(struct client *c, const char *prefix, char op,
                         const char *set, unsigned seq, int nnodes,
                         long deadline_ms, names_stop_fn stop, void *ctx,
                         struct err *err)
{
    char count[KEY_ROOM], go[KEY_ROOM];
    void *v = NULL;
    size_t n = 0;
    int64_t arrived = 0;
    int rc;

    snprintf(count, sizeof count, "%.200s.cx.%c.%s.%u.n", prefix, op, set,
             seq);
    snprintf(go, sizeof go, "%.200s.cx.%c.%s.%u.go", prefix, op, set, seq);
    rc = client_add(c, count, 1, &arrived, err);
    if (rc == CLIENT_OK && arrived == nnodes)
        rc = client_put(c, go, "1", 1, err);
    if (rc != CLIENT_OK)
        return -1;
    rc = get_until(c, go, deadline_ms < 0 ? LONG_MAX : deadline_ms, stop, ctx,
                   &v, &n, err);
    free(v);
    if (rc == NAMES_CLEARED)
        return NAMES_CLEARED;
    if (rc == CLIENT_NOTFOUND)
        return NAMES_TIMEOUT;
    return rc == CLIENT_OK ? NAMES_OK : -1;
}
