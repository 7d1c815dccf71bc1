/* clock.c - the one clock (clock.h). */
#include "util/clock.h"

#include <time.h>

static long (*fake_fn)(void *ctx);
static void *fake_ctx;

long clock_ms(void)
{
    struct timespec ts;

    if (fake_fn)
        return fake_fn(fake_ctx);
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

long clock_us(void)
{
    struct timespec ts;

    if (fake_fn)
        return fake_fn(fake_ctx) * 1000L;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000L + ts.tv_nsec / 1000L;
}

double clock_wall(void)
{
    struct timespec ts;

    if (fake_fn)
        return (double)fake_fn(fake_ctx) / 1000.0;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void clock_fake(long (*fn)(void *ctx), void *ctx)
{
    fake_fn = fn;
    fake_ctx = ctx;
}
