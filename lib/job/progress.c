/* progress.c - the steps of a start with -v, the head's word about the
 * agents it still waits for, and its step rates (job/steprate.h). */
#include "job/progress.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "job/status.h"
#include "job/steprate.h"
#include "rendezvous/broker.h"
#include "util/clock.h"
#include "util/say.h"

#define WAIT_FIRST_MS 2000      /* say who is missing after this */
#define WAIT_AGAIN_MS 10000     /* and again this often */

static int enabled;
static long t0_ms;
static double straggler_factor;

void progress_straggler(double factor)
{
    straggler_factor = factor;
}

void progress_enable(int on)
{
    enabled = on;
    t0_ms = clock_ms();
}

void progress_step(const char *fmt, ...)
{
    char line[600];
    va_list ap;

    if (!enabled)
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    say("+%.3f s %s", (clock_ms() - t0_ms) / 1000.0, line);
}

void progress_head_init(struct head_progress *hp, const struct plan *p)
{
    memset(hp, 0, sizeof *hp);
    hp->plan = p;
    hp->start_ms = clock_ms();
    hp->next_wait_ms = hp->start_ms + WAIT_FIRST_MS;
}

/* Is node i's agent up: it beat, (a preflight's) it reported, or it
 * already reported its ranks' end (a short job may end before the first
 * heartbeat is seen: the steps must not depend on the machine's speed)? */
static int node_up(const struct broker *b, const long long *hb, int i)
{
    char key[64], val[8];

    if (hb[i] > 0)
        return 1;
    snprintf(key, sizeof key, "dlrun.hb.%d", i);     /* beat since hb[] */
    if (broker_peek(b, key, val, sizeof val) == 0)
        return 1;
    snprintf(key, sizeof key, "dlrun.pf.rep.%d", i);
    if (broker_peek(b, key, val, sizeof val) == 0)
        return 1;
    snprintf(key, sizeof key, "dlrun.ranks.%d", i);
    if (broker_peek(b, key, val, sizeof val) == 0)
        return 1;
    /* its ports for the rendezvous: an agent may publish them before its
     * heartbeat thread's first beat (agent_rdv.c) */
    snprintf(key, sizeof key, "dlrun.ports.%d", i);
    return broker_peek(b, key, val, sizeof val) == 0;
}

/* "node3, node4" (the first 8, then "and N more") of the missing nodes;
 * how many. */
static int missing(struct head_progress *hp, const struct broker *b,
                   const long long *hb, char *out, size_t len)
{
    size_t used = 0;
    int n = 0;

    out[0] = '\0';
    for (int i = 0; i < hp->plan->nnodes; i++) {
        if (node_up(b, hb, i))
            continue;
        if (n < 8 && used < len)
            used += (size_t)snprintf(out + used, len - used, "%s%s",
                                     n ? ", " : "", hp->plan->nodes[i].host);
        n++;
    }
    if (n > 8 && used < len)
        snprintf(out + used, len - used, " and %d more", n - 8);
    return n;
}

/* The first rank's status (job/status.c) or the rendezvous key. */
static int any_key(const struct broker *b, const char *prefix, int n)
{
    char key[64], val[8];

    for (int i = 0; i < n; i++) {
        snprintf(key, sizeof key, "%s%d", prefix, i);
        if (broker_peek(b, key, val, sizeof val) == 0)
            return 1;
    }
    return 0;
}

/* Has every node's agent put its ranks' status? */
static int every_key(const struct broker *b, const char *prefix, int n)
{
    char key[64], val[8];

    for (int i = 0; i < n; i++) {
        snprintf(key, sizeof key, "%s%d", prefix, i);
        if (broker_peek(b, key, val, sizeof val) != 0)
            return 0;
    }
    return 1;
}

/* Did node i's agent report its ranks' end (run/failwire.h)? */
static int node_ended(const struct broker *b, int i)
{
    char key[64], val[8];

    snprintf(key, sizeof key, "dlrun.ranks.%d", i);
    return broker_peek(b, key, val, sizeof val) == 0;
}

/* The step rates, from the first rank's dlrun_progress on (a job that
 * never reports costs one look a second); freed at the final look. */
static void steps_tick(struct head_progress *hp, const struct broker *b,
                       int final)
{
    long now = clock_ms();

    if (!hp->steps && !final && now >= hp->next_steps_ms) {
        hp->next_steps_ms = now + STEPRATE_EVERY_MS;
        if (steprate_seen(hp->plan, b))
            hp->steps = steprate_create(hp->plan, straggler_factor);
    }
    for (int r = 0; steprate_due(hp->steps) && r < hp->plan->nranks; r++)
        if (node_ended(b, hp->plan->rank_node[r]))
            steprate_ended(hp->steps, r);
    if (!final && steprate_tick(hp->steps, b))
        status_head_steps(hp->steps);
    if (final) {
        steprate_free(hp->steps);
        hp->steps = NULL;
    }
}

void progress_head_tick(struct head_progress *hp, const struct broker *b,
                        const long long *hb, int final)
{
    char who[400], val[8];
    long now = clock_ms();

    if (!hp->all_up) {
        int n = missing(hp, b, hb, who, sizeof who);
        /* the rendezvous is published once every agent took part: all
         * are up, whatever this look found (the steps stay in order) */
        if (n == 0 || broker_peek(b, "dlrun.rdv", val, sizeof val) == 0) {
            hp->all_up = 1;
            progress_step("agents up on all %d nodes", hp->plan->nnodes);
        } else if (!final && now >= hp->next_wait_ms) {
            say("waiting for the agent%s on %s (%ld s; %d of %d nodes up)",
                n == 1 ? "" : "s", who, (now - hp->start_ms) / 1000,
                hp->plan->nnodes - n, hp->plan->nnodes);
            hp->next_wait_ms = now + WAIT_AGAIN_MS;
        }
    }
    if (!hp->rdv && broker_peek(b, "dlrun.rdv", val, sizeof val) == 0) {
        hp->rdv = 1;
        progress_step("rendezvous done");
    }
    if (!hp->ranks && any_key(b, "dlrun.st.", hp->plan->nnodes)) {
        hp->ranks = 1;
        progress_step("first ranks started");
    }
    if (hp->ranks && !hp->all_ranks &&
        every_key(b, "dlrun.st.", hp->plan->nnodes))
        hp->all_ranks = 1;
    steps_tick(hp, b, final);
}
