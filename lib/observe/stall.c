/* stall.c - see stall.h. */
#include "observe/stall.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct stall_rank {
    struct stall_sample last;   /* the previous sample (stack not kept) */
    unsigned long long base;    /* cpu at the last activity of any rank */
    unsigned long long *ref;    /* owned: each thread's base (a signature,
                                   observe/stall.h) since its last move */
    size_t nref;
    size_t *deep;               /* owned: per thread, the deepest sample's
                                   length since then */
    int have_ref;               /* ref holds a sample */
    int spun;                   /* CPU its stacks called no work */
};

struct stall {
    int n;
    long timeout_ms, hz;
    int started;
    long active_ms;             /* the last activity of any rank */
    struct stall_rank *r;
};

struct stall *stall_create(int n, long timeout_ms, long hz)
{
    struct stall *s = calloc(1, sizeof *s);

    if (!s || !(s->r = calloc((size_t)(n > 0 ? n : 1), sizeof *s->r))) {
        free(s);
        return NULL;
    }
    s->n = n;
    s->timeout_ms = timeout_ms;
    s->hz = hz > 0 ? hz : 100;
    return s;
}

void stall_destroy(struct stall *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->n; i++) {
        free(s->r[i].ref);
        free(s->r[i].deep);
    }
    free(s->r);
    free(s);
}

void stall_reset(struct stall *s)
{
    s->started = 0;
    for (int i = 0; i < s->n; i++)
        s->r[i].have_ref = s->r[i].spun = 0;
}

/* The thread section of sig at *at: [*at, *end).  0, or -1 at the end. */
static int section(const unsigned long long *sig, size_t n, size_t at,
                   size_t *end)
{
    size_t k = at;

    if (k >= n)
        return -1;
    for (k++; k < n && !(sig[k] & STALL_THREAD); k++)
        ;
    *end = k;
    return 0;
}

/* Does v stay within STALL_SPIN_DEPTH of r's bases, thread by thread?
 * When apply, shorten the bases to what v shares and deepen r->deep. */
static int within(struct stall_rank *r, const struct stall_sample *v,
                  int apply)
{
    size_t ia = 0, ib = 0, ea, eb, out = 0;
    int t = 0;

    for (; section(r->ref, r->nref, ia, &ea) == 0; ia = ea, ib = eb, t++) {
        size_t c = 1, deep;
        if (section(v->stack, v->nstack, ib, &eb) < 0 ||
            (v->stack[ib] & STALL_INTERP) ||
            (r->ref[ia] & ~STALL_INTERP) != v->stack[ib])
            return 0;           /* interpreter code, or another thread */
        while (ia + c < ea && ib + c < eb && r->ref[ia + c] == v->stack[ib + c])
            c++;
        deep = eb - ib > r->deep[t] ? eb - ib : r->deep[t];
        if (deep - c > STALL_SPIN_DEPTH)
            return 0;           /* it went further than a poll does */
        if (apply) {
            memmove(r->ref + out, r->ref + ia, c * sizeof *r->ref);
            out += c;
            r->deep[t] = deep;
        }
    }
    if (apply)
        r->nref = out;
    return ib >= v->nstack;
}

/* Start r's bases again from v.  0, or -1 (out of memory). */
static int restart_ref(struct stall_rank *r, const struct stall_sample *v)
{
    size_t at = 0, end, t = 0;
    unsigned long long *m = malloc((v->nstack + 1) * sizeof *m);
    size_t *d = malloc((v->nstack + 1) * sizeof *d);

    r->have_ref = 0;
    if (!m || !d) {
        free(m);
        free(d);
        return -1;
    }
    memcpy(m, v->stack, v->nstack * sizeof *m);
    for (; section(v->stack, v->nstack, at, &end) == 0; at = end)
        d[t++] = end - at;
    free(r->ref);
    free(r->deep);
    r->ref = m;
    r->nref = v->nstack;
    r->deep = d;
    r->have_ref = 1;
    return 0;
}

