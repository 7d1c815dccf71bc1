/* timeit.c - run a command REPS times, one after the other, and print one
 * line per run:  ELAPSED_NS END_REALTIME_NS STATUS
 * ELAPSED_NS is CLOCK_MONOTONIC from just before posix_spawn to waitpid's
 * return; END_REALTIME_NS is CLOCK_REALTIME at that return (for comparing
 * with a timestamp a rank wrote); STATUS as a shell shows it (128+signal),
 * or "timeout".
 * Timing here, in C, keeps the Python harness's own spawn cost (about a
 * millisecond) out of figures that are only a few milliseconds.
 *
 *   timeit [-w WARMUP] [-o OUT] [-e ERR] REPS PROG [ARGS...]
 *
 * -w: untimed runs first (caches, page cache); -o: the command's stdout
 * (truncated before each run; default /dev/null); -e: its stderr
 * (appended; default /dev/null); -t: kill a run (its whole process group)
 * after SECS and report "timeout".  Each run gets its own process group and
 * stdin from /dev/null.  Stops at the first run whose status is not 0
 * unless -k is given (keep going: for commands meant to fail). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
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

/* One run; returns its status, -1 when it ran past timeout_s and was
 * killed (with its whole process group). */
static int run_once(char **argv, const char *out, const char *err,
                    int timeout_s, long long *elapsed, long long *end)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    sigset_t none, wait_for;
    siginfo_t si;
    pid_t pid;
    int status = 0, rc, timed_out = 0;
    long long t0, deadline;

    /* Own process group: a launcher that hangs is killed with everything
     * it started.  stdin is /dev/null: nothing waits on a terminal. */
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_APPEND, 0644);
    sigemptyset(&none);
    posix_spawnattr_init(&at);
    posix_spawnattr_setpgroup(&at, 0);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
    sigemptyset(&wait_for);
    sigaddset(&wait_for, SIGCHLD);
    sigaddset(&wait_for, SIGINT);
    sigaddset(&wait_for, SIGTERM);
    t0 = ns(CLOCK_MONOTONIC);
    rc = posix_spawnp(&pid, argv[0], &fa, &at, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    if (rc != 0) {
        fprintf(stderr, "timeit: cannot run %s: %s\n", argv[0], strerror(rc));
        exit(127);
    }
    deadline = t0 + timeout_s * 1000000000LL;
    /* SIGCHLD is blocked (main): wait for it with a deadline, no polling */
    while ((rc = waitpid(pid, &status, WNOHANG)) == 0) {
        long long left = deadline - ns(CLOCK_MONOTONIC);
        struct timespec ts = { left / 1000000000LL, left % 1000000000LL };
        int sig = left > 0 ? sigtimedwait(&wait_for, &si, &ts) : -1;

        if (sig == SIGINT || sig == SIGTERM) {    /* stop the run, then us */
            killpg(pid, SIGKILL);
            waitpid(pid, NULL, 0);
            exit(128 + sig);
        }
        if (sig < 0 && left <= 0) {
            timed_out = 1;
            killpg(pid, SIGKILL);
            waitpid(pid, &status, 0);
            break;
        }
    }
    *elapsed = ns(CLOCK_MONOTONIC) - t0;
    *end = ns(CLOCK_REALTIME);
    if (timed_out)
        return -1;
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

static void report(long long elapsed, long long end, int st)
{
    if (st < 0)
        printf("%lld %lld timeout\n", elapsed, end);
    else
        printf("%lld %lld %d\n", elapsed, end, st);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    const char *out = "/dev/null", *err = "/dev/null";
    int warmup = 0, keep_going = 0, timeout_s = 3600, opt, reps;
    sigset_t block;
    long long elapsed, end;

    while ((opt = getopt(argc, argv, "+w:o:e:kt:")) != -1) {
        switch (opt) {
        case 'w': warmup = atoi(optarg); break;
        case 'o': out = optarg; break;
        case 'e': err = optarg; break;
        case 'k': keep_going = 1; break;
        case 't': timeout_s = atoi(optarg); break;
        default: return 2;
        }
    }
    if (argc - optind < 2 || (reps = atoi(argv[optind])) < 1) {
        fprintf(stderr, "usage: timeit [-w N] [-o OUT] [-e ERR] [-k] [-t SECS] REPS PROG [ARGS...]\n");
        return 2;
    }
    sigemptyset(&block);
    sigaddset(&block, SIGCHLD);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigprocmask(SIG_BLOCK, &block, NULL);
    argv += optind + 1;
    for (int i = 0; i < warmup; i++) {
        int st = run_once(argv, out, err, timeout_s, &elapsed, &end);
        if (st != 0 && !keep_going) {
            report(elapsed, end, st);
            return 1;
        }
    }
    for (int i = 0; i < reps; i++) {
        int st = run_once(argv, out, err, timeout_s, &elapsed, &end);
        report(elapsed, end, st);
        if (st != 0 && !keep_going)
            return 1;
    }
    return 0;
}
