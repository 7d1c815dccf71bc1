/* stall_watch.c - the stall watch over the ranks a dlrun starts: the
 * samples into the detector, and the phases after a stall (frozen across
 * nodes, dumping, ended).  The report and its last line are in
 * stall_report.c. */
#include "job/stall_watch.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "job/job.h"
#include "job/stall_watch_int.h"
#include "observe/procstat.h"
#include "observe/stacksig.h"
#include "rendezvous/broker.h"
#include "rendezvous/client.h"
#include "run/output.h"
#include "util/clock.h"
#include "util/evloop.h"
#include "util/say.h"

#define CAPTURE_MAX (256 * 1024)    /* of a rank's stderr after SIGABRT */
#define DUMP_MS 15000               /* for the Python ranks to dump and end */

void job_stall_block(const struct job *j, sigset_t *set)
{
    if (j->opt.stall_timeout_ms > 0)
        sigaddset(set, SIGPWR);
}

int stall_sigfd(void)
{
    sigset_t set;

    sigemptyset(&set);
    sigaddset(&set, SIGPWR);
    return sigfd_open(&set, NULL);
}

int stall_asked(int sigfd)
{
    int got = 0;

    while (sigfd_take(sigfd) > 0)
        got = 1;
    return got;
}

long stall_interval_ms(long t)
{
    /* a sample every 1/20 of the timeout: a stall is seen within 5% */
    return t / 20 < 250 ? 250 : t / 20 > 5000 ? 5000 : t / 20;
}

struct stall_watch *job_stall_create(struct job *j, const int *ranks, int n)
{
    struct stall_watch *w;
    long t = j->opt.stall_timeout_ms;

    if (t <= 0 || n <= 0 || !(w = calloc(1, sizeof *w)))
        return NULL;
    *w = (struct stall_watch){ .j = j, .ranks = ranks, .n = n,
                               .agent = j->agent, .node = j->plan.self_node,
                               .sigfd = -1 };
    w->eng = stall_create(n, t, procstat_hz());
    w->v = calloc((size_t)n, sizeof *w->v);
    w->o = calloc((size_t)n, sizeof *w->o);
    w->pgrp = calloc((size_t)n, sizeof *w->pgrp);
    w->cpu = calloc((size_t)n, sizeof *w->cpu);
    w->want = calloc((size_t)n, sizeof *w->want);
    w->stk = calloc((size_t)n, sizeof *w->stk);
    w->nstk = calloc((size_t)n, sizeof *w->nstk);
    if (!w->eng || !w->v || !w->o || !w->pgrp || !w->cpu || !w->want ||
        !w->stk || !w->nstk) {
        job_stall_free(w);
        say("warning: --stall-timeout: out of memory, not watching");
        return NULL;
    }
    for (int i = 0; i < n; i++)
        w->o[i].last_ms = -1;
    w->sigfd = stall_sigfd();
    w->interval_ms = stall_interval_ms(t);
    /* the ranks' Python dumps its threads on SIGABRT (and on a crash) */
    setenv("PYTHONFAULTHANDLER", "1", 0);
    return w;
}

void job_stall_free(struct stall_watch *w)
{
    if (!w)
        return;
    for (int i = 0; w->o && i < w->n; i++)
        free(w->o[i].cap);
    stall_destroy(w->eng);
    client_close(w->c);
    if (w->sigfd >= 0)
        close(w->sigfd);
    free(w->v);
    free(w->o);
    free(w->pgrp);
    free(w->cpu);
    free(w->want);
    for (int i = 0; w->stk && i < w->n; i++)
        free(w->stk[i]);
    free(w->stk);
    free(w->nstk);
    free(w);
}

/* Keep a Python rank's stderr after its dump was asked for. */
static void capture(struct stall_out *o, const char *p, size_t len)
{
    size_t k = len < CAPTURE_MAX - o->ncap ? len : CAPTURE_MAX - o->ncap;
    char *c = realloc(o->cap, o->ncap + k);

    if (!c)
        return;
    memcpy(c + o->ncap, p, k);
    o->cap = c;
    o->ncap += k;
}

