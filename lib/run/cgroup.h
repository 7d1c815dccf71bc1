/* cgroup.h - a cgroup v2 folder per job, so that every process the ranks
 * start can be ended at once (cgroup.kill), daemons (setsid, double fork)
 * included: a process cannot leave its cgroup without the right to write
 * another cgroup's cgroup.procs.
 *
 * The folder is made below the cgroup this process is in, where that is
 * allowed: as root, in a folder systemd delegated to the user, or in a
 * Slurm job's own cgroup when it is writable.  No controller is enabled:
 * the job's limits stay those of the folder above. */
#ifndef DLRUN_CGROUP_H
#define DLRUN_CGROUP_H

#include <stddef.h>

#include "util/err.h"

/* Make a new, empty folder below this process's cgroup (cgroup v2 only,
 * kernel 5.14 or later for cgroup.kill), named "dlrun-PID-N"; its path
 * into dir (len bytes).  0, or -1 with err when none can be made here (no
 * cgroup v2 mount, no cgroup.kill, no permission). */
int cgroup_job_create(char *dir, size_t len, struct err *err);

/* An fd open for writing on dir's cgroup.procs (close-on-exec): a child
 * writes "0" to it to move itself in before exec.  -1 with err. */
int cgroup_procs_open(const char *dir, struct err *err);

/* SIGKILL every process in dir (cgroup.kill).  0 / -1 with errno. */
int cgroup_kill(const char *dir);

/* Wait up to wait_ms for dir to be empty (cgroup.events "populated 0"),
 * then remove it.  0 / -1 with errno (EBUSY: still populated). */
int cgroup_remove(const char *dir, int wait_ms);

#endif
