/* step_rank.c - a rank for tests/e2e/t_straggler.sh: for SECONDS seconds
 * it makes steps of MS milliseconds (three times longer when its DLRUN_RANK
 * is one of the comma-separated SLOW), calling dlrun_progress() after
 * each.  With STEP_CPU set a step is MS milliseconds of this rank's CPU
 * time instead of a sleep, so that a rank sharing its core with a hog is
 * slow as a real one is.  Exits 1 when a report fails. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dlrun.h"

static double clock_s(clockid_t id)
{
    struct timespec ts;

    clock_gettime(id, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double now_s(void)
{
    return clock_s(CLOCK_MONOTONIC);
}

/* Spend ms milliseconds of this thread's CPU time. */
static void burn(long ms)
{
    double until = clock_s(CLOCK_THREAD_CPUTIME_ID) + ms / 1e3;
    volatile unsigned long x = 0;

    while (clock_s(CLOCK_THREAD_CPUTIME_ID) < until)
        for (int i = 0; i < 10000; i++)
            x += (unsigned long)i;
}

/* Is rank one of the list "1,3"? */
static int listed(const char *list, const char *rank)
{
    char buf[256], *save = NULL;

    snprintf(buf, sizeof buf, "%s", list ? list : "");
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
        if (rank && strcmp(t, rank) == 0)
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 10, end = now_s() + secs;
    long ms = argc > 2 ? atol(argv[2]) : 100;
    struct timespec ts;

    if (listed(getenv("SLOW"), getenv("DLRUN_RANK")))
        ms *= 3;
    ts = (struct timespec){ ms / 1000, (ms % 1000) * 1000000L };
    while (now_s() < end) {
        if (getenv("STEP_CPU"))
            burn(ms);
        else
            nanosleep(&ts, NULL);
        if (dlrun_progress() != DLRUN_OK) {
            fprintf(stderr, "dlrun_progress: %s\n", dlrun_last_error());
            return 1;
        }
    }
    return 0;
}
