/* safefile.c - see safefile.h. */
#include "util/safefile.h"

#include <dirent.h>
#include <limits.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/say.h"
#include "util/tmpdir.h"

/* Ours, and nobody but us (or our primary group) can add or replace an
 * entry, unless the sticky bit protects our entries. */
static int dir_is_safe(const struct stat *st)
{
    if (st->st_uid != geteuid())
        return 0;
    if (st->st_mode & S_ISVTX)
        return 1;
    return !(st->st_mode & S_IWOTH) &&
           (!(st->st_mode & S_IWGRP) || st->st_gid == getegid());
}

/* A file or link we may write through: ours, or root's (root can do
 * anything to us anyway: /dev/null, /dev/stdout). */
static int trusted_owner(uid_t uid)
{
    return uid == geteuid() || uid == 0;
}

/* 0 when no part of path (relative to dirfd) is a symbolic link of
 * another user's (neither ours nor root's): the kernel's protected_symlinks
 * rule, which covers sticky world-writable folders only and may be off,
 * for every part of every path.  Else -1, errno ELOOP, the part into
 * link (len bytes). */
static int links_trusted(int dirfd, const char *path, char *link, size_t len)
{
    char part[PATH_MAX];
    size_t n = strlen(path);
    struct stat st;

    for (size_t i = 1; i <= n && n < sizeof part; i++) {
        if ((i < n && path[i] != '/') || (i < n && path[i - 1] == '/'))
            continue;
        memcpy(part, path, i);
        part[i] = '\0';
        if (fstatat(dirfd, part, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            S_ISLNK(st.st_mode) && !trusted_owner(st.st_uid)) {
            snprintf(link, len, "%s", part);
            errno = ELOOP;
            return -1;
        }
    }
    return 0;
}

int safefile_dir(int dirfd, const char *path, int nofollow, struct err *err)
{
    struct stat st;
    char theirs[PATH_MAX];
    int fd;

    if (links_trusted(dirfd, path, theirs, sizeof theirs) < 0)
        return err_set(err, "%s: a symbolic link of another user's, not "
                       "followed: give a path without it", theirs);
    if (mkdirat(dirfd, path, 0755) < 0 && errno != EEXIST)
        return err_set(err, "%s: %s", path, strerror(errno));
    fd = openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC |
                (nofollow ? O_NOFOLLOW : 0));
    if (fd < 0) {
        int e = errno;
        /* O_DIRECTORY|O_NOFOLLOW on a link says ENOTDIR */
        int link = e == ELOOP || (e == ENOTDIR &&
                   fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                   S_ISLNK(st.st_mode));
        return err_set(err, "%s: %s", path, link ?
                       "a symbolic link (someone else's?): remove it" :
                       strerror(e));
    }
    if (fstat(fd, &st) < 0 || !dir_is_safe(&st)) {
        close(fd);
        return err_set(err, "%s: a folder %s: give a folder of your own that "
                       "only you can write to", path,
                       st.st_uid != geteuid() ? "of another user"
                                              : "others can write to");
    }
    return fd;
}

int safefile_open(int dirfd, const char *path, int append, mode_t mode)
{
    /* no O_TRUNC yet: someone else's file must stay as it was */
    int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : 0);
    char link[PATH_MAX];
    struct stat st;
    int fd, e = 0;

    if (links_trusted(dirfd, path, link, sizeof link) < 0)
        return -1;
    fd = openat(dirfd, path, flags | O_NOFOLLOW, mode);

    /* a link of ours or root's (/dev/stdout) is followed, no other */
    if (fd < 0 && errno == ELOOP &&
        fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISLNK(st.st_mode) && trusted_owner(st.st_uid))
        fd = openat(dirfd, path, flags, mode);
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) < 0)
        e = errno;
    else if (!trusted_owner(st.st_uid))
        e = EPERM;
    else if (S_ISREG(st.st_mode) && !append && ftruncate(fd, 0) < 0)
        e = errno;
    if (e) {
        close(fd);
        errno = e;
    }
    return e ? -1 : fd;
}

/* path made 0700 when missing; 0 when it is a folder of ours, else 1
 * with why (a folder someone else made first, a file, no way to make
 * it: the next candidate is tried).  -1 with err: ours but others can
 * read it, which the user fixes (chmod), not a fallback. */
static int rundir_try(const char *path, char *why, size_t len,
                      struct err *err)
{
    struct stat st;

