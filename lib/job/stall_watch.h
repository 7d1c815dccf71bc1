/* stall_watch.h - --stall-timeout for the ranks a dlrun starts, and the
 * head's side across nodes.
 *
 * The ranks are sampled (CPU time from /proc, the lines the output engine
 * passes through its tap, the local broker's requests as progress) into
 * the detector of lib/observe/stall.h.  On a stall: one report per rank
 * (state, wait channel, CPU in the window, the last line and its age, a
 * native rank's stacks), Python ranks dump every thread
 * (PYTHONFAULTHANDLER, set for the ranks, and SIGABRT), the ranks are
 * ended, and one last line names where they waited; the job then counts
 * as failed (EXIT_STALL, a restart under --max-restarts).  SIGPWR says the
 * report without ending anything.  Across nodes each agent watches its own
 * ranks and the head decides for all (head_stall_*, the keys in
 * dlrun-broker(7)).  Lines go to the sink of lib/util/say.h; the time is
 * lib/util/clock.h's. */
#ifndef DLRUN_STALL_WATCH_H
#define DLRUN_STALL_WATCH_H

#include <signal.h>
#include <stddef.h>

struct job;
struct supervise;
struct output_opts;
struct broker;
struct stall_watch;
struct head_stall;

/* A watch over the n ranks (plan ranks, borrowed, alive as long as the
 * watch) this dlrun starts, for job j (borrowed, likewise), or NULL when
 * --stall-timeout is off or out of memory (said).  Made before the ranks'
 * environments: it sets PYTHONFAULTHANDLER for them.  Free with
 * job_stall_free. */
struct stall_watch *job_stall_create(struct job *j, const int *ranks, int n);

/* Add SIGPWR (a report on demand) to the signals blocked before the
 * ranks or agents start, when --stall-timeout is on. */
void job_stall_block(const struct job *j, sigset_t *set);

/* Put w's tap into the output engine's options oo (w borrowed by oo). */
void job_stall_output(struct stall_watch *w, struct output_opts *oo);

/* Put w into sv's periodic hook (sv borrowed while it runs); b: the local
 * broker whose requests are progress (borrowed), or NULL. */
void job_stall_watch(struct stall_watch *w, struct supervise *sv,
                     struct broker *b);

/* After supervise_run: when the ranks stalled, say the line naming where
 * they waited (an agent tells its head instead) and return EXIT_STALL;
 * else 0. */
int job_stall_finish(struct stall_watch *w);

/* Free w (NULL: nothing). */
void job_stall_free(struct stall_watch *w);

/* The head's side: NULL when off (addr and token of the head's broker,
 * borrowed, like j, for the life of the watch); watch in sv's periodic
 * hook (sv: the agents' processes, borrowed while it runs); after
 * supervise_run, finish: EXIT_STALL after the line naming where every
 * node's ranks waited, else 0.  head_stall_free(NULL) is a no-op, and
 * the others take NULL too. */
struct head_stall *head_stall_create(const struct job *j, const char *addr,
                                     const char *token);
void head_stall_watch(struct head_stall *hs, struct supervise *sv);
int head_stall_finish(struct head_stall *hs);
void head_stall_free(struct head_stall *hs);

/* After head_stall_finish: the plan node its line blames (the ranks of
 * that node alone stopped in a place of their own, the others waiting
 * elsewhere: lib/observe/stall.h's stall_one_node) with why into reason
 * (len bytes), else -1 (no stall, or a stall of every rank alike). */
int head_stall_node(const struct head_stall *hs, char *reason, size_t len);

#endif
