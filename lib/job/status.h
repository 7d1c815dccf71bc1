/* status.h - `dlrun status` (cmd/status_cmd.c) and what running jobs keep
 * for it (job/status.c, observe/jobstatus.h). */
#ifndef DLRUN_JOB_STATUS_H
#define DLRUN_JOB_STATUS_H

#include "job/job.h"

struct output_opts;
struct supervise;
struct status_watch;
struct broker;
struct steprate;

/* For the ranks (plan numbers, n) this dlrun starts: a watch that keeps
 * their status (a one-node dlrun: a file in the runtime folder; an
 * agent: dlrun.st.NODE in the broker), first 300 ms after they started,
 * then once a second; NULL for per-task mode, a preflight, or when out of
 * memory.  Without a runtime folder of the user's it keeps nothing. */
struct status_watch *job_status_create(const struct job *j, const int *ranks,
                                       int n);

/* See the ranks' output lines (before output_create; chains oo's tap). */
void job_status_output(struct status_watch *w, struct output_opts *oo);

/* Sample the ranks once a second from sv's periodic hook (chains it);
 * b: the ranks' broker served in sv's thread (borrowed while it runs),
 * whose step counters give the step rates and stragglers
 * (job/steprate.h) of a dlrun that is no agent, or NULL. */
void job_status_watch(struct status_watch *w, struct supervise *sv,
                      const struct broker *b);

/* Remove the file, close the connection, free w.  NULL is a no-op. */
void job_status_free(struct status_watch *w);

/* The head: a file naming its broker (addr) and token, so that `dlrun
 * status` reads the agents' lines there; removed by status_head_end. */
void status_head_begin(const struct job *j, const char *addr,
                       const char *token);
void status_head_end(void);

/* The head's file again, with the ranking of sr (borrowed) after its
 * header; from any thread, nothing once status_head_end ran. */
void status_head_steps(const struct steprate *sr);

#endif
