/* jobscan.h - the running jobs of this user, as `dlrun status` shows
 * them: each job file in the runtime folder (observe/jobstatus.h says
 * what a dlrun keeps there) read with its ranks, a multi-node job's ranks
 * from its broker, where its agents put them (dlrun.st.NODE). */
#ifndef DLRUN_JOBSCAN_H
#define DLRUN_JOBSCAN_H

#include "observe/jobstatus.h"
#include "util/err.h"

#define JS_MAX_SHOWN 4096   /* ranks read per job at most */
#define JS_MAX_STEPS 32     /* step-rate rows per job, the slowest */

/* One node's (or, on one node, one rank's) step rate, from its
 * dlrun_progress() calls (job/steprate.h). */
struct js_steps {
    char host[JS_HOST];
    char ranks[200];        /* "8-11" */
    double rate;            /* steps per second */
    double ratio;           /* the median over rate; 0 when rate is 0 */
};

#define JS_MAX_EXCLUDED 64  /* excluded nodes read per job at most */

/* A node a job with --spares excluded after a fault in it. */
struct js_excluded {
    char host[256];
    char spare[256];        /* the spare that took its place, "" none */
    int attempt;            /* the attempt it failed in, from 1 */
    double time;            /* wall-clock seconds */
    char reason[200];       /* "no heartbeat for 10 s (link down?)" */
};

/* One running job. */
struct js_job {
    int pid, nodes, ranks, restarts;    /* its dlrun's pid; the world */
    double started;         /* wall-clock seconds when it started */
    char cmd[1024];         /* its command line */
    char broker[300], token[80];    /* a head's broker; "" for one node */
    struct js_rank *r;      /* its ranks (owned by the scan), n of them */
    int n;
    char note[600];         /* what could not be read, "" when all */
    struct js_steps steps[JS_MAX_STEPS];    /* slowest first */
    int nsteps;
    double step_median;
    char step_unit[8];      /* "node" or "rank": what a row is */
    int spares;             /* it holds spares (--spares): the two below */
    char spares_held[600];  /* the spares not taken yet, "n5,n6"; "" none */
    struct js_excluded excl[JS_MAX_EXCLUDED];   /* in the order excluded */
    int nexcl;
};

/* Called for each running job (borrowed for the call). */
typedef void (*js_job_fn)(void *ctx, const struct js_job *job);

/* Read every job file ("job-*") of dir (the runtime folder, borrowed) and
 * call fn(ctx, job) for each running job; the file of a dlrun that is gone
 * is removed (a dlrun that was killed left it).  *njobs gets how many were
 * shown.  0, or -1 with err when dir cannot be read. */
int jobscan_each(const char *dir, js_job_fn fn, void *ctx, int *njobs,
                 struct err *err);

/* The header lines of a job file's text (len bytes) into job: "pid N",
 * "started T", "nodes N", "ranks N", "restarts N", "broker ADDR",
 * "token HEX", "cmd LINE", "stepmedian M UNIT", "steps HOST RATE RATIO
 * RANKS" (at most JS_MAX_STEPS), and a head's with --spares: "spares
 * HOST,HOST" ("spares -": none held), "excluded ATTEMPT TIME HOST SPARE
 * REASON" (SPARE "-": none took its place; at most JS_MAX_EXCLUDED).
 * Returns where the rank lines begin. */
size_t jobscan_header(const char *text, size_t len, struct js_job *job);

#endif
