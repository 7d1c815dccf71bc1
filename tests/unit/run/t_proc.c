/* t_proc.c - proc_capture (a program's output kept, its exit code, its
 * time limit) and proc_exec (a program in place, set up as if started
 * fresh). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run/proc.h"
#include "tap.h"

/* sh -c script through proc_capture: the code; the output in buf. */
static int sh(const char *script, int with_stderr, int timeout_ms, char *buf,
              size_t len)
{
    char *argv[] = { "sh", "-c", (char *)script, NULL };
    struct err err = { "" };

    return proc_capture(argv, 0, with_stderr, timeout_ms, buf, len, &err);
}

static void capture(void)
{
    char buf[64], small[8];
    char *missing[] = { "dlrun-no-such-program", NULL };
    char *noexec[] = { "/dev/null", NULL };
    struct err err = { "" };

    is_int(sh("echo out; echo err >&2", 0, 0, buf, sizeof buf), 0, "exit 0");
    is_str(buf, "out\n", "stdout kept, stderr left alone");
    is_int(sh("echo out; echo err >&2", 1, 0, buf, sizeof buf), 0, "exit 0");
    is_str(buf, "out\nerr\n", "with_stderr: both kept, in order");
    is_int(sh("echo 123; exit 3", 0, 0, buf, sizeof buf), 3, "exit status");
    is_int(sh("kill -TERM $$", 0, 0, buf, sizeof buf), 128 + SIGTERM,
           "ended by a signal: 128 + it");
    is_int(sh("yes | head -c 100000; exit 5", 0, 0, small, sizeof small), 5,
           "output longer than the buffer: read to the end, then its code");
    is_str(small, "y\ny\ny\ny", "the first len - 1 bytes kept");
    is_int(sh("sleep 60", 0, 300, buf, sizeof buf), 124,
           "past the time limit: 124");
    is_int(sh("read x; echo \"[$x]\"", 0, 0, buf, sizeof buf), 0,
           "stdin is /dev/null by default");
    is_str(buf, "[]\n", "so read sees EOF");
    is_int(proc_capture(missing, 0, 0, 0, buf, sizeof buf, &err), 127,
           "not on PATH: 127");
    is_int(proc_capture(noexec, 0, 0, 0, buf, sizeof buf, &err), 126,
           "not executable: 126");
    ok(strstr(err.msg, "cannot run '/dev/null'") != NULL, err.msg);
}

static void capture_stdin(void)
{
    char buf[64], path[] = "/tmp/t_proc.XXXXXX";
    char *cat[] = { "cat", NULL };
    struct err err = { "" };
    int fd = mkstemp(path);

    if (fd < 0 || write(fd, "from a file\n", 12) != 12 ||
        lseek(fd, 0, SEEK_SET) != 0)
        ok(0, "temporary file");
    unlink(path);
    is_int(proc_capture(cat, fd, 0, 0, buf, sizeof buf, &err), 0, "cat");
    is_str(buf, "from a file\n", "stdin from in_fd");
    close(fd);
}

/* The status lines' masks, SigBlk and SigIgn, of the standard signals
 * (1 to 31): glibc's own (32, 33) are not ours to reset, and are ignored
 * where a test runner ignores them. */
static void standard_masks(const char *status, char *out, size_t len)
{
    unsigned long long blk = ~0ULL, ign = ~0ULL;
    const char *b = strstr(status, "SigBlk:"), *i = strstr(status, "SigIgn:");

    if (b)
        blk = strtoull(b + 7, NULL, 16);
    if (i)
        ign = strtoull(i + 7, NULL, 16);
    snprintf(out, len, "blocked %llx ignored %llx", blk & 0x7fffffffULL,
             ign & 0x7fffffffULL);
}

/* The child starts with no signal blocked or ignored, whatever ours. */
static void capture_signals(void)
{
    char buf[256];
    sigset_t term, old;

    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    sigprocmask(SIG_BLOCK, &term, &old);
    signal(SIGPIPE, SIG_IGN);
    char masks[64];

    sh("grep -E '^Sig(Blk|Ign)' /proc/self/status", 0, 0, buf, sizeof buf);
    standard_masks(buf, masks, sizeof masks);
    is_str(masks, "blocked 0 ignored 0",
           "nothing blocked or ignored in the child");
    signal(SIGPIPE, SIG_DFL);
    sigprocmask(SIG_SETMASK, &old, NULL);
}

/* proc_exec in a forked child with SIGPIPE ignored and SIGTERM blocked;
 * what the program printed (its /proc/self/status lines) into buf. */
