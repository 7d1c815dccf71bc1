/* head_recovery.h - the end of a node fault's recovery (--spares), handed
 * between the head's broker thread, which sees every node's ranks running
 * again and says so with -v, and its main thread, which writes the
 * summary once the attempt ended.  One lock decides which came first, so
 * that the -v line and the summary's recovery_ms agree: the line is
 * printed only while the summary has not taken its value, and the
 * summary takes the value the line printed, or none. */
#ifndef DLRUN_HEAD_RECOVERY_H
#define DLRUN_HEAD_RECOVERY_H

#include <pthread.h>

#include "place/nodeset.h"

struct head_recovery {
    pthread_mutex_t mu;
    const struct ns_recovery *rec;  /* borrowed: the moments up to the new
                                       plan; NULL: this attempt follows no
                                       node fault */
    long up_ms;             /* clock_ms when every node's ranks ran; 0 not */
    int closed;             /* the main thread took up_ms: nothing after */
};

/* r for an attempt that recovers from rec's fault (borrowed while r is
 * used), or from none (NULL). */
void head_recovery_init(struct head_recovery *r,
                        const struct ns_recovery *rec);

/* The broker thread: every node's ranks run at now.  The first call
 * before head_recovery_close ends the recovery and prints its -v line
 * (under the lock: before the summary); 1 then, else 0. */
int head_recovery_up(struct head_recovery *r, long now);

/* The main thread, after the attempt: no recovery ends after this call.
 * Returns when it ended (clock_ms), 0 when it did not. */
long head_recovery_close(struct head_recovery *r);

void head_recovery_destroy(struct head_recovery *r);

#endif
