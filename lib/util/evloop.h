/* evloop.h - one small event loop for the run machinery: file descriptors
 * with callbacks, timers, signals read through a signalfd, and a stop.
 *
 * It opens no socket of its own: what it watches is given (a broker's
 * epoll fd, an ssh channel's socket, a pipe, an eventfd), so a test drives
 * it in-process with pipes.  One thread runs a loop; callbacks may add and
 * remove fds, arm timers and stop the loop.  Errors: 0/-1 with struct err.
 *
 *     struct evloop *l = evloop_create(&err);
 *     evloop_add_fd(l, fd, on_readable, ctx, &err);
 *     evloop_add_signals(l, (const int[]){ SIGTERM, SIGINT, 0 }, on_sig, ctx, &err);
 *     rc = evloop_run(l, &err);       // until a callback calls evloop_stop
 *     evloop_destroy(l);
 */
#ifndef DLRUN_EVLOOP_H
#define DLRUN_EVLOOP_H

#include <signal.h>

#include "util/err.h"

struct evloop;
struct evloop_timer;

/* fd polled readable, hung up or failed (revents: poll's bits).  0 to go
 * on; -1 with err ends evloop_run with -1. */
typedef int (*evloop_fd_fn)(void *ctx, int fd, short revents, struct err *err);

/* A timer came due (it is disarmed first: re-arm it with evloop_timer_set,
 * unless it has a period).  0, or -1 with err as above. */
typedef int (*evloop_timer_fn)(void *ctx, struct err *err);

/* One of the signals given to evloop_add_signals arrived. */
typedef int (*evloop_sig_fn)(void *ctx, int sig, struct err *err);

/* An empty loop; the caller frees it with evloop_destroy.  NULL with err. */
struct evloop *evloop_create(struct err *err);

/* Close the signalfd the loop made (the signals stay blocked: one still
 * pending must not kill the process now), free the timers, free l.  The
 * watched fds are the caller's and stay open.  NULL is a no-op. */
void evloop_destroy(struct evloop *l);

/* Call fn(ctx, ...) whenever fd (borrowed; the caller keeps it open while
 * watched) polls readable.  -1 with err when out of memory. */
int evloop_add_fd(struct evloop *l, int fd, evloop_fd_fn fn, void *ctx,
                  struct err *err);

/* Stop watching fd (no-op if it is not watched); safe from a callback:
 * the watch is not called again, not even for this turn's events. */
void evloop_del_fd(struct evloop *l, int fd);

/* A timer first due in first_ms (-1: disarmed), then every period_ms (-1:
 * once, until evloop_timer_set arms it again).  Owned by l.  NULL with
 * err when out of memory. */
struct evloop_timer *evloop_add_timer(struct evloop *l, int first_ms,
                                      int period_ms, evloop_timer_fn fn,
                                      void *ctx, struct err *err);

/* Due in ms from now (0: at the next turn), or disarmed with ms < 0. */
void evloop_timer_set(struct evloop_timer *t, int ms);

/* Block sigs (0-terminated; in this thread, and so in the threads it
 * starts later) and call fn for each that arrives, read from a signalfd.
 * Once per loop.  -1 with err. */
int evloop_add_signals(struct evloop *l, const int *sigs, evloop_sig_fn fn,
                       void *ctx, struct err *err);

/* evloop_add_signals whose callback stops the loop with the signal's
 * number as evloop_run's code. */
int evloop_stop_on_signals(struct evloop *l, const int *sigs, struct err *err);

/* Stop the loop (code 0) once fd (borrowed: an eventfd or a pipe another
 * thread writes to) polls readable: how another thread ends a loop. */
int evloop_stop_on_fd(struct evloop *l, int fd, struct err *err);

/* End evloop_run with code (>= 0) once the running callback returns. */
void evloop_stop(struct evloop *l, int code);

/* Wait and call back until evloop_stop: its code; -1 with err when a
 * callback failed or poll itself did. */
int evloop_run(struct evloop *l, struct err *err);

/* A non-blocking, close-on-exec signalfd for set, whose signals the
 * caller blocked (for a loop of the caller's own).  -1 with err. */
int sigfd_open(const sigset_t *set, struct err *err);

/* The next signal waiting on sfd (non-blocking), 0 when none. */
int sigfd_take(int sfd);

/* One of sigs (0-terminated; blocked by the caller) that is pending,
 * taken without waiting (sigtimedwait with a zero timeout), 0 when none:
 * for a signal that came between two loops. */
int sig_take_pending(const int *sigs);

#endif