static int exec_child(char *const *argv, char *const *envp,
                      const sigset_t *mask, char *buf, size_t len)
{
    int p[2], status = 0, e = 0;
    size_t got = 0;
    ssize_t n;
    pid_t pid;

    fflush(stdout);     /* else the child's proc_exec writes ours too */
    if (pipe(p) < 0 || (pid = fork()) < 0)
        return -1;
    if (pid == 0) {
        struct err err = { "" };
        sigset_t term;
        sigemptyset(&term);
        sigaddset(&term, SIGTERM);
        sigprocmask(SIG_BLOCK, &term, NULL);
        signal(SIGPIPE, SIG_IGN);
        dup2(p[1], 1);
        proc_exec(argv, envp, mask, &e, &err);
        printf("%d %s", proc_exec_code(e), err.msg);
        fflush(stdout);
        _exit(99);
    }
    close(p[1]);
    while (got < len - 1 && (n = read(p[0], buf + got, len - 1 - got)) > 0)
        got += (size_t)n;
    buf[got] = '\0';
    close(p[0]);
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void exec_in_place(void)
{
    char buf[256];
    char *grep[] = { "grep", "-E", "^Sig(Blk|Ign)", "/proc/self/status",
                     NULL };
    char *nopath[] = { "PATH=/dlrun-nowhere", NULL };
    char masks[64];

    sigset_t none;

    sigemptyset(&none);
    is_int(exec_child(grep, NULL, &none, buf, sizeof buf), 0,
           "proc_exec: ran");
    standard_masks(buf, masks, sizeof masks);
    is_str(masks, "blocked 0 ignored 0",
           "proc_exec: nothing ignored, the mask it was given");
    exec_child(grep, NULL, NULL, buf, sizeof buf);
    standard_masks(buf, masks, sizeof masks);
    is_str(masks, "blocked 4000 ignored 0",
           "proc_exec: no mask given: ours kept (SIGTERM blocked)");
    is_int(exec_child(grep, nopath, NULL, buf, sizeof buf), 99,
           "proc_exec: returns when exec failed");
    is_str(buf, "127 cannot run 'grep': No such file or directory",
           "proc_exec: searched envp's PATH; 127 and the reason");
}

/* A file that exists but cannot run: the reason names what is wrong
 * (the #! interpreter, a '\r' ending the #! line, a folder), not "No such
 * file or directory" for a file that is there; the codes stay 127/126. */
static void exec_reasons(void)
{
    char dir[] = "/tmp/t_proc_why.XXXXXX", bad[64], crlf[64], sub[64];
    char buf[256], *argv[] = { NULL, NULL };
    char *nopath[] = { "PATH=/nonexistent", NULL };
    struct err err = { "" };
    FILE *f;

    if (!mkdtemp(dir))
        return (void)ok(0, "a folder for the scripts");
    snprintf(bad, sizeof bad, "%s/bad", dir);
    snprintf(crlf, sizeof crlf, "%s/crlf", dir);
    snprintf(sub, sizeof sub, "%s/sub", dir);
    if ((f = fopen(bad, "w")))
        fputs("#! /nonexistent/pyhton3 -u\nprint(1)\n", f), fclose(f);
    if ((f = fopen(crlf, "w")))
        fputs("#!/bin/sh\r\necho hi\r\n", f), fclose(f);
    chmod(bad, 0755);
    chmod(crlf, 0755);
    mkdir(sub, 0755);

    argv[0] = bad;
    is_int(proc_capture(argv, 0, 0, 0, buf, sizeof buf, &err), 127,
           "a missing #! interpreter: 127");
    ok(strstr(err.msg, "its #! interpreter '/nonexistent/pyhton3' does not "
              "exist"), err.msg);
    argv[0] = crlf;
    is_int(proc_capture(argv, 0, 0, 0, buf, sizeof buf, &err), 127,
           "a #! line ending in \\r: 127");
    ok(strstr(err.msg, "its #! line ends in a carriage return"), err.msg);
    argv[0] = sub;
    is_int(proc_capture(argv, 0, 0, 0, buf, sizeof buf, &err), 126,
           "a directory: 126");
    ok(strstr(err.msg, "it is a directory"), err.msg);
    argv[0] = crlf;
    exec_child(argv, nopath, NULL, buf, sizeof buf);
    ok(strncmp(buf, "127 ", 4) == 0 && strstr(buf, "carriage return"),
       "proc_exec (a task in place): the same reason");
    printf("# %s\n", buf);
    argv[0] = sub;
    exec_child(argv, nopath, NULL, buf, sizeof buf);
    ok(strncmp(buf, "126 ", 4) == 0 && strstr(buf, "it is a directory"),
       "proc_exec: a directory said");
    unlink(bad);
    unlink(crlf);
    rmdir(sub);
    rmdir(dir);
}

static void self_exe(void)
{
    char buf[4096], tiny[4] = "x";

    ok(proc_self_exe(buf, sizeof buf) == 0 && strstr(buf, "t_proc") &&
       buf[0] == '/', "proc_self_exe: this test's absolute path");
    ok(proc_self_exe(tiny, sizeof tiny) == -1 && tiny[0] == '\0',
       "proc_self_exe: too long for the buffer: -1 and \"\"");
}

/* Ended children reaped, a running one left alone. */
static void reap_ended(void)
{
    pid_t ended[2], running;
    siginfo_t si;

    proc_reap_ended();          /* what the tests above left */
    if ((running = fork()) == 0) {
        pause();
        _exit(0);
    }
    for (int i = 0; i < 2; i++)
        if ((ended[i] = fork()) == 0)
            _exit(0);
    for (int i = 0; i < 2; i++)     /* until it ended, not reaping it */
        waitid(P_PID, (id_t)ended[i], &si, WEXITED | WNOWAIT);
    is_int(proc_reap_ended(), 2, "proc_reap_ended: both ended children");
    ok(waitpid(ended[0], NULL, WNOHANG) < 0 && errno == ECHILD,
       "  reaped");
    is_int(waitpid(running, NULL, WNOHANG), 0, "  the running one left");
    kill(running, SIGKILL);
    waitpid(running, NULL, 0);
    is_int(proc_reap_ended(), 0, "  nothing more: 0");
}

int main(void)
{
    self_exe();
    capture();
    capture_stdin();
    capture_signals();
    exec_in_place();
    exec_reasons();
    reap_ended();
    return tap_done();
}
