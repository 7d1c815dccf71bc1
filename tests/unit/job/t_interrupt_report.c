/* t_interrupt_report.c - the line after dlrun was told to stop: the
 * ranks it passed the signal to and those SIGKILL ended, or the nodes
 * whose agents passed it on; nothing for a signal only passed on. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "job/job.h"
#include "util/say.h"
#include "said.h"
#include "tap.h"

int main(void)
{
    struct said s = { 0 };
    struct sv_rank r[3] = {
        { .rank = 0, .status = SIGTERM }, { .rank = 1, .status = SIGKILL },
        { .rank = -1 },     /* not a rank: a helper process */
    };
    struct supervise sv = { .ranks = r, .n = 3, .signal_received = SIGUSR1 };
    struct job j = { .plan = { .nnodes = 2 } };

    say_set_sink(said_keep, &s);
    job_report_interrupt(&j, &sv, 0, 0);
    is_int(s.n, 0, "SIGUSR1 is only passed on: no line");
    sv.signal_received = SIGINT;
    job_report_interrupt(&j, &sv, 130, 0);
    is_str(s.last, "SIGINT: passed it to the 2 ranks, then SIGKILL to 1 "
           "that had not ended; exit 130", "the ranks here, SIGKILL counted");
    r[1].status = 0;
    sv.signal_received = SIGTERM;
    job_report_interrupt(&j, &sv, 143, 0);
    is_str(s.last, "SIGTERM: passed it to the 2 ranks; exit 143",
           "none killed: no SIGKILL part");
    job_report_interrupt(&j, &sv, 143, 1);
    is_str(s.last, "SIGTERM: passed it to the ranks on 2 nodes through "
           "their agents; exit 143", "the head: through the agents");
    j.plan.nnodes = 1;
    sv.signal_received = SIGHUP;
    job_report_interrupt(&j, &sv, 129, 1);
    is_str(s.last, "SIGHUP: passed it to the ranks on 1 node through their "
           "agents; exit 129", "one node");
    return tap_done();
}
