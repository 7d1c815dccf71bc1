/* pmi_wire.c - the simple PMI wire of one rank's connection (pmi_wire.h). */
#include "mpi/pmi_wire.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TOKENS 32
/* a reply: a value and a key at most, with the words around them */
#define REPLY_MAX (PMI_WIRE_VAL_MAX + PMI_WIRE_KVSNAME_MAX + 256)
/* the prefix put before PMI-2's node attributes in the job's store */
#define NODEATTR "nodeattr/"

struct tok {
    const char *key, *val;          /* val NULL: a key without '=' */
};

/* One request, cut into its words (pointing into the engine's buffer). */
struct req {
    const char *cmd;
    struct tok t[MAX_TOKENS];
    int n;
    int v2;                         /* came in PMI-2's framing */
};

struct pmi_wire {
    const struct pmi_wire_job *job;
    const struct pmi_wire_ops *ops;
    void *ctx;
    int rank;
    int in_fence;                   /* 1: barrier_in, 2: kvs-fence */
    char fence_thrid[64];           /* a threaded PMI-2 client's, or "" */
    int in_mcmd;                    /* inside a PMI-1 "mcmd=" (spawn) */
    int finalized;
    size_t len;                     /* bytes waiting in in */
    char in[PMI_WIRE_MSG_MAX + 1];
};

struct pmi_wire *pmi_wire_create(const struct pmi_wire_job *job,
                                 const struct pmi_wire_ops *ops, void *ctx,
                                 int rank, struct err *err)
{
    struct pmi_wire *w;

    if (rank < 0 || rank >= job->size) {
        err_set(err, "PMI: rank %d outside a job of %d", rank, job->size);
        return NULL;
    }
    w = calloc(1, sizeof *w);
    if (!w) {
        err_set(err, "out of memory");
        return NULL;
    }
    *w = (struct pmi_wire){ .job = job, .ops = ops, .ctx = ctx, .rank = rank };
    return w;
}

void pmi_wire_destroy(struct pmi_wire *w)
{
    free(w);
}

int pmi_wire_finalized(const struct pmi_wire *w)
{
    return w->finalized;
}

int pmi_wire_in_fence(const struct pmi_wire *w)
{
    return w->in_fence != 0;
}

static const char *find(const struct req *q, const char *key)
{
    for (int i = 0; i < q->n; i++)
        if (strcmp(q->t[i].key, key) == 0)
            return q->t[i].val ? q->t[i].val : "";
    return NULL;
}

/* A decimal int in [lo, hi] of q's key, else def. */
static int find_int(const struct req *q, const char *key, int lo, int hi,
                    int def)
{
    const char *s = find(q, key);
    char *end;
    long v;

    if (!s || !*s)
        return def;
    v = strtol(s, &end, 10);
    return *end || v < lo || v > hi ? def : (int)v;
}

/* Send a PMI-1 line (fmt has its "\n"). */
static int reply1(struct pmi_wire *w, struct err *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int reply1(struct pmi_wire *w, struct err *err, const char *fmt, ...)
{
    char buf[REPLY_MAX];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof buf)
        return err_set(err, "PMI: reply too long for rank %d", w->rank);
    if (w->ops->respond(w->ctx, w->rank, buf, (size_t)n) < 0)
        return err_set(err, "PMI: cannot answer rank %d", w->rank);
    return 0;
}

/* Send a PMI-2 message: its length, then fmt's "cmd=...;k=v;" and the
 * client's thrid (NULL: none). */
