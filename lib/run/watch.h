/* watch.h - the run engine's worker threads: a watcher calls one step
 * again and again beside the main thread (a heartbeat, a report
 * collector, an echo server) until the step says it is done or its owner
 * stops it.
 *
 * Every watcher runs with every signal blocked: signals are the main
 * thread's, read by the supervisor's signalfd (lib/run/supervise.h).  The
 * caller blocks them there before it starts a watcher or forks. */
#ifndef DLRUN_WATCH_H
#define DLRUN_WATCH_H

#include "util/err.h"

struct watch;

/* One step of a watcher: ctx (borrowed) and wake, an fd that becomes
 * readable when watch_stop asks the watcher to end (for a step that
 * blocks in poll).  Returns 0 to be called again, anything else to end
 * the watcher (then done sees it). */
typedef int watch_step_fn(void *ctx, int wake);

/* Called once in the watcher's thread after its last step, with that
 * step's result (0 when watch_stop ended it between steps). */
typedef void watch_done_fn(void *ctx, int last);

/* Start a watcher: step(ctx, wake) until it returns non-zero or
 * watch_stop, then done(ctx, last) if done is set.  ctx is borrowed and
 * must outlive the watcher (watch_stop, or watch_detach's end).  NULL
 * with err (no eventfd, no thread). */
struct watch *watch_start(watch_step_fn *step, watch_done_fn *done, void *ctx,
                          struct err *err);

/* Ask the watcher to end after its current step (its wake fd becomes
 * readable), wait for it, free w.  NULL is a no-op.  A step that blocks
 * without polling wake delays this by up to its own timeout. */
void watch_stop(struct watch *w);

/* Let the watcher run on by itself: it ends when its step says so (or
 * with the process) and frees w then; the caller must not use w again.
 * For a watcher whose step may block for long (a read on a lifeline)
 * and whose end nobody needs to wait for. */
void watch_detach(struct watch *w);

/* Has the watcher's step ended it (its done ran, or is running)?  For
 * tests and owners that poll. */
int watch_ended(const struct watch *w);

#endif
