/* t_engine.c - the run engine's attempts (lib/run/engine.h) with scripted
 * attempts: a success ends at once, a failure restarts up to
 * max_restarts and says so before each, a stop signal ends it, SIGUSR1
 * does not, an attempt that could not run is not retried, and the
 * caller's counter is the one counted. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "run/engine.h"
#include "tap.h"

/* Attempt i ends as script[i] (the last one repeats). */
struct script {
    const struct engine_end *ends;
    int n, calls, told;
    int seen_restart[8];        /* *e->restart at each attempt */
    char log[256];
};

static void scripted(void *ctx, const struct engine *e, struct engine_end *end)
{
    struct script *s = ctx;
    int i = s->calls < s->n ? s->calls : s->n - 1;

    if (s->calls < 8)
        s->seen_restart[s->calls] = *e->restart;
    s->calls++;
    *end = s->ends[i];
}

static void restarting(void *ctx, const struct engine *e)
{
    struct script *s = ctx;
    size_t len = strlen(s->log);

    s->told++;
    snprintf(s->log + len, sizeof s->log - len, "[%d/%d]", *e->restart,
             e->max_restarts);
}

static int run(const struct engine_end *ends, int n, int max, int *restart,
               struct script *s, struct engine_end *last)
{
    struct engine e = { .max_restarts = max, .restart = restart,
                        .attempt = scripted, .restarting = restarting,
                        .ctx = s };

    memset(s, 0, sizeof *s);
    s->ends = ends;
    s->n = n;
    return engine_run(&e, last);
}

int main(void)
{
    static const struct engine_end ok0[] = { { 0, 0, 0 } };
    static const struct engine_end fail3[] = { { 3, 1, 0 } };
    static const struct engine_end fail_then_ok[] = { { 3, 1, 0 },
                                                      { 0, 0, 0 } };
    static const struct engine_end term[] = { { 143, 1, SIGTERM } };
    static const struct engine_end usr1[] = { { 138, 1, SIGUSR1 },
                                              { 0, 0, 0 } };
    static const struct engine_end nostart[] = { { 1, 0, 0 } };
    struct engine_end last;
    struct script s;
    int restart = 0;

    is_int(run(ok0, 1, 3, &restart, &s, &last), 0, "a success: exit 0");
    is_int(s.calls, 1, "  one attempt");
    is_int(restart, 0, "  no restart counted");

    is_int(run(fail3, 1, 2, &restart, &s, &last), 3,
           "a failure every time: the last one's code");
    is_int(s.calls, 3, "  1 + max_restarts attempts");
    is_int(restart, 2, "  the caller's counter counted up");
    is_str(s.log, "[1/2][2/2]", "  told before each restart, counted");
    ok(s.seen_restart[0] == 0 && s.seen_restart[2] == 2,
       "  each attempt sees its restart number");
    ok(last.rc == 3 && last.failed == 1, "  *last: the last attempt's end");

    restart = 0;
    is_int(run(fail_then_ok, 2, 5, &restart, &s, &last), 0,
           "a failure, then a success: 0");
    is_int(s.calls, 2, "  two attempts");
    is_int(s.told, 1, "  one restart told");

    restart = 0;
    is_int(run(fail3, 1, 0, &restart, &s, NULL), 3,
           "--max-restarts 0: one attempt");
    is_int(s.calls, 1, "  only");

    restart = 1;
    is_int(run(fail3, 1, 1, &restart, &s, NULL), 3,
           "restarts already used up: no more");
    is_int(s.calls, 1, "  one attempt");

    restart = 0;
    is_int(run(term, 1, 3, &restart, &s, NULL), 143,
           "told to stop (SIGTERM): no restart");
    is_int(s.calls, 1, "  one attempt");

    restart = 0;
    is_int(run(usr1, 2, 3, &restart, &s, NULL), 0,
           "SIGUSR1 is the ranks' business: restarted");
    is_int(s.calls, 2, "  two attempts");

    restart = 0;
    is_int(run(nostart, 1, 3, &restart, &s, NULL), 1,
           "an attempt that could not start: not retried");
    is_int(s.calls, 1, "  one attempt");

    ok(engine_stop_signal(SIGTERM) && engine_stop_signal(SIGINT) &&
       engine_stop_signal(SIGHUP) && engine_stop_signal(SIGQUIT),
       "TERM, INT, HUP, QUIT stop dlrun");
    ok(!engine_stop_signal(SIGUSR1) && !engine_stop_signal(SIGUSR2) &&
       !engine_stop_signal(0), "USR1, USR2 and none do not");
    return tap_done();
}
