/* timeit.c - run a command REPS times, one after the other, and print one
 * line per run:  ELAPSED_NS END_REALTIME_NS STATUS
 * ELAPSED_NS is CLOCK_MONOTONIC from just before posix_spawn to waitpid's
 * return; END_REALTIME_NS is CLOCK_REALTIME at that return (for comparing
 * with a timestamp a rank wrote); STATUS as a shell shows it (128+signal).
 * Timing here, in C, keeps the Python harness's own spawn cost (about a
 * millisecond) out of figures that are only a few milliseconds.
 *
 *   timeit [-w WARMUP] [-o OUT] [-e ERR] REPS PROG [ARGS...]
 *
 * -w: untimed runs first (caches, page cache); -o: the command's stdout
 * (truncated before each run; default /dev/null); -e: its stderr
 * (appended; default /dev/null).  Stops at the first run whose status is
 * not 0 unless -k is given (keep going: for commands meant to fail). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static long long ns(clockid_t c)
{
    struct timespec ts;

    clock_gettime(c, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int run_once(char **argv, const char *out, const char *err,
                    long long *elapsed, long long *end)
{
    posix_spawn_file_actions_t fa;
    pid_t pid;
    int status, rc;
    long long t0;

    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_APPEND, 0644);
    t0 = ns(CLOCK_MONOTONIC);
    rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        fprintf(stderr, "timeit: cannot run %s: %s\n", argv[0], strerror(rc));
        exit(127);
    }
    while (waitpid(pid, &status, 0) < 0)
        ;
    *elapsed = ns(CLOCK_MONOTONIC) - t0;
    *end = ns(CLOCK_REALTIME);
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

int main(int argc, char **argv)
{
    const char *out = "/dev/null", *err = "/dev/null";
    int warmup = 0, keep_going = 0, opt, reps;
    long long elapsed, end;

    while ((opt = getopt(argc, argv, "+w:o:e:k")) != -1) {
        switch (opt) {
        case 'w': warmup = atoi(optarg); break;
        case 'o': out = optarg; break;
        case 'e': err = optarg; break;
        case 'k': keep_going = 1; break;
        default: return 2;
        }
    }
    if (argc - optind < 2 || (reps = atoi(argv[optind])) < 1) {
        fprintf(stderr, "usage: timeit [-w N] [-o OUT] [-e ERR] [-k] REPS PROG [ARGS...]\n");
        return 2;
    }
    argv += optind + 1;
    for (int i = 0; i < warmup; i++) {
        int st = run_once(argv, out, err, &elapsed, &end);
        if (st != 0 && !keep_going) {
            printf("%lld %lld %d\n", elapsed, end, st);
            return 1;
        }
    }
    for (int i = 0; i < reps; i++) {
        int st = run_once(argv, out, err, &elapsed, &end);
        printf("%lld %lld %d\n", elapsed, end, st);
        fflush(stdout);
        if (st != 0 && !keep_going)
            return 1;
    }
    return 0;
}
