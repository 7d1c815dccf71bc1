/* t_guard.c - what is left of a job dies with it.  guard_watch in this
 * process with a socket pair for dlrun's link: a registered group is
 * killed when the link closes, a forgotten one is not, a clean end kills
 * nothing, and a process that left the group (setsid) but carries the
 * job's mark is found by it.  Then guard_start for real in a stand-in
 * for dlrun that dies without a word: its setsid grandchild is killed by
 * the guard (this test is the subreaper that gets to see it). */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run/guard.h"
#include "tap.h"
#include "rendezvous/token.h"

/* A process in a group (or session, with setsid) of its own, that hangs;
 * env: its environment (borrowed). */
static pid_t hang(int new_session, char **env)
{
    pid_t pid = fork();

    if (pid == 0) {
        if (new_session)
            setsid();
        else
            setpgid(0, 0);
        execle("/bin/sleep", "sleep", "600", (char *)NULL, env);
        _exit(127);
    }
    if (pid > 0 && !new_session)
        setpgid(pid, pid);
    return pid;
}

static void rec(int fd, int op, pid_t pid)
{
    int32_t r[2] = { op, (int32_t)pid };

    (void)write(fd, r, sizeof r);
}

/* 1 when pid ended by SIGKILL (reaped here); 0 when it still runs (then
 * it is ended and reaped). */
static int was_killed(pid_t pid)
{
    int st = 0;

    if (waitpid(pid, &st, WNOHANG) == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
        return 0;
    }
    return WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
}

/* The records as guard.c writes them: 1 add, 2 forget, 3 clean. */
static void watch(void)
{
    uint8_t tok[TOKEN_BYTES];
    char hex[TOKEN_HEX_LEN + 1], mark[64], other[64];
    char *env_mark[] = { mark, NULL }, *env_other[] = { other, NULL };
    struct err err = { "" };
    pid_t a, b, c, d;
    int sv[2];

    token_new(tok, &err);
    token_to_hex(tok, hex);
    snprintf(mark, sizeof mark, "DLRUN_JOB_MARK=%s", hex);
    /* the same mark with one more digit is another job's */
    snprintf(other, sizeof other, "DLRUN_JOB_MARK=%s0", hex);

    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv);
    a = hang(0, NULL);          /* registered */
    b = hang(0, NULL);          /* registered, then forgotten */
    c = hang(1, env_mark);      /* escaped the group, carries the mark */
    d = hang(1, env_other);     /* another job's */
    rec(sv[1], 1, a);
    rec(sv[1], 1, b);
    rec(sv[1], 2, b);
    close(sv[1]);               /* dlrun gone without a word */
    is_int(guard_watch(sv[0], NULL, mark), 0, "guard_watch returns 0");
    close(sv[0]);
    ok(was_killed(a), "a registered group is killed");
    ok(!was_killed(b), "a forgotten group is left alone");
    ok(was_killed(c), "a process with the job's mark is killed");
    ok(!was_killed(d), "another job's mark (a longer value) is not");

    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv);
    a = hang(0, NULL);
    c = hang(1, env_mark);
    rec(sv[1], 1, a);
    rec(sv[1], 3, 0);           /* dlrun ended cleanly */
    close(sv[1]);
    guard_watch(sv[0], NULL, mark);
    close(sv[0]);
    ok(!was_killed(a) && !was_killed(c), "after a clean end nothing is killed");
}

/* A stand-in for dlrun: start the guard, start a daemon with the mark,
 * say its pid, die as if SIGKILLed (no guard_stop). */
static void dlrun_dies(int out)
{
    struct err err = { "" };
    char mark[128];
    char *env[] = { mark, NULL };
    pid_t pids[2];

    if (guard_start(0, &err) < 0)
        _exit(2);
    snprintf(mark, sizeof mark, "%s=%s", guard_mark_name(), guard_mark_value());
    pids[0] = guard_pid();
    pids[1] = hang(1, env);
    (void)write(out, pids, sizeof pids);
    _exit(0);
}

static void for_real(void)
{
    int p[2], st = 0;
    pid_t dl, pids[2] = { 0, 0 };

    ok(guard_pid() == 0 && guard_mark_name() == NULL &&
       guard_mark_value() == NULL && guard_cgroup() == NULL &&
       guard_procs_fd() == -1, "no guard started: nothing to say");
    guard_add(1234);            /* no guard: no-ops */
    guard_forget(1234);
    guard_stop();
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    if (pipe(p) < 0)
        return;
    dl = fork();
    if (dl == 0)
        dlrun_dies(p[1]);
    close(p[1]);
    ok(read(p[0], pids, sizeof pids) == sizeof pids && pids[0] > 0 &&
       pids[1] > 0, "dlrun started its guard and a daemon");
    close(p[0]);
    waitpid(dl, &st, 0);
    is_int(WEXITSTATUS(st), 0, "dlrun exited");
    /* both are ours now (subreaper): the daemon dies, then the guard ends */
    st = 0;
    waitpid(pids[1], &st, 0);
    ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
       "the daemon with the job's mark was killed by the guard");
    st = -1;
    waitpid(pids[0], &st, 0);
    ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the guard exited 0");
}

static void clean_stop(void)
{
    struct err err = { "" };
    char mark[TOKEN_HEX_LEN + 1];
    pid_t g;
    int st = -1;

    ok(guard_start(0, &err) == 0 && guard_pid() > 0, "guard_start");
    ok(guard_mark_name() && !strcmp(guard_mark_name(), "DLRUN_JOB_MARK") &&
       strlen(guard_mark_value()) == TOKEN_HEX_LEN, "the mark: a token");
    ok(guard_cgroup() == NULL && guard_procs_fd() == -1,
       "use_cgroup 0: no cgroup");
    g = guard_pid();
    snprintf(mark, sizeof mark, "%s", guard_mark_value());
    ok(guard_start(0, &err) == 0 && guard_pid() == g &&
       !strcmp(guard_mark_value(), mark),
       "a second guard_start keeps the guard (and its mark) started with "
       "the job's folder");
    guard_stop();
    ok(guard_pid() == 0, "guard_stop: no guard any more");
    waitpid(g, &st, 0);
    ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "and it ended on its own, 0");
}

int main(void)
{
    alarm(300);     /* hang guard */
    watch();
    for_real();
    clean_stop();
    return tap_done();
}
