/* interrupt_report.c - the one line after dlrun was told to stop: what it
 * did with the signal, and the exit code. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "job/job.h"
#include "util/say.h"

/* Was dlrun told to stop (not a signal it only passes on, USR1/USR2)? */
static int stop_signal(int sig)
{
    return sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT;
}

void job_report_interrupt(const struct job *j, const struct supervise *sv,
                          int rc, int agents)
{
    int sig = sv->signal_received, ranks = 0, killed = 0;
    const char *name = sigabbrev_np(sig);
    char more[96] = "";

    if (!stop_signal(sig))
        return;
    if (agents) {
        say("SIG%s: passed it to the ranks on %d node%s through their "
            "agents; exit %d", name, j->plan.nnodes,
            j->plan.nnodes == 1 ? "" : "s", rc);
        return;
    }
    for (int i = 0; i < sv->n; i++) {
        if (sv->ranks[i].rank < 0)
            continue;
        ranks++;
        killed += WIFSIGNALED(sv->ranks[i].status) &&
                  WTERMSIG(sv->ranks[i].status) == SIGKILL;
    }
    if (killed)
        snprintf(more, sizeof more, ", then SIGKILL to %d that had not ended",
                 killed);
    say("SIG%s: passed it to the %d rank%s%s; exit %d", name, ranks,
        ranks == 1 ? "" : "s", more, rc);
}
