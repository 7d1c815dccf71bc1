/* t_safefile.c - opening files to write where others may write too: links
 * and files of another user refused untouched, ours followed and emptied;
 * folders checked for owner and mode.  "Another user" needs root (chown);
 * without it those cases are skipped. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/safefile.h"
#include "util/say.h"
#include "said.h"
#include "tap.h"

#define OTHER 65534     /* nobody */

static char dir[64];

/* DIR/name, in one of two buffers: symlink(at(a), at(b)) works */
static const char *at(const char *name)
{
    static char path[2][160];
    static int next;
    char *p = path[next++ % 2];

    snprintf(p, sizeof path[0], "%s/%s", dir, name);
    return p;
}

static void put(const char *name, const char *text)
{
    FILE *f = fopen(at(name), "w");

    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static long size_of(const char *name)
{
    struct stat st;

    return stat(at(name), &st) == 0 ? (long)st.st_size : -1;
}

static void ours(void)
{
    int fd;

    put("mine", "old text");
    fd = safefile_open(AT_FDCWD, at("mine"), 0, 0600);
    ok(fd >= 0, "our file: opened");
    is_int(size_of("mine"), 0, "  and emptied");
    close(fd);
    put("mine", "old text");
    fd = safefile_open(AT_FDCWD, at("mine"), 1, 0600);
    is_int(size_of("mine"), 8, "append: kept");
    close(fd);
    symlink(at("mine"), at("mylink"));
    fd = safefile_open(AT_FDCWD, at("mylink"), 0, 0600);
    ok(fd >= 0, "our own link: followed");
    is_int(size_of("mine"), 0, "  its target emptied");
    close(fd);
    fd = safefile_open(AT_FDCWD, at("new"), 0, 0600);
    ok(fd >= 0 && size_of("new") == 0, "a new file: made");
    close(fd);
}

static void theirs(void)
{
    struct err err = { "" };
    int fd;

    put("victim", "precious");
    symlink(at("victim"), at("their-link"));
    lchown(at("their-link"), OTHER, OTHER);
    fd = safefile_open(AT_FDCWD, at("their-link"), 0, 0600);
    ok(fd < 0 && errno == ELOOP, "another user's link: ELOOP");
    is_int(size_of("victim"), 8, "  its target untouched");
    put("their-file", "theirs");
    chown(at("their-file"), OTHER, OTHER);
    fd = safefile_open(AT_FDCWD, at("their-file"), 0, 0600);
    ok(fd < 0 && errno == EPERM, "another user's file: EPERM");
    is_int(size_of("their-file"), 6, "  untouched");
    mkdir(at("their-dir"), 0755);
    chown(at("their-dir"), OTHER, OTHER);
    fd = safefile_dir(AT_FDCWD, at("their-dir"), 0, &err);
    ok(fd < 0 && strstr(err.msg, "of another user"), "another user's folder: refused");
    /* a link of theirs to a folder of ours, as the path or on it */
    mkdir(at("mine"), 0700);
    symlink(at("mine"), at("their-dirlink"));
    lchown(at("their-dirlink"), OTHER, OTHER);
    fd = safefile_dir(AT_FDCWD, at("their-dirlink"), 0, &err);
    ok(fd < 0 && strstr(err.msg, "their-dirlink: a symbolic link of another "
       "user's, not followed"), "a folder that is another user's link: refused");
    fd = safefile_dir(AT_FDCWD, at("their-dirlink/out"), 0, &err);
    ok(fd < 0 && strstr(err.msg, "their-dirlink: a symbolic link"),
       "  one on the path: refused, nothing made");
    fd = safefile_open(AT_FDCWD, at("their-dirlink/f"), 0, 0600);
    ok(fd < 0 && errno == ELOOP && size_of("mine/f") < 0 &&
       size_of("mine/out") < 0, "  a file below it: ELOOP, nothing made");
}

static void folders(void)
{
    struct err err = { "" };
    int fd;

    fd = safefile_dir(AT_FDCWD, at("made"), 1, &err);
    ok(fd >= 0, "a missing folder: made and opened");
    close(fd);
    mkdir(at("open"), 0777);
    chmod(at("open"), 0777);
    fd = safefile_dir(AT_FDCWD, at("open"), 0, &err);
    ok(fd < 0 && strstr(err.msg, "others can write to"), "mode 0777: refused");
    chmod(at("open"), 01777);
    fd = safefile_dir(AT_FDCWD, at("open"), 0, &err);
    ok(fd >= 0, "mode 1777 (sticky), ours: accepted");
    close(fd);
    symlink(at("made"), at("dirlink"));
    fd = safefile_dir(AT_FDCWD, at("dirlink"), 1, &err);
    ok(fd < 0 && strstr(err.msg, "symbolic link"), "nofollow: a link refused");
    fd = safefile_dir(AT_FDCWD, at("dirlink"), 0, &err);
    ok(fd >= 0, "a link the user named: followed to our folder");
    close(fd);
}

/* A folder dlrun made removed with what is in it; a link in its place
 * and another user's folder left alone. */
static void removal(int root)
{
    struct stat st;

    mkdir(at("job"), 0700);
    put("job/attempt.0.rank.1.json", "{}");
    put("job/anything", "x");
    safefile_remove_dir(at("job"));
    ok(stat(at("job"), &st) != 0 && errno == ENOENT,
       "remove_dir: the folder and its files gone");
    mkdir(at("job"), 0700);
    mkdir(at("job/pmix"), 0700);
    mkdir(at("job/pmix/ds21"), 0700);
    put("job/pmix/ds21/seg", "x");
    put("job/pmix/sock", "x");
    mkdir(at("elsewhere"), 0700);
    put("elsewhere/f", "x");
    symlink(at("elsewhere"), at("job/pmix/link"));
    safefile_remove_dir(at("job"));
    ok(stat(at("job"), &st) != 0 && errno == ENOENT,
       "  the folders in it (the PMIx server's) go too");
    ok(size_of("elsewhere/f") == 1, "  a link in them: the link only");
    mkdir(at("kept"), 0700);
    put("kept/f", "x");
    symlink(at("kept"), at("job2"));
    safefile_remove_dir(at("job2"));
    ok(lstat(at("job2"), &st) == 0 && size_of("kept/f") == 1,
       "  a link in the folder's place: nothing removed through it");
    if (!root)
        return;
    mkdir(at("theirs2"), 0700);
    put("theirs2/f", "x");
    chown(at("theirs2"), OTHER, OTHER);
    safefile_remove_dir(at("theirs2"));
    ok(size_of("theirs2/f") == 1, "  another user's folder: left alone");
}

/* The runtime folder: a candidate someone else (or a file) holds gives
 * way to the next, said once; an XDG_RUNTIME_DIR this node lacks is
 * passed over silently; ours with a mode others can read stays an error
 * (the user fixes it).  Another user's /tmp/dlrun-UID: t_status.sh. */
static void rundir(void)
{
    struct said said = { 0 };
    struct err err = { "" };
    char buf[256], want[64], line[600];

    say_set_sink(said_keep, &said);
    mkdir(at("home"), 0700);
    setenv("HOME", at("home"), 1);
    setenv("XDG_RUNTIME_DIR", at("none"), 1);
    ok(safefile_rundir(buf, sizeof buf, &err) == 0 && said.n == 0,
       "rundir: an XDG_RUNTIME_DIR that is not there: passed over, unsaid");
    mkdir(at("xdg"), 0700);
    setenv("XDG_RUNTIME_DIR", at("xdg"), 1);
    put("xdg/dlrun", "x");
    snprintf(want, sizeof want, "/tmp/dlrun-%u", (unsigned)geteuid());
    ok(safefile_rundir(buf, sizeof buf, &err) == 0 &&
       (strcmp(buf, want) == 0 || strstr(buf, "/home/.cache/dlrun/run-")),
       "  a file in XDG_RUNTIME_DIR/dlrun's place: the next folder");
    snprintf(line, sizeof line, "%s is not a folder: using %s for dlrun's "
             "status files and caches instead", at("xdg/dlrun"), buf);
    is_str(said.last, line, "  said in one line");
    ok(safefile_rundir(buf, sizeof buf, &err) == 0 && said.n == 1,
       "  once per process");
    unlink(at("xdg/dlrun"));
    mkdir(at("xdg/dlrun"), 0755);
    chmod(at("xdg/dlrun"), 0755);
    ok(safefile_rundir(buf, sizeof buf, &err) < 0 &&
       strstr(err.msg, "has mode 755: others could read it (chmod 700 it)"),
       "  ours with mode 755: an error that says how to fix it");
    unsetenv("XDG_RUNTIME_DIR");
    say_set_sink(NULL, NULL);
}

int main(void)
{
    char cmd[128];

    snprintf(dir, sizeof dir, "/tmp/t_safefile.XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    ours();
    folders();
    removal(geteuid() == 0);
    rundir();
    if (geteuid() == 0)
        theirs();
    else
        printf("# not root: another user's files not tested\n");
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        printf("# could not remove %s\n", dir);
    return tap_done();
}
