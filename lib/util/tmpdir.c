/* tmpdir.c - see tmpdir.h. */
#include "util/tmpdir.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/say.h"

static int said;    /* the line is said once per process */

/* One folder of the path: ours or root's, and nobody else can rename
 * entries in it (not writable by group or others, or sticky). */
static int folder_unsafe(const char *path, int last, char *why, size_t len)
{
    struct stat st;
    uid_t me = geteuid();

    if (lstat(path, &st) < 0)
        return snprintf(why, len, "%s: %s", path, strerror(errno)), 1;
    if (!S_ISDIR(st.st_mode))
        return snprintf(why, len, "%s is not a folder", path), 1;
    if (st.st_uid != me && st.st_uid != 0)
        return snprintf(why, len, "%s belongs to uid %u", path,
                        (unsigned)st.st_uid), 1;
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
        return snprintf(why, len, "%s is writable by others without the "
                        "sticky bit", path), 1;
    if (last && access(path, W_OK | X_OK) < 0)
        return snprintf(why, len, "%s: %s", path, strerror(errno)), 1;
    return 0;
}

int tmpdir_unsafe(const char *path, char *why, size_t len)
{
    char part[PATH_MAX];
    size_t n = strlen(path);

    if (path[0] != '/' || n >= sizeof part)
        return snprintf(why, len, "%s is not an absolute path", path), 1;
    /* from / down: a folder above ours that another user controls can
     * rename ours away as well */
    if (folder_unsafe("/", n == 1, why, len))
        return 1;
    for (size_t i = 2; i <= n; i++) {
        if (i < n && path[i] != '/')
            continue;
        memcpy(part, path, i);
        part[i] = '\0';
        if (folder_unsafe(part, i == n, why, len))
            return 1;
    }
    return 0;
}

/* $XDG_RUNTIME_DIR when it is a safe folder of ours with mode 0700. */
static int runtime_dir(char *buf, size_t len, size_t maxlen)
{
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    char real[PATH_MAX], why[PATH_MAX + 64];
    struct stat st;

    if (!xdg || xdg[0] != '/' || !realpath(xdg, real) ||
        strlen(real) > maxlen || strlen(real) >= len ||
        tmpdir_unsafe(real, why, sizeof why) || lstat(real, &st) < 0 ||
        st.st_uid != geteuid() || (st.st_mode & 077))
        return -1;
    snprintf(buf, len, "%s", real);
    return 0;
}

/* /tmp/dlrun-UID, made 0700 when missing; never one someone else made
 * (or one with another mode: not ours to trust), else /tmp itself. */
static int tmp_uid_dir(char *buf, size_t len, size_t maxlen)
{
    char path[64], why[PATH_MAX + 64];
    struct stat st;

    if (tmpdir_unsafe("/tmp", why, sizeof why))
        return -1;
    snprintf(path, sizeof path, "/tmp/dlrun-%u", (unsigned)geteuid());
    if ((mkdir(path, 0700) == 0 || errno == EEXIST) &&
        lstat(path, &st) == 0 && S_ISDIR(st.st_mode) &&
        st.st_uid == geteuid() && !(st.st_mode & 077) &&
        strlen(path) <= maxlen && strlen(path) < len) {
        snprintf(buf, len, "%s", path);
        return 0;
    }
    if (len <= 4 || maxlen < 4)
        return -1;
    snprintf(buf, len, "/tmp");
    return 0;
}

void tmpdir_quiet(int quiet)
{
    if (quiet)
        __atomic_store_n(&said, 1, __ATOMIC_RELAXED);
}

int tmpdir_pick(char *buf, size_t len, size_t maxlen, struct err *err)
{
    const char *tmp = getenv("TMPDIR");
    char real[PATH_MAX], why[PATH_MAX + 64];
    int bad;

    if (!tmp || !*tmp)
        tmp = "/tmp";
    if (!realpath(tmp, real))
        bad = snprintf(why, sizeof why, "%s: %s", tmp, strerror(errno));
    else if (strlen(real) > maxlen || strlen(real) >= len)
        bad = tmpdir_unsafe(strcpy(real, "/tmp"), why, sizeof why);
    else
        bad = tmpdir_unsafe(real, why, sizeof why);
    if (!bad) {
        snprintf(buf, len, "%s", real);
        return 0;
    }
    if (runtime_dir(buf, len, maxlen) < 0 && tmp_uid_dir(buf, len, maxlen) < 0)
        return err_set(err, "no folder only you can change for dlrun's "
                       "private files: TMPDIR=%s: %s (set TMPDIR to a folder "
                       "of yours)", tmp, why);
    if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
        say("TMPDIR=%s: %s (another user could replace dlrun's private "
            "folders there): using %s instead", tmp, why, buf);
    return 0;
}