/* Has rank r's stack stayed where it was (observe/stall.h)?  Its bases
 * follow v. */
static int stack_still(struct stall_rank *r, const struct stall_sample *v)
{
    if (r->have_ref && within(r, v, 0)) {
        within(r, v, 1);
        return 1;
    }
    restart_ref(r, v);
    return 0;
}

/* Did rank r use CPU since the last activity of any rank?  Above 1% of
 * one CPU over all that time, plus two ticks for the clock's grain: a
 * blocked rank's helper threads (thread pools, timers) wake now and then,
 * which is not work, and a short interval would see one tick of theirs as
 * 4%. */
static int cpu_busy(const struct stall *s, const struct stall_rank *r,
                    const struct stall_sample *v, long quiet_ms)
{
    unsigned long long dcpu = v->cpu > r->base ? v->cpu - r->base : 0;
    double used_ms = (double)dcpu * 1000.0 / (double)s->hz;

    return used_ms > (double)quiet_ms / 100.0 + 2000.0 / (double)s->hz;
}

/* Did rank r write output or report progress since the last sample? */
static int said(const struct stall_rank *r, const struct stall_sample *v)
{
    return v->alive && r->last.alive &&
           (v->output != r->last.output || v->progress != r->last.progress);
}

int stall_wants_stacks(const struct stall *s, long now_ms,
                       const struct stall_sample *v, int *want)
{
    int n = 0, quiet = 1;

    for (int i = 0; s->started && i < s->n; i++)
        quiet &= !said(&s->r[i], &v[i]);
    for (int i = 0; i < s->n; i++) {
        want[i] = quiet && s->started && v[i].alive && s->r[i].last.alive &&
                  cpu_busy(s, &s->r[i], &v[i], now_ms - s->active_ms);
        n += want[i];
    }
    return n;
}

int stall_spinning(const struct stall *s, int i)
{
    return s->r[i].spun;
}

/* Was rank r active since the last sample (output, progress) or since the
 * last activity of any rank (CPU while its stack moved)?  Its stack
 * reference follows: kept while still, started again on a move, dropped
 * when it said something. */
static int active(const struct stall *s, struct stall_rank *r,
                  const struct stall_sample *v, long quiet_ms)
{
    int still;

    if (!v->alive || !r->last.alive)
        return 0;
    if (said(r, v)) {
        r->have_ref = 0;
        return 1;
    }
    if (!cpu_busy(s, r, v, quiet_ms))
        return 0;
    if (!v->stack)
        return 1;
    still = stack_still(r, v);
    r->spun |= still;
    return !still;
}

int stall_feed(struct stall *s, long now_ms, const struct stall_sample *v)
{
    int any = !s->started;

    for (int i = 0; i < s->n; i++)
        any |= active(s, &s->r[i], &v[i], now_ms - s->active_ms);
    for (int i = 0; i < s->n; i++) {
        if (any) {
            s->r[i].base = v[i].cpu;
            s->r[i].spun = 0;
        }
        s->r[i].last = v[i];
        s->r[i].last.stack = NULL;
        s->r[i].last.nstack = 0;
    }
    if (any)
        s->active_ms = now_ms;
    s->started = 1;
    return now_ms - s->active_ms >= s->timeout_ms;
}

long stall_quiet_ms(const struct stall *s, long now_ms)
{
    return s->started ? now_ms - s->active_ms : 0;
}

unsigned long long stall_window_cpu(const struct stall *s, int i)
{
    const struct stall_rank *r = &s->r[i];

    return r->last.cpu > r->base ? r->last.cpu - r->base : 0;
}

int stall_parse_duration(const char *what, const char *text, long *ms,
                         struct err *err)
{
    const char *p = text;
    double total = 0;
    int parts = 0;