static int reply2(struct pmi_wire *w, const char *thrid, struct err *err,
                  const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int reply2(struct pmi_wire *w, const char *thrid, struct err *err,
                  const char *fmt, ...)
{
    char buf[REPLY_MAX + 80], len[12];
    va_list ap;
    int n, m = 0;

    va_start(ap, fmt);
    n = vsnprintf(buf + 6, REPLY_MAX, fmt, ap);
    va_end(ap);
    if (n >= 0 && n < REPLY_MAX && thrid)
        m = snprintf(buf + 6 + n, sizeof buf - 6 - (size_t)n, "thrid=%s;",
                     thrid);
    if (n < 0 || n >= REPLY_MAX || m < 0 ||
        (size_t)(6 + n + m) >= sizeof buf)
        return err_set(err, "PMI: reply too long for rank %d", w->rank);
    snprintf(len, sizeof len, "%6d", n + m);
    memcpy(buf, len, 6);
    if (w->ops->respond(w->ctx, w->rank, buf, (size_t)(6 + n + m)) < 0)
        return err_set(err, "PMI: cannot answer rank %d", w->rank);
    return 0;
}

/* What the job knows without the store (info-getjobattr, and a PMI-1 get
 * of it), or NULL. */
static const char *job_attr(const struct pmi_wire *w, const char *key)
{
    if (strcmp(key, "PMI_process_mapping") == 0)
        return w->job->mapping && *w->job->mapping ? w->job->mapping : NULL;
    return NULL;
}

/* Store key=val; -1 when refused (too long, empty, the store full). */
static int do_put(struct pmi_wire *w, const char *key, const char *val)
{
    if (!key || !val || !*key || strlen(key) > PMI_WIRE_KEY_MAX ||
        strlen(val) > PMI_WIRE_VAL_MAX)
        return -1;
    return w->ops->put(w->ctx, w->rank, key, val);
}

static const char *do_get(struct pmi_wire *w, const char *key)
{
    const char *v;

    if (!key || !*key || strlen(key) > PMI_WIRE_KEY_MAX)
        return NULL;
    v = job_attr(w, key);
    return v ? v : w->ops->get(w->ctx, w->rank, key);
}

static int enter_fence(struct pmi_wire *w, int kind, const char *thrid,
                       struct err *err)
{
    if (w->in_fence)
        return err_set(err, "PMI: rank %d entered a fence twice", w->rank);
    w->in_fence = kind;
    snprintf(w->fence_thrid, sizeof w->fence_thrid, "%s", thrid ? thrid : "");
    w->ops->fence(w->ctx, w->rank);
    return 0;
}

int pmi_wire_fence_done(struct pmi_wire *w, int rc, struct err *err)
{
    int kind = w->in_fence;

    w->in_fence = 0;
    if (kind == 1)
        return reply1(w, err, "cmd=barrier_out rc=%d\n", rc ? -1 : 0);
    if (kind == 2)
        return reply2(w, w->fence_thrid[0] ? w->fence_thrid : NULL, err,
                      "cmd=kvs-fence-response;rc=%d;", rc ? 1 : 0);
    return err_set(err, "PMI: rank %d is not in a fence", w->rank);
}

static void do_abort(struct pmi_wire *w, int code, const char *msg)
{
    w->ops->abort(w->ctx, w->rank, code, msg ? msg : "");
}

/* init (both versions begin with this PMI-1 line). */
static int v1_init(struct pmi_wire *w, const struct req *q, struct err *err)
{
    int v = find_int(q, "pmi_version", 0, INT_MAX, -1);

    if (v == 2)
        return reply1(w, err, "cmd=response_to_init pmi_version=2 "
                      "pmi_subversion=0 rc=0\n");
    if (v == 1)
        return reply1(w, err, "cmd=response_to_init pmi_version=1 "
                      "pmi_subversion=1 rc=0\n");
    return reply1(w, err, "cmd=response_to_init pmi_version=1 "
                  "pmi_subversion=1 rc=-1\n");
}

static int v1_get(struct pmi_wire *w, const struct req *q, struct err *err)
{
    const char *v = do_get(w, find(q, "key"));

    if (!v)
        return reply1(w, err, "cmd=get_result rc=-1 msg=key_not_found\n");
    return reply1(w, err, "cmd=get_result rc=0 msg=success value=%s\n", v);
}

static int v1_put(struct pmi_wire *w, const struct req *q, struct err *err)
{
    if (do_put(w, find(q, "key"), find(q, "value")) < 0)
        return reply1(w, err, "cmd=put_result rc=-1 msg=refused\n");
    return reply1(w, err, "cmd=put_result rc=0 msg=success\n");
}

/* Publish, unpublish, lookup and spawn: not served, answered at once. */
static int v1_unserved(struct pmi_wire *w, const char *what, struct err *err)
{
    return reply1(w, err, "cmd=%s rc=-1 msg=not_supported_by_dlrun\n", what);
}

static int v1_dispatch(struct pmi_wire *w, const struct req *q,
                       struct err *err)
{
    const struct pmi_wire_job *j = w->job;
    const char *c = q->cmd;

    if (strcmp(c, "init") == 0)
        return v1_init(w, q, err);
    if (strcmp(c, "get_maxes") == 0)
        return reply1(w, err, "cmd=maxes kvsname_max=%d keylen_max=%d "
                      "vallen_max=%d rc=0\n", PMI_WIRE_KVSNAME_MAX,
                      PMI_WIRE_KEY_MAX, PMI_WIRE_VAL_MAX);
    if (strcmp(c, "get_appnum") == 0)
        return reply1(w, err, "cmd=appnum appnum=%d rc=0\n", j->appnum);
    if (strcmp(c, "get_my_kvsname") == 0)
        return reply1(w, err, "cmd=my_kvsname kvsname=%s rc=0\n", j->kvsname);
    if (strcmp(c, "get_universe_size") == 0)
        return reply1(w, err, "cmd=universe_size size=%d rc=0\n", j->size);
    if (strcmp(c, "put") == 0)
        return v1_put(w, q, err);
    if (strcmp(c, "get") == 0)
        return v1_get(w, q, err);
    if (strcmp(c, "barrier_in") == 0)
        return enter_fence(w, 1, NULL, err);
    if (strcmp(c, "finalize") == 0) {
        w->finalized = 1;
        return reply1(w, err, "cmd=finalize_ack rc=0\n");
    }
    if (strcmp(c, "abort") == 0) {
        do_abort(w, find_int(q, "exitcode", INT_MIN, INT_MAX, 1),
                 find(q, "message"));
        return 0;
    }
    if (strcmp(c, "publish_name") == 0)
        return v1_unserved(w, "publish_result", err);
    if (strcmp(c, "unpublish_name") == 0)
        return v1_unserved(w, "unpublish_result", err);
    if (strcmp(c, "lookup_name") == 0)
        return v1_unserved(w, "lookup_result", err);
    return err_set(err, "PMI: rank %d sent an unknown command '%.40s'",
                   w->rank, c);
}

static int v2_fullinit(struct pmi_wire *w, const char *thrid,
                       struct err *err)
{
    return reply2(w, thrid, err, "cmd=fullinit-response;pmi-version=2;"
                  "pmi-subversion=0;rank=%d;size=%d;appnum=%d;"
                  "debugged=FALSE;pmiverbose=FALSE;rc=0;", w->rank,
                  w->job->size, w->job->appnum);
}

/* info-getjobattr, kvs-get, info-getnodeattr: found or not, never waits. */
static int v2_found(struct pmi_wire *w, const char *name, const char *v,
                    const char *thrid, struct err *err)
{
    if (!v)
        return reply2(w, thrid, err, "cmd=%s;found=FALSE;rc=0;", name);
    return reply2(w, thrid, err, "cmd=%s;found=TRUE;value=%s;rc=0;", name, v);
}

/* PMI-2's node attributes live in the job's store under NODEATTR. */
static const char *nodeattr_key(const char *key, char *buf, size_t len)
{
    int n = key ? snprintf(buf, len, NODEATTR "%s", key) : -1;

    return n < 0 || (size_t)n >= len ? NULL : buf;
}

static int v2_put(struct pmi_wire *w, const char *name, const char *key,
                  const struct req *q, const char *thrid, struct err *err)
{
    int rc = do_put(w, key, find(q, "value"));

    return reply2(w, thrid, err, "cmd=%s;rc=%d;%s", name, rc < 0 ? 1 : 0,
                  rc < 0 ? "errmsg=refused;" : "");
}

static int v2_kvs(struct pmi_wire *w, const struct req *q, const char *thrid,
                  struct err *err)
{
    char nk[PMI_WIRE_KEY_MAX + sizeof NODEATTR];
    const char *c = q->cmd, *key = find(q, "key");

    if (strcmp(c, "kvs-put") == 0)
        return v2_put(w, "kvs-put-response", key, q, thrid, err);
    if (strcmp(c, "kvs-get") == 0)
        return v2_found(w, "kvs-get-response", do_get(w, key), thrid, err);
    if (strcmp(c, "info-getjobattr") == 0)
        return v2_found(w, "info-getjobattr-response",
                        key ? job_attr(w, key) : NULL, thrid, err);
    key = nodeattr_key(key, nk, sizeof nk);
    if (strcmp(c, "info-putnodeattr") == 0)
        return v2_put(w, "info-putnodeattr-response", key, q, thrid, err);
    return v2_found(w, "info-getnodeattr-response",
                    key ? w->ops->get(w->ctx, w->rank, key) : NULL, thrid,
                    err);
}

static int v2_dispatch(struct pmi_wire *w, const struct req *q,
                       struct err *err)
{
    const char *c = q->cmd, *thrid = find(q, "thrid");
    static const char *const kvs[] = { "kvs-put", "kvs-get", "info-getjobattr",
                                       "info-putnodeattr", "info-getnodeattr" };

    if (strcmp(c, "fullinit") == 0)
        return v2_fullinit(w, thrid, err);
    if (strcmp(c, "job-getid") == 0)
        return reply2(w, thrid, err, "cmd=job-getid-response;jobid=%s;rc=0;",
                      w->job->kvsname);
    for (size_t i = 0; i < sizeof kvs / sizeof kvs[0]; i++)
        if (strcmp(c, kvs[i]) == 0)
            return v2_kvs(w, q, thrid, err);
    if (strcmp(c, "kvs-fence") == 0)
        return enter_fence(w, 2, thrid, err);
    if (strcmp(c, "finalize") == 0) {
        w->finalized = 1;
        return reply2(w, thrid, err, "cmd=finalize-response;rc=0;");
    }
    if (strcmp(c, "abort") == 0) {
        do_abort(w, -1, find(q, "msg"));
        return 0;
    }
    /* name-publish, spawn, job-connect, ...: an error at once */
    return reply2(w, thrid, err, "cmd=%.40s-response;rc=1;"
                  "errmsg=not supported by dlrun;", c);
}

/* Cut s (NUL-terminated) at sep into q's words; the first must be
 * first=NAME.  0, or -1 with err. */
static int split(struct pmi_wire *w, char *s, char sep, const char *first,
                 struct req *q, struct err *err)
{
    char *p = s;

    q->n = 0;
    q->cmd = NULL;
    while (*p) {
        char *word = p, *eq;
        p += strcspn(p, (char[]){ sep, '\0' });
        if (*p)
            *p++ = '\0';
        if (!*word)
            continue;
        eq = strchr(word, '=');
        if (eq)
            *eq = '\0';
        if (!q->cmd && (!eq || strcmp(word, first) != 0 || !eq[1]))
            break;
        if (!q->cmd)
            q->cmd = eq + 1;
        else if (q->n < MAX_TOKENS)
            q->t[q->n++] = (struct tok){ word, eq ? eq + 1 : NULL };
        else
            return err_set(err, "PMI: rank %d sent too many words", w->rank);
    }
    if (!q->cmd)
        return err_set(err, "PMI: rank %d sent no %s=", w->rank, first);
    return 0;
}

/* One PMI-1 line (without its "\n"). */
static int v1_line(struct pmi_wire *w, char *line, struct err *err)
{
    struct req q = { 0 };
    size_t n = strlen(line);

    if (n && line[n - 1] == '\r')
        line[n - 1] = '\0';
    if (w->in_mcmd) {           /* a spawn's lines, to its "endcmd" */
        if (strcmp(line, "endcmd") != 0)
            return 0;
        w->in_mcmd = 0;
        return v1_unserved(w, "spawn_result", err);
    }
    if (strncmp(line, "mcmd=", 5) == 0) {
        w->in_mcmd = 1;
        return 0;
    }
    if (split(w, line, ' ', "cmd", &q, err) < 0)
        return -1;
    return v1_dispatch(w, &q, err);
}

/* The length of a PMI-2 message from its 6-character prefix: spaces and
 * one run of digits; -1 when it is not one. */
static long v2_len(const char *p)
{
    long v = 0;
    int digits = 0, ended = 0;

    for (int i = 0; i < 6; i++) {
        if (p[i] >= '0' && p[i] <= '9' && !ended) {
            v = v * 10 + (p[i] - '0');
            digits++;
        } else if (p[i] == ' ') {
            ended = digits > 0;
        } else {
            return -1;
        }
    }
    return digits ? v : -1;
}

/* Does the buffer start a PMI-1 line ("cmd=", "mcmd=", or inside a
 * spawn)?  0 for PMI-2, -1 when too few bytes tell. */
static int starts_v1(const struct pmi_wire *w)
{
    static const char *const heads[] = { "cmd=", "mcmd=" };

    if (w->in_mcmd)
        return 1;
    for (int i = 0; i < 2; i++) {
        size_t k = strlen(heads[i]);
        if (memcmp(w->in, heads[i], w->len < k ? w->len : k) == 0)
            return w->len < k ? -1 : 1;
    }
    return 0;
}

/* A PMI-2 message of len bytes after its length: handled; its size. */
static long v2_message(struct pmi_wire *w, long len, struct err *err)
{
    char m[PMI_WIRE_MSG_MAX];
    struct req q = { .v2 = 1 };

    memcpy(m, w->in + 6, (size_t)len);
    m[len] = '\0';
    if (memchr(m, '\0', (size_t)len))
        return err_set(err, "PMI: rank %d sent a NUL byte", w->rank);
    if (split(w, m, ';', "cmd", &q, err) < 0 || v2_dispatch(w, &q, err) < 0)
        return -1;
    return 6 + len;
}

/* The first complete request in the buffer, handled and dropped: its
 * size, 0 when none is complete yet, -1 with err. */
static long take_one(struct pmi_wire *w, struct err *err)
{
    int v1 = starts_v1(w);
    char *nl;
    long len;

    if (v1 < 0)
        return 0;
    if (v1) {
        nl = memchr(w->in, '\n', w->len);
        if (!nl)
            return w->len >= PMI_WIRE_MSG_MAX ?
                   err_set(err, "PMI: rank %d sent a line over %d bytes",
                           w->rank, PMI_WIRE_MSG_MAX) : 0;
        *nl = '\0';
        return memchr(w->in, '\0', (size_t)(nl - w->in)) ?
               err_set(err, "PMI: rank %d sent a NUL byte", w->rank) :
               v1_line(w, w->in, err) < 0 ? -1 : nl - w->in + 1;
    }
    if (w->len < 6)
        return 0;
    len = v2_len(w->in);
    if (len < 0 || len > PMI_WIRE_MSG_MAX - 7)
        return err_set(err, "PMI: rank %d sent neither a PMI-1 line nor a "
                       "PMI-2 length", w->rank);
    if ((long)w->len < 6 + len)
        return 0;
    return v2_message(w, len, err);
}

int pmi_wire_feed(struct pmi_wire *w, const char *buf, size_t n,
                  struct err *err)
{
    while (n > 0 || w->len > 0) {
        size_t take = sizeof w->in - 1 - w->len;
        long used;
        if (take > n)
            take = n;
        memcpy(w->in + w->len, buf, take);
        w->len += take;
        buf += take;
        n -= take;
        used = take_one(w, err);
        if (used < 0)
            return -1;
        if (used == 0 && n == 0)
            break;
        if (used == 0 && w->len >= sizeof w->in - 1)
            return err_set(err, "PMI: rank %d sent a request over %d bytes",
                           w->rank, PMI_WIRE_MSG_MAX);
        memmove(w->in, w->in + used, w->len - (size_t)used);
        w->len -= (size_t)used;
    }
    return 0;
}

/* Append "(node,nodes,each)" to buf at *at; -1 when it does not fit. */
static int map_block(char *buf, size_t len, size_t *at, int node, int nodes,
                     int each)
{
    int k = snprintf(buf + *at, len - *at, ",(%d,%d,%d)", node, nodes, each);

    if (k < 0 || (size_t)k >= len - *at)
        return -1;
    *at += (size_t)k;
    return 0;
}

int pmi_wire_mapping(const int *rank_node, int n, char *buf, size_t len)
{
    size_t at = 7;
    int node = -1, nodes = 0, each = 0;

    if (n < 1 || len < 9)
        return -1;
    memcpy(buf, "(vector", 8);
    for (int r = 0; r < n;) {
        int k = 1;
        while (r + k < n && rank_node[r + k] == rank_node[r])
            k++;
        if (nodes && k == each && rank_node[r] == node + nodes) {
            nodes++;
        } else {
            if (nodes && map_block(buf, len, &at, node, nodes, each) < 0)
                return -1;
            node = rank_node[r];
            nodes = 1;
            each = k;
        }
        r += k;
    }
    if (map_block(buf, len, &at, node, nodes, each) < 0 || at + 2 > len)
        return -1;
    memcpy(buf + at, ")", 2);
    return 0;
}
