/* t_straggler.c - the step rates and the straggler judge
 * (lib/observe/straggler.c) on a fake clock with made-up step counts. */
#include <stdio.h>
#include <string.h>

#include "observe/straggler.h"
#include "tap.h"
#include "util/clock.h"

static long now_ms;

static long fake(void *ctx)
{
    (void)ctx;
    return now_ms;
}

/* A second passes and every rank r makes rate[r] steps (-1: none known). */
static int tick(struct straggler *s, long long *steps, const int *rate,
                int n, int *named)
{
    now_ms += 1000;
    for (int r = 0; r < n; r++)
        steps[r] = rate[r] < 0 ? -1 : steps[r] + rate[r];
    return straggler_feed(s, steps, named);
}

/* Four nodes of two ranks; node 2 runs at a quarter of the others. */
static void nodes(void)
{
    int unit_of[8] = { 0, 0, 1, 1, 2, 2, 3, 3 }, named[4], got = 0, n;
    int rate[8] = { 10, 10, 10, 10, 2, 3, 10, 10 };
    long long steps[8] = { 0 };
    struct straggler *s = straggler_create(8, unit_of, 4, 2.0);
    struct straggler_row rows[4];
    double median;
    char line[200], ranks[64];

    ok(s != NULL, "created");
    n = tick(s, steps, rate, 8, named);
    is_int(n, 0, "one sample: no rate yet");
    is_int(straggler_rank(s, rows, 4, &median), 0, "nothing ranked yet");
    for (int i = 0; i < 2; i++)
        got += tick(s, steps, rate, 8, named);
    is_int(got, 0, "slow at 2 samples: not named yet");
    n = tick(s, steps, rate, 8, named);
    is_int(n, 1, "slow at 3 consecutive samples: named");
    is_int(named[0], 2, "the slow node");
    is_int(straggler_rank(s, rows, 4, &median), 4, "four nodes ranked");
    is_int(rows[0].unit, 2, "the slowest first");
    ok(rows[0].rate > 2.49 && rows[0].rate < 2.51, "its rate: the mean of its ranks'");
    ok(median > 9.99 && median < 10.01, "the median");
    ok(rows[0].ratio > 3.99 && rows[0].ratio < 4.01, "its ratio to the median");
    straggler_unit_ranks(s, 2, ranks, sizeof ranks);
    is_str(ranks, "4-5", "its ranks");
    straggler_line(s, 2, "node2 (ranks 4-5)", line, sizeof line);
    is_str(line, "straggler: node2 (ranks 4-5) at 2.5 steps/s, 4.0x slower "
           "than the median 10.0 for 2 s", "the line");
    got = 0;
    for (int i = 0; i < 10; i++)
        got += tick(s, steps, rate, 8, named);
    is_int(got, 0, "still slow: named once per episode");
    rate[4] = rate[5] = 10;     /* it recovers */
    for (int i = 0; i < 8; i++)
        got += tick(s, steps, rate, 8, named);
    is_int(got, 0, "recovered: nothing said");
    rate[4] = rate[5] = 1;      /* and slows down again */
    got = 0;    /* the 5 s window forgets the fast steps in 3 samples */
    for (int i = 0; i < 6; i++)
        got += tick(s, steps, rate, 8, named);
    is_int(got, 1, "slow again after recovering: a new episode, named again");
    straggler_destroy(s);
}

/* The factor, a blip shorter than the sustain window, a unit without
 * progress data. */
static void judging(void)
{
    int unit_of[4] = { 0, 1, 2, 3 }, named[4], got = 0;
    int rate[4] = { 10, 10, 6, -1 };
    long long steps[4] = { 0 };
    struct straggler *s = straggler_create(4, unit_of, 4, 2.0);
    struct straggler_row rows[4];
    double median;

    for (int i = 0; i < 10; i++)
        got += tick(s, steps, rate, 4, named);
    is_int(got, 0, "1.7x slower with a factor of 2: not named");
    is_int(straggler_rank(s, rows, 4, &median), 3,
           "the unit without progress data is not ranked");
    ok(median > 9.99 && median < 10.01, "nor counted in the median");
    rate[2] = 2;                /* two slow samples, then back */
    got += tick(s, steps, rate, 4, named);
    got += tick(s, steps, rate, 4, named);
    rate[2] = 40;
    got += tick(s, steps, rate, 4, named);
    is_int(got, 0, "slow for less than the sustain window: not named");
    straggler_destroy(s);
    /* rates only: a factor of 0 names nobody */
    s = straggler_create(4, unit_of, 4, 0);
    rate[2] = 1;
    for (int i = 0; i < 10; i++)
        got += tick(s, steps, rate, 4, named);
    is_int(got, 0, "no factor: nobody named");
    is_int(straggler_rank(s, rows, 4, &median), 3, "but ranked");
    is_int(rows[0].unit, 2, "slowest first");
    straggler_destroy(s);
}

/* Two units: the slower is compared with the faster (the upper median);
 * one unit alone is never judged; a stuck unit; bad maps. */
static void edges(void)
{
    int unit_of[2] = { 0, 1 }, one[2] = { 0, 0 }, bad[2] = { 0, 2 };
    int named[2], got = 0, rate[2] = { 9, 3 };
    long long steps[2] = { 0 };
    struct straggler *s = straggler_create(2, unit_of, 2, 2.0);
    char line[200];

    for (int i = 0; i < 4; i++)
        got += tick(s, steps, rate, 2, named);
    is_int(got, 1, "of two units, one 3x slower: named");
    is_int(named[0], 1, "the slower");
    straggler_destroy(s);
    s = straggler_create(2, one, 1, 2.0);
    got = 0;
    for (int i = 0; i < 6; i++)
        got += tick(s, steps, rate, 2, named);
    is_int(got, 0, "one unit: nothing to compare with");
    straggler_destroy(s);
    s = straggler_create(2, unit_of, 2, 2.0);
    steps[0] = steps[1] = 5;
    rate[1] = 0;                /* stuck after some steps */
    got = 0;
    for (int i = 0; i < 4; i++)
        got += tick(s, steps, rate, 2, named);
    is_int(got, 1, "a unit that stopped stepping: named");
    straggler_line(s, 1, "rank 1 (h)", line, sizeof line);
    is_str(line, "straggler: rank 1 (h) at 0 steps/s while the median is "
           "9.0, for 2 s", "its line");
    straggler_destroy(s);
    ok(straggler_create(2, bad, 2, 2.0) == NULL, "a unit out of range: refused");
    ok(straggler_create(0, unit_of, 2, 2.0) == NULL, "no ranks: refused");
    straggler_destroy(NULL);
}

int main(void)
{
    clock_fake(fake, NULL);
    nodes();
    judging();
    edges();
    clock_fake(NULL, NULL);
    return tap_done();
}
