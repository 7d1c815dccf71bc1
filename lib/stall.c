/* stall.c - see stall.h. */
#include "stall.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct stall_rank {
    struct stall_sample last;   /* the previous sample */
    unsigned long long base;    /* cpu at the last activity of any rank */
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
    free(s->r);
    free(s);
}

void stall_reset(struct stall *s)
{
    s->started = 0;
}

/* Was rank r active since the last sample (output, progress) or since the
 * last activity of any rank (CPU)?  CPU counts above 1% of one CPU over
 * all that time, plus two ticks for the clock's grain: a blocked rank's
 * helper threads (thread pools, timers) wake now and then, which is not
 * work, and a short interval would see one tick of theirs as 4%. */
static int active(const struct stall *s, const struct stall_rank *r,
                  const struct stall_sample *v, long quiet_ms)
{
    unsigned long long dcpu = v->cpu > r->base ? v->cpu - r->base : 0;
    double used_ms = (double)dcpu * 1000.0 / (double)s->hz;

    if (!v->alive || !r->last.alive)
        return 0;
    return v->output != r->last.output || v->progress != r->last.progress ||
           used_ms > (double)quiet_ms / 100.0 + 2000.0 / (double)s->hz;
}

int stall_feed(struct stall *s, long now_ms, const struct stall_sample *v)
{
    int any = !s->started;

    for (int i = 0; i < s->n && !any; i++)
        any = active(s, &s->r[i], &v[i], now_ms - s->active_ms);
    for (int i = 0; i < s->n; i++) {
        if (any)
            s->r[i].base = v[i].cpu;
        s->r[i].last = v[i];
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
    line = strtol(fend + 8, NULL, 10);
    for (fn = fend + 8; fn < eol && *fn != ' '; fn++)
        ;
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
