/* jobspec.h - the checks shared by the command line of `dlrun script` and
 * the site profiles (sites.yaml): schedulers, times, signals, and the
 * texts that may go into a directive line.  Each check fills err with
 * what is wrong in words that need no option or key name (the caller
 * prefixes that). */
#ifndef DLRUN_JOBSPEC_H
#define DLRUN_JOBSPEC_H

#include "util/err.h"
#include "where/sched.h"

/* The scheduler named s (a row of lib/where/sched.h), or NULL with err
 * naming the known ones. */
const struct sched *jobspec_parse_sched(const char *s, struct err *err);

/* A wall time: MINUTES, H:M:S, D-H, D-H:M or D-H:M:S (Slurm's forms but
 * the ambiguous M:S) into seconds, at least one minute. */
int jobspec_parse_time(const char *s, long *secs, struct err *err);

/* SIG[@SECS]: a signal name with or without SIG (USR1, USR2, TERM, INT,
 * HUP, QUIT, ALRM, XCPU) and the seconds before the time limit it is sent
 * (default 60, Slurm's).  name gets the name without SIG. */
int jobspec_parse_signal(const char *s, char name[8], long *secs,
                         struct err *err);

/* A whole number from min to max. */
int jobspec_parse_count(const char *s, long min, long max, long *out,
                        struct err *err);

/* "per-node" (0: one dlrun per node starts its ranks) or "per-gpu" (1:
 * the scheduler starts one task per GPU, each becomes a rank). */
int jobspec_parse_tasks(const char *s, struct err *err);

/* How a PBS, NQSV or LSF job starts its nodes: "dlrun" (0: the script's
 * one dlrun reads the allocation and starts an agent on each node over
 * SSH) or "mpirun" (1: Open MPI's mpirun starts a dlrun per node, or per
 * GPU). */
int jobspec_parse_launcher(const char *s, struct err *err);

/* true/false/yes/no/on/off/1/0 into 1 or 0. */
int jobspec_parse_bool(const char *s, struct err *err);

/* A value that goes into a directive line (partition, account, job
 * name): letters, digits and -_.,:@+=/% only, so that neither the
 * scheduler's directive parser nor a shell splits or expands it. */
int jobspec_check_token(const char *s, struct err *err);

/* A text that must stay on one line: no newline or other control
 * character but tabs, not empty. */
int jobspec_check_line(const char *s, struct err *err);

/* An environment variable's name: a letter or _, then letters, digits, _. */
int jobspec_check_env_name(const char *s, struct err *err);

/* s for a one-line message: control characters written as \n, \xHH,
 * cut after about 64 bytes with "...".  Returns buf. */
const char *jobspec_visible(const char *s, char buf[80]);

#endif
