/* safefile.h - opening the files dlrun writes where other users may write
 * too (/tmp, a shared project folder): never through a symbolic link or
 * into a folder or file someone else owns, so that another local user
 * cannot make dlrun overwrite a file of yours by planting a link. */
#ifndef DLRUN_SAFEFILE_H
#define DLRUN_SAFEFILE_H

#include <sys/types.h>

#include "util/err.h"

/* Open, for writing into it, the folder path (relative to dirfd, or
 * AT_FDCWD), made with mode 0755 (less the umask) when missing.  It must
 * be ours and writable by nobody else (but our own primary group), unless
 * it has the sticky bit (then others cannot remove or replace what we
 * make in it).  nofollow: path itself may not be a symbolic link (a folder
 * we make, not one the user named).  Whatever nofollow, no part of path is
 * followed when it is a symbolic link of another user's (not ours, not
 * root's).  The fd (O_DIRECTORY, close-on-exec), or -1 with err ("PATH:
 * REASON"). */
int safefile_dir(int dirfd, const char *path, int nofollow, struct err *err);

/* Open path (relative to dirfd, or AT_FDCWD) for writing: created with
 * mode (less the umask) when missing, else (a regular file) emptied unless
 * append.  Never through a symbolic link another user owns, as the file
 * or a folder on its path (ELOOP; ours and root's, /dev/stdout, are
 * followed), and a file another user owns is
 * refused untouched (EPERM).  fd (close-on-exec) or -1 with errno. */
int safefile_open(int dirfd, const char *path, int append, mode_t mode);

/* The user's runtime folder (status files, topology and binding caches)
 * into buf, made (0700) if needed: the first of $XDG_RUNTIME_DIR/dlrun
 * (when that folder exists), /tmp/dlrun-UID and $HOME/.cache/dlrun/
 * run-HOST that is a folder of this user's.  One someone else made first
 * (or a file in its place) is never used: the next one is, and the first
 * such call of the process says so in one line; a job and `dlrun status`
 * walk the same list and so meet in the same folder.  0, or -1 with err
 * (may be NULL) when none is left, or when the one picked is this user's
 * but others can read it (the user chmods it; not a fallback). */
int safefile_rundir(char *buf, size_t len, struct err *err);

/* Remove the folder dir that dlrun made for itself (a job's private
 * folder: error files, sockets, the PMIx server's folder): every file in
 * it and the folders below it (4 levels at most, never through a link),
 * then it; only while it is still a folder this user owns (not a link put
 * in its place, not someone else's).  Best effort, nothing said. */
void safefile_remove_dir(const char *dir);

#endif
