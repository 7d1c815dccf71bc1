/* stall.h - the stall detector (--stall-timeout): a pure engine fed with
 * samples of the ranks of one node, no processes or clock of its own, so
 * that tests drive it with made-up numbers.
 *
 * A rank is active in the interval between two samples when it wrote
 * output, reported progress (dlrun_progress, any broker request), or used
 * more than 1% of one CPU since the last activity of any rank (CPU time
 * from /proc; a rank blocked in a collective uses next to none), unless
 * it spins: MPI progress engines and NCCL wait on the CPU.  CPU counts
 * only while the rank's stack moves.  Stacks are sampled only when CPU
 * alone would say active and no rank wrote output or reported progress
 * (stall_wants_stacks).  A rank's stack has not moved while, thread by
 * thread, every sample since its last move shares one chain of callers
 * (the base: the longest common run of code addresses from the outermost
 * frame in) and goes at most STALL_SPIN_DEPTH addresses deeper than it: a
 * loop that polls, calling its helpers, stays within a few calls of where
 * it waits; a computation descends further, or leaves the base.  A thread
 * running interpreter code (Python) always moves: its native stack says
 * nothing of the interpreted program's progress.  A rank's first sample
 * after it was active counts as a move, so a spin is a stall one full
 * timeout after it was first seen.  The ranks are stalled once none was
 * active for the whole timeout.  Ranks that ended
 * are not counted either way. */
#ifndef DLRUN_STALL_H
#define DLRUN_STALL_H

#include <stddef.h>

#include "util/err.h"

/* One rank at one moment: monotonic counters, only their change matters. */
struct stall_sample {
    int alive;                  /* 0: ended, ignored */
    unsigned long long cpu;     /* CPU time of its process group, ticks */
    unsigned long long output;  /* lines written so far */
    unsigned long long progress;    /* progress reports so far */
    /* borrowed for the feed: the rank's stack signature (below), or NULL
     * when not sampled (its CPU then counts as work) */
    const unsigned long long *stack;
    size_t nstack;
};

/* A stack signature: for each thread, STALL_THREAD | tid (| STALL_INTERP
 * when it ran interpreter code), then the code addresses on its stack
 * from the outermost frame in (return addresses; not the program counter,
 * which moves inside a spin loop).  Threads in the same order in every
 * sample; a thread that came or went is a move.  A process may head its
 * threads with STALL_THREAD | STALL_REAPED | the CPU its ended children
 * used: a change is a move (a script that runs commands works while it
 * waits for each). */
#define STALL_THREAD (1ULL << 63)
#define STALL_INTERP (1ULL << 62)
#define STALL_REAPED (1ULL << 61)
#define STALL_SPIN_DEPTH 4

struct stall;

/* An engine for n ranks, stalled after timeout_ms without activity; hz
 * is the clock ticks per second of cpu.  NULL when out of memory. */
struct stall *stall_create(int n, long timeout_ms, long hz);
void stall_destroy(struct stall *s);   /* NULL is a no-op */

/* Which ranks' stacks to sample before feeding v (alive, CPU, output and
 * progress filled in) at now_ms: want[i] = 1 for a rank that CPU alone
 * would call active, when no rank wrote output or reported progress
 * (else nothing is sampled: the window starts again anyway).  Returns
 * how many. */
int stall_wants_stacks(const struct stall *s, long now_ms,
                       const struct stall_sample *v, int *want);

/* Did rank i spin in the window: CPU its stacks say was no work? */
int stall_spinning(const struct stall *s, int i);

/* Take the samples (n of them) at now_ms (monotonic).  The first call
 * starts the window.  Returns 1 when the ranks are stalled now, else 0
 * (a stack that cannot be kept, out of memory, counts as a move). */
int stall_feed(struct stall *s, long now_ms, const struct stall_sample *v);

/* Milliseconds since the last activity of any rank (0 before any feed). */
long stall_quiet_ms(const struct stall *s, long now_ms);

/* CPU ticks rank i used since the last activity of any rank (its share
 * of the quiet window). */
unsigned long long stall_window_cpu(const struct stall *s, int i);

/* Forget the past: the window starts again at the next feed (after an
 * on-demand report, after a restart). */
void stall_reset(struct stall *s);

/* "600", "600s", "10m", "1h", "1h30m", "90.5s" into milliseconds (>= 1 s,
 * at most 30 days).  0, or -1 with err naming what: what is the option
 * or key it came from. */
int stall_parse_duration(const char *what, const char *text, long *ms,
                         struct err *err);

/* Where a Python rank waits, from its faulthandler dump (text, len bytes):
 * the innermost frame of the thread that was current ("Current thread"),
 * else of the first thread, as "FUNC (FILE:LINE)" with FILE's base name,
 * into buf (len bytes).  0, or -1 when the text holds no frame. */
int stall_py_where(const char *text, size_t len, char *buf, size_t buflen);

/* Where the ranks of a node waited, as an agent tells the head through
 * the broker: one line "RANK WHERE" per rank (RANK decimal, WHERE printable
 * ASCII of 1 to STALL_WHERE_MAX-1 bytes).  Any rank holds the broker's
 * token, so the text is checked: fn(ctx, rank, where) runs for every good
 * line whose rank is below nranks (where borrowed for the call); a bad
 * line is skipped and counted.  Returns the bad lines. */
#define STALL_WHERE_MAX 160
int stall_where_parse(const char *text, size_t len, int nranks,
                      void (*fn)(void *ctx, int rank, const char *where),
                      void *ctx);

/* The stall line's body into line (len bytes): the ranks grouped by where
 * they waited, the smallest group first (the odd one out is the likely
 * cause), "rank 1 (node1) in f (a.py:3); ranks 0, 2 (node1), 5 (node2) in
 * g (b.py:9)".  n entries: rank numbers, hosts (borrowed) and wheres;
 * entries with an empty where are left out. */
void stall_format_groups(int n, const int *ranks, const char *const *hosts,
                         const char (*where)[STALL_WHERE_MAX], char *line,
                         size_t len);

/* What the stall line's groups say of the nodes: the index of the first
 * entry of the one group that holds every entry of one host and none of
 * another (that node's ranks stopped in a place of their own while the
 * others wait elsewhere, on them), when exactly one group is so and some
 * entry is outside it; else -1: every rank waits alike (a hang of the
 * program), or the odd ones out span nodes, or more than one node stands
 * apart (two nodes each in its own place: no telling which waits on
 * which).  Arguments as stall_format_groups'; empty wheres left out. */
int stall_one_node(int n, const char *const *hosts,
                   const char (*where)[STALL_WHERE_MAX]);

#endif