/* The output engine's tap: count lines, keep the last, capture dumps. */
static void tap(void *ctx, int rank, int which, const char *p, size_t len)
{
    struct stall_watch *w = ctx;
    struct stall_out *o = NULL;
    size_t end = len, start;

    for (int i = 0; i < w->n && !o; i++)
        if (w->ranks[i] == rank)
            o = &w->o[i];
    if (!o)
        return;
    o->lines++;
    o->last_ms = clock_ms();
    while (end > 0 && (p[end - 1] == '\n' || p[end - 1] == '\r'))
        end--;
    for (start = end; start > 0 && p[start - 1] != '\n'; start--)
        ;
    if (end > start)
        snprintf(o->last, sizeof o->last, "%.*s", (int)(end - start), p + start);
    if (w->capturing && which == 2 && o->python && o->ncap < CAPTURE_MAX)
        capture(o, p, len);
}

void job_stall_output(struct stall_watch *w, struct output_opts *oo)
{
    if (!w)
        return;
    oo->tap = tap;
    oo->tap_ctx = w;
}

/* CPU alone says busy and nothing else moved: the wanted ranks' stacks
 * into their samples, to tell work from a spin (observe/stall.h). */
static void sample_stacks(struct stall_watch *w)
{
    for (int i = 0; i < w->n; i++)
        if (w->want[i] && !w->stk[i] &&
            !(w->stk[i] = malloc(STALL_STACK_WORDS * sizeof *w->stk[i])))
            w->want[i] = 0;
    stacksig_groups(w->pgrp, w->want, w->n, w->stk, STALL_STACK_WORDS,
                    w->nstk, STALL_STACK_MS);
    for (int i = 0; i < w->n; i++)
        if (w->nstk[i] > 0) {
            w->v[i].stack = w->stk[i];
            w->v[i].nstack = (size_t)w->nstk[i];
        }
}

/* One sample of every rank into the detector; 1 when stalled. */
static int sample(struct stall_watch *w, long now)
{
    struct broker_stats bs = { 0 };

    if (w->broker)
        broker_get_stats(w->broker, &bs);
    for (int i = 0; i < w->n; i++)
        w->pgrp[i] = w->sv->ranks[i].pid;
    if (procstat_groups_cpu(w->pgrp, w->n, w->cpu, NULL) < 0)
        return 0;       /* no /proc: nothing is known, nothing is ended */
    for (int i = 0; i < w->n; i++)
        w->v[i] = (struct stall_sample){
            .alive = w->sv->ranks[i].running, .cpu = w->cpu[i],
            .output = w->o[i].lines, .progress = bs.requests,
        };
    if (stall_wants_stacks(w->eng, now, w->v, w->want) > 0)
        sample_stacks(w);
    return stall_feed(w->eng, now, w->v);
}

/* Every Python rank gets SIGABRT (faulthandler dumps its threads) and,
 * when frozen, SIGCONT after it: the pending SIGABRT comes first. */
void stall_dump(struct stall_watch *w)
{
    int py = 0;

    w->capturing = 1;
    for (int i = 0; i < w->n; i++)
        if (w->o[i].python && kill(w->o[i].python, SIGABRT) == 0)
            py++;
    for (int i = 0; w->phase == STALL_FROZEN && i < w->n; i++)
        if (w->sv->ranks[i].running)
            killpg(w->sv->ranks[i].pid, SIGCONT);
    if (py)
        say("the Python ranks' threads follow (faulthandler, on their "
            "stderr)");
    w->phase = STALL_DUMP;
    w->deadline_ms = clock_ms() + DUMP_MS;
}

void stall_freeze(struct stall_watch *w)
{
    struct err err = { "" };
    char key[64];

    for (int i = 0; i < w->n; i++)
        if (w->sv->ranks[i].running)
            killpg(w->sv->ranks[i].pid, SIGSTOP);
    snprintf(key, sizeof key, "dlrun.frozen.%d", w->node);
    if (w->c)
        client_put(w->c, key, "1", 1, &err);
    w->phase = STALL_FROZEN;
    w->deadline_ms = clock_ms() + STALL_FREEZE_MS;
}