    if (mkdir(path, 0700) < 0 && errno != EEXIST)
        return snprintf(why, len, "cannot make %s: %s", path,
                        strerror(errno)), 1;
    if (lstat(path, &st) < 0 || !S_ISDIR(st.st_mode))
        return snprintf(why, len, "%s is not a folder", path), 1;
    if (st.st_uid != geteuid())
        return snprintf(why, len, "%s belongs to uid %u, not to you", path,
                        (unsigned)st.st_uid), 1;
    if ((st.st_mode & 077) != 0)
        return err_set(err, "%s has mode %03o: others could read it (chmod "
                       "700 it)", path, (unsigned)(st.st_mode & 0777));
    return 0;
}

/* Candidate i of the runtime folder into buf: $XDG_RUNTIME_DIR/dlrun
 * (when that folder exists), /tmp/dlrun-UID, then one in the user's home
 * that no other user can make first: $HOME/.cache/dlrun/run-HOST (its
 * folders made 0700 when missing; the host, as the home may be shared
 * between nodes).  0, 1 when candidate i is skipped, -1 past the last. */
static int rundir_candidate(int i, char *buf, size_t len)
{
    const char *xdg = getenv("XDG_RUNTIME_DIR"), *home = getenv("HOME");
    char host[256] = "", why[PATH_MAX + 64];
    struct stat st;
    int n;

    /* an XDG_RUNTIME_DIR from another node (Slurm passes it on) that this
     * node lacks: not a folder to fall back from, nothing said */
    if (i == 0 && !(xdg && xdg[0] == '/' && stat(xdg, &st) == 0 &&
                    S_ISDIR(st.st_mode)))
        return 1;
    if (i == 0)
        n = snprintf(buf, len, "%s/dlrun", xdg);
    else if (i == 1)
        n = snprintf(buf, len, "/tmp/dlrun-%u", (unsigned)geteuid());
    else if (i > 2)
        return -1;
    else if (!home || home[0] != '/' || tmpdir_unsafe(home, why, sizeof why) ||
             gethostname(host, sizeof host - 1) < 0 || strchr(host, '/'))
        return 1;
    else {
        n = snprintf(buf, len, "%s/.cache", home);
        if (n > 0 && (size_t)n < len)
            mkdir(buf, 0700);
        n = snprintf(buf, len, "%s/.cache/dlrun", home);
        if (n > 0 && (size_t)n < len)
            mkdir(buf, 0700);
        n = snprintf(buf, len, "%s/.cache/dlrun/run-%s", home, host);
    }
    return n < 0 || (size_t)n >= len ? 1 : 0;
}

int safefile_rundir(char *buf, size_t len, struct err *err)
{
    static int said;
    char why[PATH_MAX + 64] = "", first[PATH_MAX + 64] = "";
    int rc = 1, c;

    for (int i = 0; rc == 1 && (c = rundir_candidate(i, buf, len)) >= 0; i++) {
        if (c == 1)
            continue;
        rc = rundir_try(buf, why, sizeof why, err);
        if (rc == 1 && !first[0])
            snprintf(first, sizeof first, "%s", why);
    }
    if (rc == 1)
        return err_set(err, "no runtime folder of yours for dlrun's status "
                       "files and caches: %s (remove it, or set "
                       "XDG_RUNTIME_DIR to a folder of yours)",
                       first[0] ? first : "none to try");
    if (rc == 0 && first[0] && !__atomic_exchange_n(&said, 1,
                                                    __ATOMIC_RELAXED))
        say("%s: using %s for dlrun's status files and caches instead",
            first, buf);
    return rc;
}

/* Everything in the folder open on fd (closed here), the folders below
 * it too (depth levels at most); never through a link. */
static void empty_dir(int fd, int depth)
{
    DIR *d = fdopendir(fd);
    struct dirent *e;
    int sub;

    if (!d) {
        close(fd);
        return;
    }
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
            unlinkat(fd, e->d_name, 0) == 0 || errno != EISDIR || depth == 0)
            continue;
        sub = openat(fd, e->d_name,
                     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub >= 0) {
            empty_dir(sub, depth - 1);
            unlinkat(fd, e->d_name, AT_REMOVEDIR);
        }
    }
    closedir(d);
}

void safefile_remove_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;

    if (fd < 0)
        return;
    if (fstat(fd, &st) == 0 && st.st_uid == geteuid()) {
        empty_dir(fd, 4);
        rmdir(dir);
    } else {
        close(fd);
    }
}
