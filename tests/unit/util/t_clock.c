/* t_clock.c - the one clock: monotonic milliseconds that never go back,
 * a wall clock near time(), and a fake that tests move by hand. */
#include "util/clock.h"

#include <time.h>
#include <unistd.h>

#include "tap.h"

static long fake_now(void *ctx)
{
    return *(long *)ctx;
}

int main(void)
{
    long a = clock_ms(), b, t = 5000, us = clock_us();
    double w = clock_wall();

    usleep(20000);
    b = clock_ms();
    ok(b >= a + 10, "the monotonic clock moves forward");
    ok(clock_us() >= us + 10000, "in microseconds too");
    ok(clock_us() / 1000 >= b, "the same clock");
    ok(w > (double)time(NULL) - 5 && w < (double)time(NULL) + 5, "the wall clock is near time()");
    clock_fake(fake_now, &t);
    is_int(clock_ms(), 5000, "a fake clock answers");
    t += 1500;
    is_int(clock_ms(), 6500, "and moves only when moved");
    is_int(clock_us(), 6500000, "in microseconds too");
    ok(clock_wall() == 6.5, "the wall clock follows it, in seconds");
    clock_fake(NULL, NULL);
    ok(clock_ms() >= b, "the real clock is back");
    return tap_done();
}
