/* t_tmpdir.c - the folder for dlrun's private folders: $TMPDIR when no
 * other user can rename entries in it or above it, else a private runtime
 * folder, said once in one line.  "Another user" needs root (chown to
 * nobody); without it those cases are skipped. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/say.h"
#include "util/tmpdir.h"
#include "said.h"
#include "tap.h"

#define OTHER 65534     /* nobody */

static char top[64];

static const char *at(const char *name)
{
    static char path[4][PATH_MAX];
    static int next;
    char *p = path[next++ % 4];

    snprintf(p, PATH_MAX, "%s/%s", top, name);
    return p;
}

static void ours(void)
{
    char buf[PATH_MAX], why[PATH_MAX + 64];
    struct said k = { 0 };

    say_set_sink(said_keep, &k);
    mkdir(at("mine"), 0755);
    setenv("TMPDIR", at("mine"), 1);
    ok(tmpdir_pick(buf, sizeof buf, sizeof buf - 1, NULL) == 0 &&
       strcmp(buf, at("mine")) == 0, "a folder of ours: used");
    symlink(at("mine"), at("link"));
    setenv("TMPDIR", at("link"), 1);
    ok(tmpdir_pick(buf, sizeof buf, sizeof buf - 1, NULL) == 0 &&
       strcmp(buf, at("mine")) == 0, "a link: the folder it points to");
    mkdir(at("sticky"), 0777);
    chmod(at("sticky"), 01777);
    ok(!tmpdir_unsafe(at("sticky"), why, sizeof why),
       "world-writable with the sticky bit: safe");
    ok(!tmpdir_unsafe("/", why, sizeof why), "/ is safe");
    is_int(k.n, 0, "nothing said");
    say_set_sink(NULL, NULL);
}

static void unsafe(void)
{
    char buf[PATH_MAX], why[PATH_MAX + 64];

    mkdir(at("open"), 0777);
    chmod(at("open"), 0777);
    ok(tmpdir_unsafe(at("open"), why, sizeof why) &&
       strstr(why, "writable by others without the sticky bit"),
       "world-writable without the sticky bit: unsafe");
    mkdir(at("group"), 0775);
    chmod(at("group"), 0775);
    ok(tmpdir_unsafe(at("group"), why, sizeof why),
       "group-writable without the sticky bit: unsafe");
    mkdir(at("open/below"), 0700);
    ok(tmpdir_unsafe(at("open/below"), why, sizeof why) &&
       strstr(why, "/open is writable"), "a folder below one: unsafe too");
    ok(tmpdir_unsafe("relative", why, sizeof why), "a relative path: unsafe");
    ok(tmpdir_unsafe(at("none"), why, sizeof why), "a missing one: unsafe");
    (void)buf;
}

/* an agent past the first node: quiet (a process of its own, as the
 * line is said once per process) */
static void quiet(void)
{
    char buf[PATH_MAX];
    struct said k = { 0 };
    int status = -1;
    pid_t pid = fork();

    if (pid == 0) {
        say_set_sink(said_keep, &k);
        setenv("TMPDIR", at("open"), 1);
        tmpdir_quiet(1);
        _exit(tmpdir_pick(buf, sizeof buf, sizeof buf - 1, NULL) == 0 &&
              strcmp(buf, at("open")) != 0 && k.n == 0 ? 0 : 1);
    }
    waitpid(pid, &status, 0);
    ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
       "tmpdir_quiet(1): another folder, nothing said");
}

/* needs root: a folder of another user, and one below it */
static void others(void)
{
    char buf[PATH_MAX], why[PATH_MAX + 64];
    struct said k = { 0 };

    mkdir(at("theirs"), 0755);
    mkdir(at("theirs/mine"), 0700);
    if (chown(at("theirs"), OTHER, OTHER) < 0) {
        ok(1, "# SKIP another user's folder needs root");
        return;
    }
    ok(tmpdir_unsafe(at("theirs"), why, sizeof why) &&
       strstr(why, "belongs to uid 65534"), "another user's: unsafe");
    ok(tmpdir_unsafe(at("theirs/mine"), why, sizeof why),
       "ours below another user's: unsafe");
    mkdir(at("run"), 0700);
    setenv("XDG_RUNTIME_DIR", at("run"), 1);
    setenv("TMPDIR", at("theirs"), 1);
    say_set_sink(said_keep, &k);
    ok(tmpdir_pick(buf, sizeof buf, sizeof buf - 1, NULL) == 0 &&
       strcmp(buf, at("run")) == 0, "another user's TMPDIR: the runtime "
       "folder instead");
    is_int(k.n, 1, "said in one line");
    ok(strstr(k.last, "belongs to uid 65534") && strstr(k.last, at("run")),
       "the line says why and what instead");
    chmod(at("run"), 0755);
    ok(tmpdir_pick(buf, sizeof buf, sizeof buf - 1, NULL) == 0 &&
       strcmp(buf, at("run")) != 0 && strncmp(buf, "/tmp", 4) == 0,
       "a runtime folder others can read: not used");
    setenv("TMPDIR", at("open"), 1);
    ok(tmpdir_pick(buf, sizeof buf, sizeof buf - 1, NULL) == 0 &&
       strcmp(buf, at("open")) != 0, "a world-writable TMPDIR: not used");
    is_int(k.n, 1, "said once per process");
    say_set_sink(NULL, NULL);
}

int main(void)
{
    snprintf(top, sizeof top, "/tmp/t_tmpdir.XXXXXX");
    if (!mkdtemp(top))
        return tap_skip_all("no folder in /tmp");
    unsetenv("XDG_RUNTIME_DIR");
    ours();
    unsafe();
    quiet();
    others();
    {
        char cmd[128];

        snprintf(cmd, sizeof cmd, "rm -rf %s", top);
        ok(system(cmd) == 0, "cleaned up");
    }
    return tap_done();
}
