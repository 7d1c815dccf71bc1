/* straggler.h - step rates and the straggler judge (--straggler-factor,
 * `dlrun status`'s ranking): fed with how many steps each rank reported
 * so far (dlrun_progress), no processes of its own; the time is
 * lib/util/clock.h's clock_ms(), so that tests drive it with clock_fake.
 *
 * The ranks fall into units: the nodes of a job on several nodes, the
 * ranks themselves on one node (the caller decides, by the map it gives).
 * A rank's rate is its steps over the last STRAGGLER_WINDOW_MS (at least
 * STRAGGLER_MIN_SPAN_MS of samples); a unit's is the mean of its ranks'
 * rates.  A rank that has not reported a step yet, or ended, has no rate;
 * a unit none of whose ranks has one is left out of the median and never
 * judged.  The median is that of the units with a rate (of an even count
 * the upper of the two middle ones, so that of two units the slower one
 * is compared with the faster).  A unit is slow at a sample when its
 * rate times the factor is below the median; slow at STRAGGLER_SUSTAIN
 * consecutive samples it is named once, and named again only after it
 * was not slow at STRAGGLER_SUSTAIN consecutive samples (an episode). */
#ifndef DLRUN_STRAGGLER_H
#define DLRUN_STRAGGLER_H

#include <stddef.h>

#define STRAGGLER_WINDOW_MS 5000
#define STRAGGLER_MIN_SPAN_MS 1000
#define STRAGGLER_SUSTAIN 3
#define STRAGGLER_SLOTS 16          /* samples kept: a window of them */

struct straggler;

/* A judge of nranks ranks, rank r in unit unit_of[r] (0..nunits-1; the
 * map is copied), naming units slower than the median by factor (> 1;
 * 0: rates and ranking only, nobody named).  NULL when out of memory or
 * the map is bad. */
struct straggler *straggler_create(int nranks, const int *unit_of,
                                   int nunits, double factor);
void straggler_destroy(struct straggler *s);  /* NULL is a no-op */

/* One sample at clock_ms(): steps[r] is how many steps rank r reported
 * so far (monotonic), or -1 when unknown (ended, nothing yet).  Writes
 * the units named at this sample into named (room for nunits) and
 * returns how many. */
int straggler_feed(struct straggler *s, const long long *steps, int *named);

/* One unit's place in the ranking. */
struct straggler_row {
    int unit;
    double rate;        /* steps per second */
    double ratio;       /* the median over rate (0 when rate is 0) */
};

/* The units with a rate at the last sample, slowest first, into rows
 * (room for max); returns how many (all of them, even past max); *median
 * gets the median (0 when no unit has a rate). */
int straggler_rank(const struct straggler *s, struct straggler_row *rows,
                   int max, double *median);

/* The ranks of unit u as ranges ("8-11", "0,4"), into buf (len bytes). */
void straggler_unit_ranks(const struct straggler *s, int u, char *buf,
                          size_t len);

/* The line naming unit u (as the last feed named it), who being how the
 * unit is called ("node3 (ranks 8-11)", "rank 1 (node1)"): "straggler:
 * node3 (ranks 8-11) at 2.1 steps/s, 2.4x slower than the median 5.0 for
 * 3 s", into line (len bytes). */
void straggler_line(const struct straggler *s, int u, const char *who,
                    char *line, size_t len);

#endif
