/* proc.h - starting one rank's process on this node. */
#ifndef DLRUN_PROC_H
#define DLRUN_PROC_H

#include <sched.h>
#include <signal.h>
#include <sys/types.h>

#include "util/err.h"

/* How to start one process. */
struct proc_spec {
    char *const *argv;          /* borrowed, NULL-terminated */
    const char *path;           /* argv[0] as found in the child's PATH
                                   (find_program, util/findprog.h), or NULL: the child
                                   searches (execvpe) */
    char *const *envp;          /* borrowed */
    const sigset_t *mask;       /* the child's signal mask (dlrun's own from
                                   before it blocked signals) */
    int in_fd;                  /* becomes the child's stdin when > 0 (an
                                   agent's lifeline); 0 keeps dlrun's */
    int out_fd, err_fd;         /* become the child's stdout/stderr; -1 keeps */
    const cpu_set_t *cpus;      /* CPUs the child may run on, or NULL */
    int death_sig;              /* sent when dlrun dies; 0 = SIGKILL */
    const sigset_t *reset;      /* signals whose handler the child resets to
                                   the default (proc_nondefault_signals);
                                   NULL = every signal */
    int keep_fd;                /* > 2: an fd the child keeps across exec
                                   (its PMI_FD); 0: none */
    int guarded;                /* a rank: joins the job's guard (the
                                   cgroup before exec, its group after;
                                   lib/run/guard.h), so that what it starts
                                   dies with the job */
};

/* The signals whose disposition here is not the default (handled or
 * ignored), for proc_spec.reset: computed once for many spawns, so that
 * each child resets only those. */
void proc_nondefault_signals(sigset_t *out);

/* Start argv in a new process group that dies with dlrun (parent-death
 * signal SIGKILL), with default signal handlers; returns once the child
 * has exec'd.  On success *pid is set and 0 returned.  When exec fails the
 * child is reaped, *exec_errno is set and -1 returned with err saying
 * "cannot run 'PROG': REASON". */
int proc_spawn(const struct proc_spec *spec, pid_t *pid, int *exec_errno,
               struct err *err);

/* The shell's exit code for an exec errno: 127 not found, else 126. */
int proc_exec_code(int exec_errno);

/* Kill (SIGKILL) every process whose parent is this one and that is not
 * in keep (n pids): descendants that escaped their process group and were
 * reparented to us as child subreaper.  Returns how many were killed. */
int proc_kill_adopted(const pid_t *keep, int n);

/* Reap every child that has ended, without waiting for the others.
 * Returns how many were reaped. */
int proc_reap_ended(void);

/* Run argv (searched in $PATH) and keep what it prints: stdout, and
 * stderr too when with_stderr (else stderr stays dlrun's), into buf (len
 * bytes, NUL-terminated; what does not fit is read and dropped).  Its
 * stdin is in_fd when > 0, else /dev/null.  The child is set up as
 * proc_spawn's are (own process group, dies with dlrun, default signal
 * handlers) with no signal blocked.  Past timeout_ms (<= 0: no limit) its
 * process group is killed.  Returns the shell's code for it: its exit
 * status, 128 + the signal that ended it, 127 when argv[0] is not found,
 * 126 when it cannot run, 124 when it ran too long; -1 with err when no
 * process could be started.  Everything stays the caller's. */
int proc_capture(char *const *argv, int in_fd, int with_stderr,
                 int timeout_ms, char *buf, size_t len, struct err *err);

/* Replace this process with argv, searched in the PATH of envp (NULL:
 * environ), as a program started fresh: stdio flushed, signals this
 * process ignores back to the default, the signal mask set to mask (NULL:
 * kept, as dlrun was given it, as for proc_spawn's ranks).  Returns only when exec failed: -1, *exec_errno set
 * and err saying "cannot run 'PROG': REASON" (proc_exec_code gives the
 * exit code to use). */
int proc_exec(char *const *argv, char *const *envp, const sigset_t *mask,
              int *exec_errno, struct err *err);

/* This program's path (/proc/self/exe) into buf (len bytes): 0, or -1
 * with buf "" when it cannot be read or does not fit. */
int proc_self_exe(char *buf, size_t len);

#endif
