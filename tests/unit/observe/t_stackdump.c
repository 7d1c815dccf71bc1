/* t_stackdump.c - the stacks of a process that hangs: a child of ours
 * blocked in a pipe read is dumped by gdb (or eu-stack, or the kernel's
 * view: whichever this machine has) with its frames; a process that is
 * gone gives -1 and says why; stackdump_have looks in PATH. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "observe/stackdump.h"
#include "tap.h"

static void have(void)
{
    const char *path = getenv("PATH");

    ok(stackdump_have("sh"), "sh is in PATH");
    ok(!stackdump_have("dlrun-no-such-debugger"), "a made-up name is not");
    setenv("PATH", "/nonexistent", 1);
    ok(!stackdump_have("sh"), "nothing when PATH has no such folder");
    if (path)
        setenv("PATH", path, 1);
}

static void live(void)
{
    static char buf[1 << 16];
    const char *how = NULL;
    int p[2];
    char c;
    pid_t pid;
    int rc;

    if (pipe2(p, O_CLOEXEC) < 0)
        return;
    pid = fork();
    if (pid == 0) {
        close(p[1]);
        (void)read(p[0], &c, 1);    /* blocks until we close our end */
        _exit(0);
    }
    close(p[0]);
    /* a minute for the debugger: a hang guard on a loaded machine */
    rc = stackdump_native(pid, 60000, buf, sizeof buf, &how);
    is_int(rc, 0, "a blocked child's stacks");
    ok(how && (!strcmp(how, "gdb") || !strcmp(how, "eu-stack") ||
               !strcmp(how, "kernel")), "how says which reader");
    printf("# read by %s\n", how ? how : "(null)");
    if (how && strcmp(how, "kernel") != 0)
        ok(strstr(buf, "#0") && strstr(buf, "read"),
           "a debugger's frames: #0, in read");
    else
        ok(strstr(buf, "thread "), "the kernel's view: a line per thread");
    ok(strlen(buf) < sizeof buf, "NUL-terminated within the buffer");
    close(p[1]);
    waitpid(pid, &rc, 0);
    ok(WIFEXITED(rc) && WEXITSTATUS(rc) == 0,
       "the child goes on after the dump and exits normally");

    how = NULL;
    rc = stackdump_native(pid, 60000, buf, sizeof buf, &how);
    ok(rc == -1 && how && !strcmp(how, "kernel") && strstr(buf, "cannot read"),
       "a process that is gone: -1, and why");
}

static void small_buffer(void)
{
    char buf[100];
    const char *how = NULL;

    /* this process's own stacks into 64 bytes: whichever reader answers,
     * the text is cut there, never past */
    memset(buf, 'x', sizeof buf);
    stackdump_native(getpid(), 60000, buf, 64, &how);
    ok(memchr(buf, '\0', 64) != NULL, "64 bytes: NUL-terminated within them");
    ok(buf[64] == 'x' && buf[99] == 'x', "nothing written past them");
}

int main(void)
{
    alarm(600);     /* hang guard */
    have();
    live();
    small_buffer();
    return tap_done();
}
