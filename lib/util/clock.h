/* clock.h - the one clock of dlrun's timers, deadlines and reports.
 *
 * clock_ms is CLOCK_MONOTONIC in milliseconds: what every timeout,
 * heartbeat window and -v step measures.  A unit test that drives a job,
 * a heartbeat check or a stall window without waiting installs a fake
 * clock (clock_fake) and moves it by hand; nothing else ever does. */
#ifndef DLRUN_CLOCK_H
#define DLRUN_CLOCK_H

/* Milliseconds on the monotonic clock (or the fake one). */
long clock_ms(void);

/* The same clock in microseconds (the fake one's milliseconds * 1000):
 * for a network round trip, which a millisecond cannot measure. */
long clock_us(void);

/* Seconds since the epoch, with a fraction (CLOCK_REALTIME, or the fake
 * one's milliseconds / 1000): the times --summary and status report. */
double clock_wall(void);

/* Tests: from now on clock_ms returns fn(ctx) (ctx borrowed) and
 * clock_wall fn(ctx) / 1000.0; NULL puts the real clocks back. */
void clock_fake(long (*fn)(void *ctx), void *ctx);

#endif
