/* guard.h - every process a rank starts dies with the job, also when dlrun
 * itself is killed with SIGKILL (no handler of ours runs then).
 *
 * The ranks get a parent-death signal, but that reaches only them: what
 * they start (a worker in the background, a daemon that called setsid)
 * would be adopted by init.  So dlrun forks a watcher, shown as `dlrun
 * guard`, in a process group of its own, linked to dlrun by a socket that
 * only dlrun holds: when the socket closes (dlrun ended, however), the guard ends
 * what is left of the job:
 *   - with a cgroup v2 folder for the job (lib/run/cgroup.h; the ranks move in
 *     before exec), cgroup.kill: nothing can have escaped;
 *   - and always: SIGKILL to each rank's process group still registered,
 *     then to every process of this user whose environment holds the
 *     job's mark DLRUN_JOB_MARK=RANDOM (inherited by what the ranks start,
 *     daemons included), until none is left.
 * One job per process: the state is this module's. */
#ifndef DLRUN_GUARD_H
#define DLRUN_GUARD_H

#include <sys/types.h>

#include "util/err.h"

/* Start the guard; use_cgroup 1 also makes the job's cgroup where one
 * can be made (guard_cgroup_why says why not), 0 skips it (the mark
 * alone: --no-cgroup).  0, or -1 with err (the job can go on
 * unguarded).  While a guard runs, a second call does nothing: the one
 * started with the job's folder (guard_folder) guards the ranks too. */
int guard_start(int use_cgroup, struct err *err);

/* The job's private folder (dir: 0700, ours, with the folders in it: the
 * PMIx server's), which the guard removes when dlrun dies without
 * cleaning up (SIGKILL), with the folders util/privdirs.h lists (those
 * made elsewhere: the broker's or relay's own).
 * Call before guard_start, and start the guard right after creating the
 * folder (a signal in between leaves it behind): the guard takes a copy
 * when it starts.  NULL or "" forgets it. */
void guard_folder(const char *dir);

/* The guard's pid, or 0 when none was started. */
pid_t guard_pid(void);

/* The job's cgroup folder (borrowed), or NULL when it has none. */
const char *guard_cgroup(void);

/* Why guard_start made no cgroup (borrowed; "" when it made one or was
 * not asked to). */
const char *guard_cgroup_why(void);

/* "DLRUN_JOB_MARK" and its value (borrowed) for the ranks' environment;
 * NULL when no guard was started. */
const char *guard_mark_name(void);
const char *guard_mark_value(void);

/* The fd a child writes "0" to, before exec, to join the job's cgroup;
 * -1 when there is none.  Async-signal-safe. */
int guard_procs_fd(void);

/* Tell the guard about a rank's process group once started (add) and once
 * reaped and its group killed (forget: the number may be reused). */
void guard_add(pid_t pgid);
void guard_forget(pid_t pgid);

/* SIGKILL everything still in the job's cgroup (the end of an attempt:
 * what escaped both the group and dlrun's child reaper). */
void guard_kill_job(void);

/* Tell the guard the job ended cleanly (what was left is killed: no search
 * by mark needed) and close the link; it removes the cgroup folder on its
 * own (not waited for: dlrun's exit is not delayed). */
void guard_stop(void);

/* The guard's loop (in the forked child): read the job's link on fd until
 * it closes, then end the job's processes as above.  cgroup_dir and mark
 * (NAME=VALUE) may be NULL.  Returns the exit code (0). */
int guard_watch(int fd, const char *cgroup_dir, const char *mark);

#endif
