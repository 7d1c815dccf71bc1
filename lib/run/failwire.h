/* failwire.h - how an agent tells the head how its ranks ended, through
 * the head's broker.  Which failed: dlrun.failseq counts the reports,
 * each one is "RANK STATUS PID HOST" under dlrun.fail.SEQ (STATUS: the
 * wait status itself, so that the head tells a code from a signal as the
 * agent does); the first report that holds up is the job's failure.
 * With --summary, every rank: "RANK PID STATUS START END" lines under
 * dlrun.ranks.NODE (START, END: wall-clock seconds).
 *
 * Any rank holds the broker's token and can write these keys too: the
 * reader parses every number in full and checks the rank against the
 * plan (it indexes the rank tables). */
#ifndef DLRUN_FAILWIRE_H
#define DLRUN_FAILWIRE_H

#include <stddef.h>

#include "util/err.h"

struct client;
struct sv_rank;

/* Failure reports read at most: one per agent is expected, the rest is
 * noise a rank wrote. */
#define FAILWIRE_MAX_REPORTS 4096

struct fw_failure {
    int rank;
    int status;         /* wait status */
    int pid;
};

/* n integers of *s, each followed by one space, into v (each within
 * int's range); *s moves past them.  0 / -1 (then *s and v are
 * unspecified). */
int fw_read_ints(const char **s, long *v, int n);

/* "RANK STATUS PID HOST" into buf (len bytes).  0 / -1 when it does not
 * fit. */
int fw_failure_format(const struct fw_failure *f, const char *host,
                      char *buf, size_t len);

/* A report s (len bytes, need not be NUL-terminated) for a job of nranks
 * ranks into *f (the host is not read: the plan knows it).  0 / -1 with
 * err. */
int fw_failure_parse(const void *s, size_t len, int nranks,
                     struct fw_failure *f, struct err *err);

/* Count a report and put it (c borrowed).  0 / -1 with err. */
int fw_failure_put(struct client *c, const struct fw_failure *f,
                   const char *host, struct err *err);

/* Called for a report that does not hold up: its key and why (borrowed
 * for the call). */
typedef void fw_bad_fn(void *ctx, const char *key, const char *why);

/* The first report through c (borrowed) that holds up into *f; bad ones
 * go to bad (may be NULL).  0 when one did, -1 when none. */
int fw_failure_first(struct client *c, int nranks, struct fw_failure *f,
                     fw_bad_fn *bad, void *ctx);

/* The rank lines of ranks (n entries; those with rank >= 0) under
 * dlrun.ranks.NODE through c (borrowed).  0 / -1 with err. */
int fw_ranks_put(struct client *c, int node, const struct sv_rank *ranks,
                 int n, struct err *err);

/* One rank line (NUL-terminated, no newline) of a job of nranks ranks
 * into *r.  0 / -1 (not five numbers, a rank outside the job, a time
 * that is not finite). */
int fw_rank_parse(const char *line, int nranks, struct sv_rank *r);

#endif
