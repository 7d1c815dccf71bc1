/* stacksig.h - a cheap look at where a process group's threads are, for
 * the stall detector's spin check (lib/observe/stall.h): each thread is
 * stopped for a moment (ptrace, from a short-lived helper process, so
 * that no stop is ever left behind nor reaped by the caller's wait), its
 * stack pointer read, and the words on its stack that point into the
 * process's executable mappings kept, from the outermost frame in.  No
 * debugger, no symbols: the signature is only compared with the same
 * thread's earlier ones (observe/stall.h).  A thread that was running
 * with a Python interpreter's code at the top of its stack is marked
 * STALL_INTERP. */
#ifndef DLRUN_STACKSIG_H
#define DLRUN_STACKSIG_H

#include <stddef.h>
#include <sys/types.h>

/* Into sig (max words) the signature of the processes of group pgrp (at
 * most 8 processes, 64 threads, each in pid and tid order): for each
 * thread STALL_THREAD | tid (| STALL_INTERP), then its code addresses
 * (observe/stall.h).
 * A helper that has not finished within timeout_ms is killed (the kernel
 * lets its stopped threads go).  Returns the words, or -1 when they
 * cannot be read (no ptrace allowed, a process that ended, a stack too
 * deep for max, not x86-64 or AArch64): the caller then knows nothing. */
long stacksig_group(pid_t pgrp, unsigned long long *sig, size_t max,
                    int timeout_ms);

#endif