    while (*p) {
        char *end;
        double v = strtod(p, &end);
        double unit = 1000;
        if (end == p || v < 0 || *p == '-' || *p == '+' || *p == ' ')
            goto bad;
        p = end;
        if (*p == 'h' || *p == 'm' || *p == 's' || *p == 'd') {
            unit = *p == 'd' ? 86400e3 : *p == 'h' ? 3600e3 :
                   *p == 'm' ? 60e3 : 1000;
            p++;
        } else if (*p) {
            goto bad;
        }
        total += v * unit;
        parts++;
    }
    if (!parts || total < 1000 || total > 30 * 86400e3)
        goto bad;
    *ms = (long)total;
    return 0;
bad:
    return err_set(err, "%s '%s': want a duration from 1 s to 30 days, like "
                   "600, 90s, 10m or 1h30m", what, text);
}

/* The frame line at p ("  File "PATH", line N in FUNC") into buf as
 * "FUNC (BASE:N)"; 0 or -1. */
static int frame(const char *p, const char *end, char *buf, size_t buflen)
{
    const char *q = p, *file, *fend, *fn, *eol;
    long line;

    while (q < end && *q == ' ')
        q++;
    if (end - q < 7 || memcmp(q, "File \"", 6) != 0)
        return -1;
    file = q + 6;
    eol = memchr(file, '\n', (size_t)(end - file));
    if (!eol)
        eol = end;
    fend = memchr(file, '"', (size_t)(eol - file));
    if (!fend || eol - fend < 9 || memcmp(fend, "\", line ", 8) != 0)
        return -1;
    /* digits by hand: the text need not be NUL-terminated */
    line = 0;
    for (fn = fend + 8; fn < eol && *fn >= '0' && *fn <= '9' &&
         line < 1000000000; fn++)
        line = line * 10 + (*fn - '0');
    if (eol - fn < 5 || memcmp(fn, " in ", 4) != 0)
        return -1;
    fn += 4;
    for (const char *b = file; b < fend; b++)
        if (*b == '/')
            file = b + 1;
    snprintf(buf, buflen, "%.*s (%.*s:%ld)", (int)(eol - fn), fn,
             (int)(fend - file), file, line);
    return 0;
}

/* The first frame after the header line starting at h. */
static int first_frame(const char *h, const char *end, char *buf,
                       size_t buflen)
{
    const char *nl = memchr(h, '\n', (size_t)(end - h));

    return nl ? frame(nl + 1, end, buf, buflen) : -1;
}

/* The last occurrence of the C string pat in [text, end), or NULL. */
static const char *find_last(const char *text, const char *end,
                             const char *pat)
{
    size_t n = strlen(pat);
    const char *hit = NULL;

    for (const char *p = text; end - p >= (long)n; p++) {
        p = memchr(p, pat[0], (size_t)(end - p) - n + 1);
        if (!p)
            break;
        if (memcmp(p, pat, n) == 0)
            hit = p;
    }
    return hit;
}

int stall_py_where(const char *text, size_t len, char *buf, size_t buflen)
{
    const char *end = text + len;
    const char *cur = find_last(text, end, "Current thread ");
    const char *any = find_last(text, end, "Thread 0x");

    if (cur && first_frame(cur, end, buf, buflen) == 0)
        return 0;
    if (any && first_frame(any, end, buf, buflen) == 0)
        return 0;
    return -1;
}

/* One line "RANK WHERE" (len bytes, no newline); 0 or -1. */
static int where_line(const char *p, size_t len, int nranks, int *rank,
                      char *where)
{
    size_t i = 0;
    long r = 0;

    for (; i < len && i < 9 && p[i] >= '0' && p[i] <= '9'; i++)
        r = r * 10 + (p[i] - '0');
    if (i == 0 || i >= len || p[i] != ' ' || r >= nranks)
        return -1;
    p += i + 1;
    len -= i + 1;
    if (len == 0 || len >= STALL_WHERE_MAX)
        return -1;
    for (size_t k = 0; k < len; k++)
        if (p[k] < 0x20 || p[k] > 0x7e)
            return -1;
    memcpy(where, p, len);
    where[len] = '\0';
    *rank = (int)r;
    return 0;
}

