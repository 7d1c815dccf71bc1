/* straggler.c - step rates and the straggler judge (straggler.h). */
#include "observe/straggler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/clock.h"
#include "where/ranges.h"

struct unit {
    double rate;
    int has;                    /* a rate at the last sample */
    int slow_run, ok_run;       /* consecutive samples slow / not slow */
    int named;                  /* in an episode: named, not recovered */
    long slow_since;            /* the first slow sample of this run */
};

struct straggler {
    int nranks, nunits;
    double factor, median;
    int *unit_of;
    long t[STRAGGLER_SLOTS];
    long long *c;               /* STRAGGLER_SLOTS rows of nranks steps */
    int next, stored;           /* the slot written next; how many hold one */
    long now;                   /* the last sample's time */
    struct unit *u;
};

struct straggler *straggler_create(int nranks, const int *unit_of,
                                   int nunits, double factor)
{
    struct straggler *s = calloc(1, sizeof *s);

    if (!s || nranks < 1 || nunits < 1)
        goto fail;
    s->nranks = nranks;
    s->nunits = nunits;
    s->factor = factor;
    s->unit_of = malloc((size_t)nranks * sizeof *s->unit_of);
    s->c = calloc((size_t)nranks * STRAGGLER_SLOTS, sizeof *s->c);
    s->u = calloc((size_t)nunits, sizeof *s->u);
    if (!s->unit_of || !s->c || !s->u)
        goto fail;
    for (int r = 0; r < nranks; r++) {
        if (unit_of[r] < 0 || unit_of[r] >= nunits)
            goto fail;
        s->unit_of[r] = unit_of[r];
    }
    return s;
fail:
    straggler_destroy(s);
    return NULL;
}

void straggler_destroy(struct straggler *s)
{
    if (!s)
        return;
    free(s->unit_of);
    free(s->c);
    free(s->u);
    free(s);
}

/* Rank r's steps per second over the window, or -1 when it has none. */
static double rank_rate(const struct straggler *s, int r, int cur)
{
    long long now = s->c[(size_t)cur * s->nranks + r];

    if (now <= 0)
        return -1;
    for (int i = s->stored - 1; i >= 1; i--) {     /* the oldest first */
        int k = (cur - i + STRAGGLER_SLOTS) % STRAGGLER_SLOTS;
        long long then = s->c[(size_t)k * s->nranks + r];
        long span = s->now - s->t[k];
        if (span > STRAGGLER_WINDOW_MS || then < 0 || then > now)
            continue;
        return span >= STRAGGLER_MIN_SPAN_MS ?
               (double)(now - then) * 1000.0 / (double)span : -1;
    }
    return -1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* Every unit's rate from its ranks', and the median; how many have one. */
static int unit_rates(struct straggler *s, int cur)
{
    int *n = calloc((size_t)s->nunits, sizeof *n);
    double *v = calloc((size_t)s->nunits, sizeof *v);
    int have = 0;

    for (int u = 0; u < s->nunits; u++)
        s->u[u].rate = 0;
    for (int r = 0; r < s->nranks && n; r++) {
        double x = rank_rate(s, r, cur);
        if (x >= 0) {
            s->u[s->unit_of[r]].rate += x;
            n[s->unit_of[r]]++;
        }
    }
    for (int u = 0; u < s->nunits; u++) {
        s->u[u].has = n && n[u] > 0;
        if (s->u[u].has)
            s->u[u].rate /= n[u];
        if (s->u[u].has && v)
            v[have++] = s->u[u].rate;
    }
    qsort(v, v ? (size_t)have : 0, sizeof *v, cmp_double);
    s->median = v && have ? v[have / 2] : 0;
    free(n);
    free(v);
    return v ? have : 0;
}

/* Judge unit x at this sample; 1 when it is named now. */
static int judge(struct straggler *s, struct unit *x, int have)
{
    int slow = x->has && have >= 2 && s->factor > 1 && s->median > 0 &&
               x->rate * s->factor < s->median;

    if (!x->has) {
        x->slow_run = x->ok_run = 0;
        return 0;
    }
    if (!slow) {
        x->slow_run = 0;
        if (x->named && ++x->ok_run >= STRAGGLER_SUSTAIN)
            x->named = x->ok_run = 0;
        return 0;
    }
    x->ok_run = 0;
    if (x->slow_run++ == 0)
        x->slow_since = s->now;
    if (x->slow_run < STRAGGLER_SUSTAIN || x->named)
        return 0;
    x->named = 1;
    return 1;
}

int straggler_feed(struct straggler *s, const long long *steps, int *named)
{
    int cur = s->next, have, k = 0;

    s->now = clock_ms();
    s->t[cur] = s->now;
    memcpy(&s->c[(size_t)cur * s->nranks], steps,
           (size_t)s->nranks * sizeof *steps);
    s->next = (cur + 1) % STRAGGLER_SLOTS;
    if (s->stored < STRAGGLER_SLOTS)
        s->stored++;
    have = unit_rates(s, cur);
    for (int u = 0; u < s->nunits; u++)
        if (judge(s, &s->u[u], have))
            named[k++] = u;
    return k;
}

static int cmp_row(const void *a, const void *b)
{
    const struct straggler_row *x = a, *y = b;

    return x->rate < y->rate ? -1 : x->rate > y->rate ? 1 : x->unit - y->unit;
}

int straggler_rank(const struct straggler *s, struct straggler_row *rows,
                   int max, double *median)
{
    struct straggler_row *all = calloc((size_t)s->nunits, sizeof *all);
    int n = 0;

    *median = s->median;
    for (int u = 0; u < s->nunits && all; u++)
        if (s->u[u].has)
            all[n++] = (struct straggler_row){ u, s->u[u].rate,
                s->u[u].rate > 0 ? s->median / s->u[u].rate : 0 };
    if (all)
        qsort(all, (size_t)n, sizeof *all, cmp_row);
    if (all && rows && max > 0)
        memcpy(rows, all, (size_t)(n < max ? n : max) * sizeof *rows);
    free(all);
    return n;
}

void straggler_unit_ranks(const struct straggler *s, int u, char *buf,
                          size_t len)
{
    int *v = malloc((size_t)s->nranks * sizeof *v), n = 0;
    char *text = NULL;

    for (int r = 0; r < s->nranks && v; r++)
        if (s->unit_of[r] == u)
            v[n++] = r;
    text = v ? ranges_format(v, n) : NULL;
    snprintf(buf, len, "%s", text ? text : "");
    free(text);
    free(v);
}

void straggler_line(const struct straggler *s, int u, const char *who,
                    char *line, size_t len)
{
    const struct unit *x = &s->u[u];
    long secs = (s->now - x->slow_since + 500) / 1000;

    if (x->rate > 0)
        snprintf(line, len, "straggler: %s at %.1f steps/s, %.1fx slower "
                 "than the median %.1f for %ld s", who, x->rate,
                 s->median / x->rate, s->median, secs);
    else
        snprintf(line, len, "straggler: %s at 0 steps/s while the median "
                 "is %.1f, for %ld s", who, s->median, secs);
}