/* Frozen: has the head said dump (or is it overdue)? */
static int thaw_due(struct stall_watch *w, long now)
{
    struct err err = { "" };
    void *val = NULL;
    size_t len = 0;
    int go = now >= w->deadline_ms ||
             (w->c && client_get(w->c, "dlrun.dump", 0, &val, &len, &err) ==
                      CLIENT_OK);

    free(val);
    return go;
}

static void signal_ranks(struct stall_watch *w, int sig)
{
    for (int i = 0; i < w->n; i++)
        if (w->sv->ranks[i].running)
            killpg(w->sv->ranks[i].pid, sig);
}

/* The Python ranks are done dumping (or took too long)? */
static int dumped(const struct stall_watch *w, long now)
{
    for (int i = 0; i < w->n; i++)
        if (w->o[i].python && w->sv->ranks[i].running)
            return now >= w->deadline_ms;
    return 1;
}

/* An agent's quiet node: tell the head when that changes; trip when the
 * head saw every node quiet.  1 when it must trip. */
static int agent_verdict(struct stall_watch *w, int quiet)
{
    struct err err = { "" };
    char key[64];
    void *val = NULL;
    size_t len = 0;
    int go = 0;

    if (!w->c && !(w->c = client_from_env(5000, &err)))
        return 0;
    snprintf(key, sizeof key, "dlrun.quiet.%d", w->node);
    if (quiet != w->said_quiet &&
        client_put(w->c, key, quiet ? "1" : "0", 1, &err) == CLIENT_OK)
        w->said_quiet = quiet;
    if (quiet && client_get(w->c, "dlrun.stall", 0, &val, &len, &err) ==
                 CLIENT_OK)
        go = 1;
    free(val);
    val = NULL;
    if (client_get(w->c, "dlrun.reportreq", 0, &val, &len, &err) == CLIENT_OK &&
        atoll(val) != w->asked) {
        w->asked = atoll(val);
        stall_report_all(w, clock_ms(), "asked for (SIGPWR at the head)");
    }
    free(val);
    return go;
}

static void step(struct stall_watch *w, long now)
{
    if (w->phase == STALL_WATCH) {
        int quiet = sample(w, now);
        if (stall_asked(w->sigfd))
            stall_report_all(w, now, "asked for (SIGPWR)");
        if (w->agent ? agent_verdict(w, quiet) : quiet) {
            stall_trip(w, now);
            now = clock_ms();
        }
    }
    if (w->phase == STALL_FROZEN && thaw_due(w, now))
        stall_dump(w);
    if (w->phase == STALL_DUMP && dumped(w, now)) {
        signal_ranks(w, SIGTERM);
        w->phase = STALL_TERM;
        w->deadline_ms = now + w->sv->kill_timeout_ms;
    } else if (w->phase == STALL_TERM && now >= w->deadline_ms) {
        signal_ranks(w, SIGKILL);
        w->phase = STALL_DONE;
    }
}

/* sv's periodic hook: the wrapped one's, then ours when due. */
static int tick(void *ctx, int readable)
{
    struct stall_watch *w = ctx;
    int inner = supervise_hook_call(&w->inner, readable);
    long now = clock_ms();

    if (w->phase != STALL_DONE && now >= w->next_ms) {
        step(w, now);
        w->next_ms = now + (w->phase == STALL_WATCH ? w->interval_ms : 100);
    }
    return supervise_sooner(inner, w->phase == STALL_DONE ? -1 :
                                   w->next_ms - now);
}

void job_stall_watch(struct stall_watch *w, struct supervise *sv,
                     struct broker *b)
{
    if (!w)
        return;
    w->sv = sv;
    w->broker = b;
    supervise_hook(sv, tick, w, &w->inner);
    w->next_ms = clock_ms();
}
