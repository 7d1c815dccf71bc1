/* steprate.c - the step rates and stragglers of a job (steprate.h). */
#include "job/steprate.h"

#include <stdlib.h>
#include <string.h>

#include "observe/straggler.h"
#include "rendezvous/broker.h"
#include "util/clock.h"
#include "util/say.h"

struct steprate {
    const struct plan *p;       /* borrowed */
    int by_rank;                /* one node: the ranks are compared */
    struct straggler *judge;
    long long *steps;           /* nranks: the counters last read */
    unsigned char *ended;       /* nranks: 1 once the rank ended */
    int *named;
    long next_ms;
};

struct steprate *steprate_create(const struct plan *p, double factor)
{
    struct steprate *sr = calloc(1, sizeof *sr);
    int *unit_of = p->nranks > 0 ? malloc((size_t)p->nranks * sizeof *unit_of)
                                 : NULL;

    if (!sr || !unit_of)
        goto fail;
    sr->p = p;
    sr->by_rank = p->nnodes <= 1;
    for (int r = 0; r < p->nranks; r++)
        unit_of[r] = sr->by_rank ? r : p->rank_node[r];
    sr->judge = straggler_create(p->nranks, unit_of, sr->by_rank ?
                                 p->nranks : p->nnodes, factor);
    sr->steps = calloc((size_t)p->nranks, sizeof *sr->steps);
    sr->named = calloc((size_t)p->nranks, sizeof *sr->named);
    sr->ended = calloc((size_t)p->nranks, 1);
    if (!sr->judge || !sr->steps || !sr->named || !sr->ended)
        goto fail;
    free(unit_of);
    return sr;
fail:
    free(unit_of);
    steprate_free(sr);
    return NULL;
}

void steprate_free(struct steprate *sr)
{
    if (!sr)
        return;
    straggler_destroy(sr->judge);
    free(sr->steps);
    free(sr->named);
    free(sr->ended);
    free(sr);
}

/* Rank r's counter in b, or -1 when it has none. */
static long long counter(const struct broker *b, int r)
{
    char key[48], val[32], *end = NULL;
    long long v;

    snprintf(key, sizeof key, "dlrun.progress.%d", r);
    if (broker_peek(b, key, val, sizeof val) < 0)
        return -1;
    v = strtoll(val, &end, 10);
    return end != val && v >= 0 ? v : -1;
}

int steprate_seen(const struct plan *p, const struct broker *b)
{
    for (int r = 0; r < p->nranks; r++)
        if (counter(b, r) >= 0)
            return 1;
    return 0;
}

/* How unit u is called in the line and the ranking. */
static void who(const struct steprate *sr, int u, char *buf, size_t len)
{
    char ranks[200];

    if (sr->by_rank) {
        snprintf(buf, len, "rank %d (%s)", u,
                 sr->p->nodes[sr->p->rank_node[u]].host);
        return;
    }
    straggler_unit_ranks(sr->judge, u, ranks, sizeof ranks);
    snprintf(buf, len, "%s (rank%s %s)", sr->p->nodes[u].host,
             strpbrk(ranks, ",-") ? "s" : "", ranks);
}

void steprate_ended(struct steprate *sr, int r)
{
    if (sr && r >= 0 && r < sr->p->nranks)
        sr->ended[r] = 1;
}

int steprate_due(const struct steprate *sr)
{
    return sr && clock_ms() >= sr->next_ms;
}

int steprate_tick(struct steprate *sr, const struct broker *b)
{
    long now = clock_ms();
    char name[300], line[512];
    int n;

    if (!sr || now < sr->next_ms)
        return 0;
    /* a little early: a caller's once-a-second hook is never skipped */
    sr->next_ms = now + STEPRATE_EVERY_MS * 9 / 10;
    for (int r = 0; r < sr->p->nranks; r++)
        sr->steps[r] = sr->ended[r] ? -1 : counter(b, r);
    n = straggler_feed(sr->judge, sr->steps, sr->named);
    for (int i = 0; i < n; i++) {
        who(sr, sr->named[i], name, sizeof name);
        straggler_line(sr->judge, sr->named[i], name, line, sizeof line);
        say("%s", line);
    }
    return 1;
}

void steprate_put(const struct steprate *sr, FILE *f)
{
    struct straggler_row rows[STEPRATE_SHOWN];
    double median;
    int n = sr ? straggler_rank(sr->judge, rows, STEPRATE_SHOWN, &median) : 0;
    char ranks[200];

    if (n <= 0)
        return;
    fprintf(f, "stepmedian %.3f %s\n", median, sr->by_rank ? "rank" : "node");
    for (int i = 0; i < n && i < STEPRATE_SHOWN; i++) {
        int u = rows[i].unit;
        const char *host = sr->p->nodes[sr->by_rank ? sr->p->rank_node[u]
                                        : u].host;
        if (sr->by_rank)
            snprintf(ranks, sizeof ranks, "%d", u);
        else
            straggler_unit_ranks(sr->judge, u, ranks, sizeof ranks);
        fprintf(f, "steps %s %.3f %.3f %s\n", host, rows[i].rate,
                rows[i].ratio, ranks);
    }
}
