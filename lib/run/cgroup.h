/* cgroup.h - a cgroup v2 folder per job, so that every process the ranks
 * start can be ended at once, daemons (setsid, double fork, an emptied
 * environment) included: a process cannot leave its cgroup without the
 * right to write another cgroup's cgroup.procs.
 *
 * The folder is made below the cgroup this process is in, where that is
 * ours to change: as root, or where that cgroup and its cgroup.procs
 * belong to us (a unit systemd delegated to the user, a Slurm job's
 * cgroup given to its user).  No controller is enabled in it or above,
 * so cgroup v2's rule that a cgroup with controllers for its children
 * holds no process of its own never applies: dlrun stays where it is and
 * the caller's cgroup keeps its processes and its limits.
 *
 * The reading of /proc/self/mountinfo and /proc/self/cgroup and the
 * ownership check take their input as arguments, so the tests feed them
 * texts and a folder of their own as the cgroup tree. */
#ifndef DLRUN_CGROUP_H
#define DLRUN_CGROUP_H

#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#include "util/err.h"

/* The cgroup v2 mount in mountinfo (text of /proc/PID/mountinfo,
 * borrowed): its mount point into mnt (/sys/fs/cgroup, or
 * /sys/fs/cgroup/unified on a hybrid system) and the root of the tree it
 * shows into root ("/", or a container's subtree).  0, or -1 when there
 * is none (or a path does not fit). */
int cgroup_parse_mount(const char *mountinfo, char *mnt, size_t mlen,
                       char *root, size_t rlen);

/* The cgroup v2 path ("0::PATH") in the text of /proc/PID/cgroup
 * (borrowed) into path.  0, or -1 when there is none (cgroup v1 only). */
int cgroup_parse_own(const char *text, char *path, size_t len);

/* The folder of the cgroup in proc_cgroup within the mount in mountinfo
 * (both texts borrowed) into dir.  0, or -1 with err. */
int cgroup_dir_of(const char *mountinfo, const char *proc_cgroup, char *dir,
                  size_t len, struct err *err);

/* May euid make a job's folder below the cgroup folder dir and move its
 * processes into it?  dir must be a cgroup (it has cgroup.procs); root
 * may, anyone else only where dir and its cgroup.procs are theirs and
 * writable by them (moving a process needs write access to the
 * cgroup.procs of the cgroup both ends are below).  0, or -1 with err
 * saying why not. */
int cgroup_usable(const char *dir, uid_t euid, struct err *err);

/* Make a new, empty folder "dlrun-PID-N" below the cgroup folder base;
 * its path into dir (len bytes).  0, or -1 with err (no permission, or
 * what was made is not a cgroup: removed again). */
int cgroup_job_create_in(const char *base, char *dir, size_t len,
                         struct err *err);

/* The same below this process's own cgroup (cgroup v2 only), after
 * checking it is ours (cgroup_usable with geteuid()) and sweeping what
 * earlier jobs left there (cgroup_sweep).  0, or -1 with err when none
 * can be made here. */
int cgroup_job_create(char *dir, size_t len, struct err *err);

/* Could a job's folder be made here now?  Made and removed again (what
 * the kernel and the file system allow is known only by trying); the
 * cgroup it would be below into base.  0, or -1 with err saying why not. */
int cgroup_probe(char *base, size_t len, struct err *err);

/* How old an empty job folder whose dlrun is gone must be to be swept:
 * older than any start of a job, so that one of another PID namespace
 * (the PID means nothing here) is never taken while its job starts. */
#define CGROUP_STALE_S 300

/* Is the folder name, below a cgroup, one a job left behind: "dlrun-PID-N"
 * with PID not running here (pid_alive 0), events (its cgroup.events,
 * borrowed; NULL when unreadable) "populated 0", last changed more than
 * CGROUP_STALE_S before now?  1 / 0.  The guard removes a job's folder;
 * only what kills the guard too leaves one (a Slurm step's end, a test
 * harness that kills every process of the user). */
int cgroup_stale(const char *name, int pid_alive, const char *events,
                 time_t mtime, time_t now);

/* Remove the folders below the cgroup folder base that cgroup_stale
 * calls left behind; how many. */
int cgroup_sweep(const char *base);

/* An fd open for writing on dir's cgroup.procs (close-on-exec): a child
 * writes "0" to it to move itself in before exec.  -1 with err. */
int cgroup_procs_open(const char *dir, struct err *err);

/* SIGKILL every process in dir and the folders below it: cgroup.kill
 * (Linux 5.14 or later), else each process its cgroup.procs list, again
 * while a pass finds one alive (one may fork in between; a second or so
 * at most).  0 / -1 with errno (ENOENT: no such cgroup). */
int cgroup_kill(const char *dir);

/* Wait up to wait_ms for dir to be empty (cgroup.events "populated 0"),
 * then remove it.  0 / -1 with errno (EBUSY: still populated). */
int cgroup_remove(const char *dir, int wait_ms);

#endif
