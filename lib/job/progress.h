/* progress.h - what dlrun is doing while a job starts: with -v each step
 * with the time since dlrun started (allocation found, plan, agents
 * started and up, rendezvous done, first rank started); always, after
 * 2 s, the nodes whose agents the head still waits for (job/progress.c). */
#ifndef DLRUN_PROGRESS_H
#define DLRUN_PROGRESS_H

#include "place/plan.h"

struct broker;

/* -v: print the steps from now on (the clock starts at this call). */
void progress_enable(int on);

/* One step, "dlrun: +1.234 s WHAT", when -v is on. */
void progress_step(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The head's view of its agents, for its broker thread. */
struct head_progress {
    const struct plan *plan;    /* borrowed */
    long start_ms, next_wait_ms;
    int all_up, rdv, ranks;     /* steps already told */
};

void progress_head_init(struct head_progress *hp, const struct plan *p);

/* From the head's broker thread (it owns b) every ~250 ms: hb holds each
 * node's heartbeat counter (0: its agent has not beaten yet).  final: the
 * last look as the broker stops (steps only, no "waiting for" line). */
void progress_head_tick(struct head_progress *hp, const struct broker *b,
                        const long long *hb, int final);

#endif