int stall_where_parse(const char *text, size_t len, int nranks,
                      void (*fn)(void *ctx, int rank, const char *where),
                      void *ctx)
{
    char where[STALL_WHERE_MAX];
    int bad = 0, rank;

    for (size_t at = 0; at < len;) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t n = nl ? (size_t)(nl - (text + at)) : len - at;
        if (n > 0 && where_line(text + at, n, nranks, &rank, where) == 0)
            fn(ctx, rank, where);
        else if (n > 0)
            bad++;
        at += n + 1;
    }
    return bad;
}

/* printf onto line at *k (len bytes in all); what does not fit is cut. */
__attribute__((format(printf, 4, 5)))
static void app(char *line, size_t len, size_t *k, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (*k + 1 >= len)
        return;
    va_start(ap, fmt);
    n = vsnprintf(line + *k, len - *k, fmt, ap);
    va_end(ap);
    if (n > 0)
        *k = *k + (size_t)n < len ? *k + (size_t)n : len - 1;
}

/* Append the group of entry first (every entry with its where, not yet
 * done) to line at *k. */
static void add_group(int n, const int *ranks, const char *const *hosts,
                      const char (*where)[STALL_WHERE_MAX], char *done,
                      int first, char *line, size_t len, size_t *k)
{
    int count = 0, c = 0, prev = -1;

    for (int i = first; i < n; i++)
        count += !done[i] && strcmp(where[i], where[first]) == 0;
    app(line, len, k, "%s%s ", *k ? "; " : "", count > 1 ? "ranks" : "rank");
    for (int i = first; i < n; i++) {
        if (done[i] || strcmp(where[i], where[first]) != 0)
            continue;
        done[i] = 1;
        if (prev >= 0 && strcmp(hosts[prev], hosts[i]) != 0)
            app(line, len, k, " (%s)", hosts[prev]);
        app(line, len, k, "%s%d", c++ ? ", " : "", ranks[i]);
        prev = i;
    }
    app(line, len, k, " (%s) in %s", hosts[prev], where[first]);
}

void stall_format_groups(int n, const int *ranks, const char *const *hosts,
                         const char (*where)[STALL_WHERE_MAX], char *line,
                         size_t len)
{
    char *done = calloc((size_t)(n > 0 ? n : 1), 1);
    size_t k = 0;

    line[0] = '\0';
    for (int i = 0; done && i < n; i++)
        done[i] = !where[i][0];
    for (int round = 1; done && round <= n; round++)
        for (int i = 0; i < n; i++) {
            int c = 0;
            for (int m = 0; m < n && !done[i]; m++)
                c += !done[m] && strcmp(where[m], where[i]) == 0;
            if (!done[i] && c == round)
                add_group(n, ranks, hosts, where, done, i, line, len, &k);
        }
    free(done);
}

/* Is entry first's group (its where) exactly the entries of its host? */
static int group_is_host(int n, const char *const *hosts,
                         const char (*where)[STALL_WHERE_MAX], int first)
{
    for (int i = 0; i < n; i++) {
        int same_where, same_host;

        if (!where[i][0])
            continue;
        same_where = strcmp(where[i], where[first]) == 0;
        same_host = strcmp(hosts[i], hosts[first]) == 0;
        if (same_where != same_host)
            return 0;
    }
    return 1;
}

int stall_one_node(int n, const char *const *hosts,
                   const char (*where)[STALL_WHERE_MAX])
{
    int found = -1, outside = 0;

    for (int i = 0; i < n; i++) {
        int first = 1;

        if (!where[i][0])
            continue;
        for (int m = 0; m < i && first; m++)
            first = strcmp(where[m], where[i]) != 0;
        if (!first || !group_is_host(n, hosts, where, i))
            continue;
        if (found >= 0)
            return -1;
        found = i;
    }
    for (int i = 0; found >= 0 && i < n; i++)
        outside += where[i][0] && strcmp(where[i], where[found]) != 0;
    return outside ? found : -1;
}
