/* output.h - forwarding the ranks' stdout and stderr line by line.
 *
 * Each rank writes into two pipes; dlrun reads them as data arrives and
 * writes whole lines to its own stdout/stderr, so lines of different ranks
 * never mix mid-line.  Optionally each line is prefixed "[RANK] " (srun -l)
 * and, before that, the time it was read ("Sat Nov 28 17:25:55 2026 ",
 * mpirun --timestamp-output's date, local time),
 * copied to DIR/rank.N/{stdout,stderr}, and only some ranks are shown on
 * the console (all still go to the files).  Bytes are passed unchanged;
 * a last line without a newline is written as it is at EOF.
 */
#ifndef DLRUN_OUTPUT_H
#define DLRUN_OUTPUT_H

#include <stddef.h>

#include "util/err.h"

struct output_opts {
    int tag;                /* prefix "[RANK] " */
    int timestamp;          /* prefix the time (console only, as the tag) */
    const char *dir;        /* per-rank files under DIR/rank.N/, or NULL */
    const int *show;        /* ranks shown on the console, or NULL for all */
    int nshow;
    int console_out, console_err;   /* where shown lines go (fds 1, 2) */
    int append;             /* append to the files (a restarted job) */
    int hide;               /* streams kept off the console for every rank
                               (1 stdout, 2 stderr, 3 both: torchrun's
                               --redirects); the files still get them */
    /* When set, sees every piece of whole lines of rank (which: 1 stdout,
     * 2 stderr; len bytes at p, borrowed for the call) as it is written:
     * the stall watch's view of the output (lib/job/stall_watch.c). */
    void (*tap)(void *ctx, int rank, int which, const char *p, size_t len);
    void *tap_ctx;
};

struct output;

/* An engine for ranks (the plan's rank numbers, n of them).  Opens,
 * with opts->dir, the files; the pipes come one rank at a time
 * (output_child_open).  NULL with err.  opts is copied; show is borrowed. */
struct output *output_create(const int *ranks, int n,
                             const struct output_opts *opts, struct err *err);

/* Make the i-th rank's two pipes (close-on-exec; again: nothing), just
 * before it starts: dlrun then holds 2 files per started rank and 2 for
 * the one starting, not 4 per rank of the job while they start (dlrun(1),
 * Limits).  0, or -1 with err. */
int output_child_open(struct output *o, int i, struct err *err);

/* The write ends for the child of the i-th rank (stdout, stderr; -1
 * before output_child_open); the caller dup2s them in the child and
 * closes them in the parent with output_close_child_ends after spawning. */
int output_child_fd(const struct output *o, int i, int stream);
void output_close_child_ends(struct output *o, int i);

/* Fill fds (room for 2n) with the read ends still open; returns how many.
 * ids gets the stream index of each, for output_ready. */
int output_poll_fds(const struct output *o, int *fds, int *ids);

/* Read what stream id has and write its complete lines.  0, or -1 with
 * err when a file or the console cannot be written. */
int output_ready(struct output *o, int id, struct err *err);

/* Read every stream until it has nothing more now (non-blocking), write
 * partial last lines, and close them: for the end of the job, when
 * descendants may still hold pipes open.  Returns once everything is
 * written (the console is written by a thread of the engine's). */
void output_drain(struct output *o);

void output_destroy(struct output *o);   /* NULL is a no-op */

#endif
