/* t_stacksig.c - the spin check's stack sampler (lib/observe/stacksig.c)
 * on a real process of its own group that spins in a poll loop: each
 * sample holds the process, its one thread and code addresses, the detector calls the
 * samples still, and the process runs on after every look (no stop left
 * behind).  A group that does not exist, or a buffer too small, is -1. */
#include <signal.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "observe/stacksig.h"
#include "observe/stall.h"
#include "tap.h"

static volatile unsigned long sink;

__attribute__((noinline)) static int poll_once(atomic_ulong *count)
{
    for (int i = 0; i < 50; i++)
        sink += (unsigned long)i;
    atomic_fetch_add(count, 1);
    return 0;
}

/* A process of its own group polling forever, counting in *count. */
static pid_t spinner(atomic_ulong *count)
{
    pid_t pid = fork();

    if (pid == 0) {
        setpgid(0, 0);
        while (!poll_once(count))
            ;
        _exit(0);
    }
    if (pid > 0)
        setpgid(pid, pid);
    return pid;
}

int main(void)
{
    static unsigned long long sig[4096];
    atomic_ulong *count = mmap(NULL, sizeof *count, PROT_READ | PROT_WRITE,
                               MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    struct stall *s = stall_create(1, 5000, 100);
    struct stall_sample v = { .alive = 1 };
    pid_t pid;
    long n = 0, t;
    int good = 0, stalled = 0;

    if (count == MAP_FAILED || !s || (pid = spinner(count)) < 0)
        return 1;
    while (atomic_load(count) == 0)
        usleep(1000);
    n = stacksig_group(pid, sig, 4096, 5000);
    if (n < 0) {
        /* no ptrace here (a container without CAP_SYS_PTRACE, Yama) */
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        return tap_skip_all("cannot ptrace a process of ours here");
    }
    ok(n >= 3, "a sample: the process, its thread and code addresses");
    ok(sig[0] == (STALL_THREAD | STALL_REAPED),
       "the process, no ended children");
    ok(sig[1] == (STALL_THREAD | (unsigned long long)pid),
       "its one thread, not interpreter code");
    stall_feed(s, 0, &v);
    for (t = 1000; t <= 8000; t += 1000) {
        unsigned long before = atomic_load(count);
        v.cpu += 100;
        v.stack = sig;
        v.nstack = (size_t)(n = stacksig_group(pid, sig, 4096, 5000));
        good += n > 0;
        stalled |= n > 0 && stall_feed(s, t, &v);
        usleep(20000);
        ok(atomic_load(count) > before, "it runs on after the look");
    }
    is_int(good, 8, "every look read its stack");
    ok(stalled, "the detector calls its stacks still: spinning");
    ok(stall_spinning(s, 0), "and says so");
    is_int(stacksig_group(pid, sig, 1, 5000), -1, "no room: -1");
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    is_int(stacksig_group(pid, sig, 4096, 5000), -1,
           "a group that is gone: -1");
    stall_destroy(s);
    munmap(count, sizeof *count);
    return tap_done();
}
