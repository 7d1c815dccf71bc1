/* t_stall_report.c - what the stall watch says once the ranks stalled:
 * the last line names each rank's Python frame (from the dump its stderr
 * carried) or, without one, its kernel wait channel, leaves out a rank
 * that ended before, and groups the ranks by where they waited; an
 * on-demand report names the node an agent watches. */
#include "job/stall_watch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job/job.h"
#include "job/stall_watch_int.h"
#include "util/say.h"
#include "said.h"
#include "tap.h"

static const char dump[] =
    "Fatal Python error: Aborted\n\n"
    "Current thread 0x00007f0000000002 (most recent call first):\n"
    "  File \"/x/distributed_c10d.py\", line 1536 in all_reduce\n"
    "  File \"/tmp/x/train.py\", line 20 in main\n";

int main(void)
{
    struct said s = { 0 };
    struct plan_node nodes[2] = { { .host = "node1" }, { .host = "node2" } };
    int rank_node[4] = { 0, 0, 1, 1 }, ranks[4] = { 0, 1, 2, 3 };
    struct sv_rank r[4] = { { .rank = 0 }, { .rank = 1 }, { .rank = 2 },
                            { .rank = 3 } };
    struct supervise sv = { .ranks = r, .n = 4, .failed = -1 };
    struct job j = { .opt = { .stall_timeout_ms = 600000 },
                     .plan = { .nranks = 4, .nodes = nodes, .nnodes = 2,
                               .rank_node = rank_node } };
    struct stall_watch *w;

    say_set_sink(said_keep, &s);
    w = job_stall_create(&j, ranks, 4);
    if (!ok(w != NULL, "a watch"))
        return tap_done();
    w->sv = &sv;
    is_int(job_stall_finish(w), 0, "still watching: no stall, no line");
    is_int(s.n, 0, "nothing said");
    is_str(stall_host(w, 2), "node2", "a rank's host from the plan");
    w->phase = STALL_DONE;
    w->quiet_ms = 601500;
    /* ranks 0 and 3 dumped their Python stacks; rank 1 is Python without
     * a dump; rank 2 ended before the stall */
    w->o[0].python = 100;
    w->o[0].cap = strdup(dump);
    w->o[0].ncap = strlen(dump);
    w->o[3].python = 103;
    w->o[3].cap = strdup(dump);
    w->o[3].ncap = strlen(dump);
    w->o[1].python = 101;
    snprintf(w->o[1].wchan, sizeof w->o[1].wchan, "futex_wait_queue");
    is_int(job_stall_finish(w), EXIT_STALL, "stalled: EXIT_STALL");
    is_str(s.all, "stalled 601 s: rank 1 (node1) in no Python stack; kernel "
           "futex_wait_queue; ranks 0 (node1), 3 (node2) in all_reduce "
           "(distributed_c10d.py:1536)\n",
           "one line: the odd rank first, the ended one left out");
    s.n = 0;
    s.all[0] = '\0';
    w->agent = 1;
    stall_report_all(w, 0, "asked for (SIGPWR)");
    is_str(s.all, "report asked for (SIGPWR): ranks quiet for 0 s; the "
           "ranks on node1:\n", "an agent's report names its node");
    job_stall_free(w);
    return tap_done();
}
