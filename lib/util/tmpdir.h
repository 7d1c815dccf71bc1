/* tmpdir.h - the folder dlrun makes its private folders, sockets and
 * temporary files in.
 *
 * $TMPDIR is the user's choice, but a folder another user may rename
 * entries in (theirs, or world-writable without the sticky bit) lets that
 * user move dlrun's 0700 folder away and put one of theirs, with a
 * listening socket, in its place: a rank would send them its token.  So
 * $TMPDIR (else /tmp) is used only when nobody else can: it and every
 * folder above it belong to this user or to root, and none is writable by
 * others without the sticky bit.  Otherwise a private runtime folder:
 * $XDG_RUNTIME_DIR when it is ours with mode 0700, else /tmp/dlrun-UID
 * (made 0700; one someone else made first is never used), else /tmp
 * itself when it is safe. */
#ifndef DLRUN_TMPDIR_H
#define DLRUN_TMPDIR_H

#include <stddef.h>

#include "util/err.h"

/* The folder (symbolic links resolved) into buf; its name is at most
 * maxlen bytes (a socket's folder must leave room in sun_path; a $TMPDIR
 * longer than that gives way to /tmp, as before).  When $TMPDIR (or /tmp)
 * is not safe, says once per process, in one line, why and what is used
 * instead.  0, or -1 with err (may be NULL) when no safe folder is left. */
int tmpdir_pick(char *buf, size_t len, size_t maxlen, struct err *err);

/* quiet 1: tmpdir_pick says nothing in this process (an agent of a node
 * past the first: the first node's line stands for the job's, not one
 * line per node). */
void tmpdir_quiet(int quiet);

/* Why path (resolved) is not safe for dlrun's folders, into why (len
 * bytes, "belongs to uid 1001", ...); 0 when it is.  For the tests. */
int tmpdir_unsafe(const char *path, char *why, size_t len);

#endif
