/* stackdump.h - the stacks of a native process that hangs, for the stall
 * report: every thread's through gdb or eu-stack where one is installed
 * (they stop the process for a moment while they read it), else the
 * kernel's view of where each thread sleeps (/proc/PID/task/T/stack,
 * readable by root only). */
#ifndef DLRUN_STACKDUMP_H
#define DLRUN_STACKDUMP_H

#include <stddef.h>
#include <sys/types.h>

/* Into buf (len bytes, NUL-terminated) the stacks of pid's threads; *how
 * gets "gdb", "eu-stack" or "kernel" (static).  A debugger that has not
 * finished within timeout_ms is killed and the kernel's view taken.
 * 0, or -1 when none could be read (buf then says why). */
int stackdump_native(pid_t pid, int timeout_ms, char *buf, size_t len,
                     const char **how);

/* The executable name found in PATH, as for execvp (NULL: not there). */
int stackdump_have(const char *prog);

#endif
