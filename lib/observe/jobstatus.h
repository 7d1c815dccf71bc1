/* jobstatus.h - what `dlrun status` shows about the running jobs of this
 * user: per rank its host, pid, state, CPU %, RSS, restarts and the age
 * of its last output line.
 *
 * A job's dlrun (the head, or a one-node dlrun) keeps a file in the
 * user's runtime folder (safefile_rundir(): $XDG_RUNTIME_DIR/dlrun, else
 * /tmp/dlrun-UID, else one in the home, the first that is the user's:
 * mode 0700, checked before every use; the same folder as the topology
 * cache, and the same for the job and `dlrun status`).  A one-node dlrun writes its ranks' lines there
 * itself; a head writes where its broker is (and the token, which the
 * folder's mode keeps to its owner), and each agent puts its node's lines
 * into the broker as dlrun.st.NODE.  Rank lines cross the broker: their
 * decoder takes any bytes. */
#ifndef DLRUN_JOBSTATUS_H
#define DLRUN_JOBSTATUS_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "util/err.h"

#define JS_HOST 64
#define JS_MAX_RANKS 65536

struct js_rank {
    int rank;
    char host[JS_HOST];
    int pid;
    char state;             /* /proc's R, S, D, Z...; 'X' ended */
    double cpu_pct;         /* of one CPU, over the last sample, -1 unknown */
    long long rss_kb;       /* the rank's process, -1 unknown */
    int restarts;           /* of the job when it was started */
    double out_age_s;       /* since its last output line, -1 none yet */
    int has_gpu;            /* NVML read its GPUs: the two below are set */
    double gpu_pct;         /* mean utilisation of its GPUs */
    long long gpu_mem_kb;   /* memory used on its GPUs */
};

/* One line "RANK HOST PID STATE CPU RSS RESTARTS AGE [GPU GPUMEM]" for r
 * into f (the last two when r->has_gpu). */
void js_put_rank(FILE *f, const struct js_rank *r);

/* Decode the rank lines of len bytes into out (room for max); *n gets how
 * many.  Every field is checked (host: one word, no control bytes; ranks
 * 0..JS_MAX_RANKS-1).  0 / -1 with err. */
int js_parse_ranks(const char *buf, size_t len, struct js_rank *out, int max,
                   int *n, struct err *err);

/* Sample pid: state, RSS, and CPU % of its process group since *ticks
 * was taken at *at_ms (both updated; *at_ms 0, the first call, gives -1
 * %).  group: the group's CPU ticks now when the caller read them for all
 * its ranks in one pass over /proc (procstat_groups_cpu), or NULL to read
 * them here.  0, or -1 when it is gone. */
int js_sample(pid_t pid, const unsigned long long *group,
              unsigned long long *ticks, long *at_ms, struct js_rank *r);

/* Write text (len bytes) as DIR/NAME atomically (a temporary file, mode
 * 0600, renamed).  0 / -1 with err. */
int js_write(const char *dir, const char *name, const char *text, size_t len,
             struct err *err);

#endif
