/* steprate.h - the step rates of a job's ranks and its stragglers, where
 * the ranks' step counters are: the broker of a one-node dlrun (its
 * supervisor's thread) or of a head (its broker thread).  Each rank's
 * dlrun_progress() adds to dlrun.progress.RANK; once a second they go
 * into the judge of lib/observe/straggler.h, per node on several nodes,
 * per rank on one.  A straggler's line goes to lib/util/say.h's sink;
 * the ranking goes into the job's file for `dlrun status`
 * (lib/observe/jobscan.h reads it back). */
#ifndef DLRUN_STEPRATE_H
#define DLRUN_STEPRATE_H

#include <stdio.h>

#include "place/plan.h"

struct broker;
struct steprate;

#define STEPRATE_EVERY_MS 1000
#define STEPRATE_SHOWN 32       /* ranking rows kept, the slowest */

/* For the ranks of p (borrowed: it outlives the watch), naming those
 * factor times slower than the median (0: rates only).  NULL when out of
 * memory. */
struct steprate *steprate_create(const struct plan *p, double factor);
void steprate_free(struct steprate *sr);   /* NULL is a no-op */

/* Does b hold some rank's step counter? (From b's thread.) */
int steprate_seen(const struct plan *p, const struct broker *b);

/* Rank r ended: its counter is no longer read (a rank that stopped
 * stepping because it is done is no straggler). */
void steprate_ended(struct steprate *sr, int r);

/* Will steprate_tick sample now? */
int steprate_due(const struct steprate *sr);

/* About once a STEPRATE_EVERY_MS (clock_ms; never twice within 0.9 of
 * it): read the counters of b (from b's thread), judge, say one line per
 * straggler named.  Returns 1 when it sampled, else 0. */
int steprate_tick(struct steprate *sr, const struct broker *b);

/* The ranking as job-file lines, "stepmedian M node|rank" and one
 * "steps HOST RATE RATIO RANKS" per unit, slowest first (at most
 * STEPRATE_SHOWN), into f; nothing before a rate is known. */
void steprate_put(const struct steprate *sr, FILE *f);

#endif
