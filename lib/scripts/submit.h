/* submit.h - a job script written to its file, and handed to the
 * scheduler's submitter (sbatch, qsub, bsub, pjsub) for `dlrun submit`.
 *
 * The submitter runs with an argv (no shell) through lib/run/proc.h.
 * Those that take a file (sbatch, qsub) copy the script when they take
 * it, so a temporary file is removed right after; one that reads it on
 * stdin (bsub, to see its #BSUB lines) gets it there.  What each
 * scheduler's submitter is and prints is in its row (where/sched.h).
 * Every failure is said (lib/util/say.h) as one line. */
#ifndef DLRUN_SUBMIT_H
#define DLRUN_SUBMIT_H

/* Write text (borrowed) to path (not through a symbolic link, nor into
 * another user's file) with the mode the umask gives plus u+x: it is run
 * as a program, and never more, as it can hold secrets.  EXIT_OK, or
 * EXIT_FAIL after one line naming "-o PATH". */
int submit_write(const char *path, const char *text);

/* The same into fd, open for writing (closed here either way; path names
 * it in errors, borrowed). */
int submit_write_fd(int fd, const char *path, const char *text);

struct sched;

/* Words of a submitter's argv at most, its file and NULL included. */
#define SUBMIT_ARGV 8

/* The submitter's argv for sched (its row's submit) and the script file
 * (both borrowed; argv NULL-terminated, static texts and file; no file
 * for one that reads the script on stdin). */
void submit_argv(const struct sched *sched, const char *file,
                 const char *argv[SUBMIT_ARGV]);

/* Whether sched's submitter reads the script on stdin (bsub) rather than
 * from the file its argv names. */
int submit_reads_stdin(const struct sched *sched);

/* The job id in what sched's submitter printed (out, rewritten in place;
 * the result points into it): after its row's id_after, up to one of its
 * id_end characters, as in
 *   sbatch --parsable   123 or 123;cluster
 *   qsub (PBS)          123.server
 *   qsub (NQSV)         Request 123.sqd submitted to queue: SQUID.
 *   bsub                Job <123> is submitted to queue <normal>.
 *   pjsub (PJM)         [INFO] PJM 0000 pjsub Job 123 submitted.
 * Anything else: the first word as it is; "" when none. */
const char *submit_job_id(const struct sched *sched, char *out);

/* Submit text (borrowed) to sched: written to output (NULL: a temporary
 * file, removed after), handed to the submitter, its stderr left to the
 * user.  EXIT_OK with *id the job id (caller frees), or EXIT_FAIL after
 * one line (the submitter missing, refusing, or printing no id). */
int submit_job(const struct sched *sched, const char *text,
               const char *output, char **id);

#endif
