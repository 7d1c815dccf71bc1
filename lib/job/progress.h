/* progress.h - what dlrun is doing while a job starts: with -v each step
 * with the time since dlrun started (allocation found, plan, agents
 * started and up, rendezvous done, first rank started); always, after
 * 2 s, the nodes whose agents the head still waits for; while the job
 * runs, the head's step rates and stragglers (job/steprate.h) from the
 * ranks' counters in its broker (job/progress.c). */
#ifndef DLRUN_PROGRESS_H
#define DLRUN_PROGRESS_H

#include "place/plan.h"

struct broker;
struct steprate;

/* -v: print the steps from now on (the clock starts at this call). */
void progress_enable(int on);

/* --straggler-factor for the head's step rates (0: rates only). */
void progress_straggler(double factor);

/* One step, "dlrun: +1.234 s WHAT", when -v is on. */
void progress_step(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The head's view of its agents, for its broker thread. */
struct head_progress {
    const struct plan *plan;    /* borrowed */
    long start_ms, next_wait_ms;
    int all_up, rdv, ranks;     /* steps already told */
    int all_ranks;              /* every node's ranks seen started */
    struct steprate *steps;     /* owned: from the first rank's report to
                                 * the final look, else NULL */
    long next_steps_ms;
};

void progress_head_init(struct head_progress *hp, const struct plan *p);

/* From the head's broker thread (it owns b) every ~250 ms: hb holds each
 * node's heartbeat counter (0: its agent has not beaten yet).  final: the
 * last look as the broker stops (steps only, no "waiting for" line; the
 * step rates are freed). */
void progress_head_tick(struct head_progress *hp, const struct broker *b,
                        const long long *hb, int final);

#endif
