/* stall_spin.c - ranks for tests/e2e/t_stall_spin.sh that use the CPU
 * without a word:
 *
 *   stall_spin spin          waits forever for a flag nobody sets, polling
 *                            like an MPI progress engine (a helper called
 *                            in a busy loop): stalled
 *   stall_spin compute SECS  computes for SECS seconds through calls of
 *                            changing depth, then exits 0: not stalled
 *
 * Each prints "RANK MODE" first (RANK from $RANK). */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static atomic_int ready;        /* never set: nobody will connect */
static volatile unsigned long sink;

__attribute__((noinline)) static int poll_once(void)
{
    for (int i = 0; i < 100; i++)
        sink += (unsigned long)i;
    return atomic_load(&ready);
}

/* Work at the bottom of depth calls (depth 0..15 changes all the time). */
__attribute__((noinline)) static unsigned long descend(int depth,
                                                       unsigned long x)
{
    if (depth <= 0) {
        for (int i = 0; i < 2000; i++)
            x = x * 6364136223846793005UL + 1442695040888963407UL;
        return x;
    }
    return descend(depth - 1, x + (unsigned long)depth) ^ (x >> 3);
}

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "spin";
    const char *rank = getenv("RANK");
    unsigned long x = 1;

    printf("%s %s\n", rank ? rank : "?", mode);
    fflush(stdout);
    if (strcmp(mode, "compute") == 0) {
        double end = now() + (argc > 2 ? atof(argv[2]) : 10);
        for (int i = 0; now() < end; i++)
            x = descend((int)(x >> 7) % 16, x + (unsigned long)i);
        sink = x;
        return 0;
    }
    while (!poll_once())
        ;
    return 0;
}
