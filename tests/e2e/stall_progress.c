/* stall_progress.c - a rank for tests/e2e/t_stall.sh: idle (sleeping, no
 * output) for SECONDS seconds, calling dlrun_progress() every 0.3 s from
 * a second thread when REPORT=1.  Exits 1 when a report fails. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dlrun.h"

static void nap(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

    nanosleep(&ts, NULL);
}

static void *reporter(void *arg)
{
    long n = *(long *)arg;

    for (long i = 0; i < n; i++) {
        nap(300);
        if (dlrun_progress() != DLRUN_OK) {
            fprintf(stderr, "dlrun_progress: %s\n", dlrun_last_error());
            exit(1);
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    long secs = argc > 1 ? atol(argv[1]) : 5, n = secs * 1000 / 300;
    const char *report = getenv("REPORT");
    pthread_t t;

    if (report && strcmp(report, "1") == 0) {
        pthread_create(&t, NULL, reporter, &n);
        pthread_join(t, NULL);
    } else {
        nap(secs * 1000);
    }
    return 0;
}
