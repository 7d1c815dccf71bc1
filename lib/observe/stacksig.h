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
 * process STALL_THREAD | STALL_REAPED | the CPU ticks of its ended
 * children, then for each of its threads STALL_THREAD | tid (|
 * STALL_INTERP) and its code addresses (observe/stall.h).
 * A helper that has not finished within timeout_ms is killed (the kernel
 * lets its stopped threads go).  Returns the words, or -1 when they
 * cannot be read (no ptrace allowed, a process that ended, a stack too
 * deep for max, not x86-64 or AArch64): the caller then knows nothing. */
long stacksig_group(pid_t pgrp, unsigned long long *sig, size_t max,
                    int timeout_ms);

/* The same for each of the n groups pgrps[i] with want[i] (one pass over
 * /proc for all; timeout_ms for them all): into sig[i] (max words each,
 * borrowed), the words or -1 into len[i] (-1 too where not wanted or out
 * of time). */
void stacksig_groups(const pid_t *pgrps, const int *want, int n,
                     unsigned long long *const *sig, size_t max, long *len,
                     int timeout_ms);

#endif
