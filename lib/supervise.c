/* supervise.c - the loop of a supervisor (after tini and srun): wait for a
 * signal, forward it or reap; the first rank that fails stops the rest
 * (SIGTERM, then SIGKILL after the kill timeout); a second SIGINT within
 * one second kills at once. */
#include "supervise.h"

#include <errno.h>
#include <sys/wait.h>
#include <time.h>

static const int forwarded[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1,
                                 SIGUSR2 };

void supervise_signals(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGCHLD);
    for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
        sigaddset(set, forwarded[i]);
}

int supervise_exit_code(int status)
{
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static long now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static int signal_all(struct supervise *sv, int sig)
{
    int n = 0;

    for (int i = 0; i < sv->n; i++)
        if (sv->ranks[i].running && killpg(sv->ranks[i].pid, sig) == 0)
            n++;
    return n;
}

/* Reap what ended; returns 1 when a rank failed for the first time. */
static int reap(struct supervise *sv, int stopping)
{
    int status, first_fail = 0;
    pid_t pid;

    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        for (int i = 0; i < sv->n; i++) {
            struct sv_rank *r = &sv->ranks[i];
            if (r->pid != pid || !r->running)
                continue;
            r->running = 0;
            r->status = status;
            /* leftovers in its group (workers it forked) end with it */
            killpg(pid, SIGKILL);
            if (status != 0 && sv->failed < 0 && !stopping) {
                sv->failed = i;
                first_fail = 1;
            }
        }
    }
    return first_fail;
}

static int any_running(const struct supervise *sv)
{
    for (int i = 0; i < sv->n; i++)
        if (sv->ranks[i].running)
            return 1;
    return 0;
}

int supervise_run(struct supervise *sv)
{
    sigset_t set;
    siginfo_t info;
    long deadline = -1, last_int = -10000;
    int stopping = 0;

    supervise_signals(&set);
    sv->failed = -1;
    while (any_running(sv)) {
        long wait = deadline < 0 ? 1000 : deadline - now_ms();
        struct timespec ts = { wait / 1000, (wait % 1000) * 1000000L };
        int sig = wait < 0 ? -1 : sigtimedwait(&set, &info, &ts);

        if (sig < 0 && (wait < 0 || errno == EAGAIN) && deadline >= 0 &&
            now_ms() >= deadline) {
            signal_all(sv, SIGKILL);
            deadline = -1;
        } else if (sig == SIGCHLD || sig < 0) {
            if (reap(sv, stopping)) {
                stopping = 1;
                sv->stopped = signal_all(sv, SIGTERM);
                deadline = now_ms() + sv->kill_timeout_ms;
            }
        } else {
            int kill_now = sig == SIGINT && now_ms() - last_int < 1000;
            last_int = sig == SIGINT ? now_ms() : last_int;
            sv->signal_received = sig;
            signal_all(sv, kill_now ? SIGKILL : sig);
            if (!stopping && (sig == SIGTERM || sig == SIGINT || sig == SIGHUP ||
                              sig == SIGQUIT)) {
                stopping = 1;
                deadline = now_ms() + sv->kill_timeout_ms;
            }
        }
    }
    reap(sv, 1);
    if (sv->failed >= 0)
        return supervise_exit_code(sv->ranks[sv->failed].status);
    for (int i = 0; i < sv->n; i++)
        if (sv->ranks[i].status != 0)
            return supervise_exit_code(sv->ranks[i].status);
    return 0;
}
