/* jobscript.h - a job script from a template and a job's description.
 *
 * Everything a caller gives is turned into template names (the list is
 * in dlrun-script(1), TEMPLATES) here, where each value that reaches the
 * shell is quoted (lib/util/shquote.h) and each value that reaches a directive
 * line was checked (lib/scripts/jobspec.h) by whoever filled the struct. */
#ifndef DLRUN_JOBSCRIPT_H
#define DLRUN_JOBSCRIPT_H

#include "util/err.h"
#include "where/sched.h"

/* All pointers borrowed; lists NULL-terminated (NULL = empty). */
struct jobspec {
    const struct sched *sched;      /* static: its row; NULL: none given */
    const char *partition;          /* checked tokens, or NULL */
    const char *account;
    const char *job_name;
    long nodes;                     /* >= 1 */
    long gpus_per_node;             /* 0: none asked for */
    long cores_per_node;            /* 0: not given */
    int per_gpu;                    /* one task per GPU (else per node) */
    int mpirun;                     /* a scheduler that does not start the
                                       tasks (PBS...): mpirun starts them
                                       (else the one dlrun does) */
    long time_secs;                 /* 0: the queue's default */
    const char *signal_name;        /* "USR1", or NULL: none asked for */
    long signal_secs;
    int requeue;                    /* trap the signal and requeue */
    const char *dlrun;              /* the dlrun to run ("dlrun", a path) */
    const char *setup;              /* shell code run before, or NULL */
    const char *const *directives;  /* extra directive lines (checked) */
    const char *const *modules;     /* module load NAME */
    int module_purge;               /* module purge before them */
    const char *const *env;         /* NAME=VALUE, names checked */
    const char *const *dlrun_args;  /* options for dlrun */
    const char *const *command;     /* PROG ARGS (at least PROG) */
    const char *profile;            /* the site profile's name, or NULL */
};

/* Render the script: the template text (file names it in errors).
 * Returns the malloc'd script (caller frees) or NULL with err: an
 * inconsistent job (per-gpu without GPUs, requeue without a signal,
 * mpirun under a scheduler that starts the tasks itself) or
 * a template that does not parse or names what is not there. */
char *jobscript_render(const struct jobspec *j, const char *text,
                       const char *file, struct err *err);

struct strv;

/* The words the script's dlrun gets after its own name, appended to out
 * (its failed flag set when out of memory): the same as in the rendered
 * line, with -x NAME for the variables the script passes with the value
 * it has when it runs.  For checking them with dlrun's own parser. */
void jobscript_dlrun_argv(const struct jobspec *j, struct strv *out);

#endif
