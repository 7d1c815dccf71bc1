/* t_preflight_run.c - job_preflight around the head (run_head, a fake
 * here that records what it was handed): refused in per-task mode, every
 * agent started by the head (fanout), the table's shower handed over
 * while it runs, and the job's settings and signal mask as before; the
 * line that a run does not start after a failed preflight. */
#include "job/preflight_run.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "util/say.h"
#include "tap.h"

static struct {
    int calls, rc, preflight, fanout;
    const struct pf_show *show;
} head;

int run_head(struct job *j, char **prog)
{
    sigset_t set;

    (void)prog;
    head.calls++;
    head.preflight = j->preflight;
    head.fanout = j->opt.remote.fanout;
    head.show = j->pf_show;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    sigprocmask(SIG_BLOCK, &set, NULL);     /* the head's own mask */
    return head.rc;
}

static void keep(void *ctx, const char *line)
{
    snprintf(ctx, 512, "%s", line);
}

int main(void)
{
    char last[512] = "";
    struct plan_node hosts[3] = { { .host = "a" }, { .host = "b" },
                                  { .host = "c" } };
    struct job j = { .plan = { .nnodes = 3, .nodes = hosts, .per_task = 1 } };
    struct pf_show show = { NULL, NULL };
    char *prog[] = { NULL };
    sigset_t now;

    say_set_sink(keep, last);
    is_int(job_preflight(&j, prog, &show), EXIT_USAGE, "per-task: refused");
    ok(strstr(last, "preflight: run it outside srun/mpirun") == last &&
       head.calls == 0, "with one line, no head");
    j.plan.per_task = 0;
    j.opt.remote.fanout = 1;
    last[0] = '\0';
    is_int(job_preflight(&j, prog, &show), 0, "every node passed: 0");
    ok(head.calls == 1 && head.preflight == 1 && head.fanout == 3 &&
       head.show == &show, "the head runs it: all agents its own, the "
       "shower handed over");
    ok(j.preflight == 0 && j.pf_show == NULL && j.opt.remote.fanout == 1,
       "the job's settings as before");
    sigprocmask(SIG_SETMASK, NULL, &now);
    ok(!sigismember(&now, SIGUSR2), "the signal mask as before");
    is_str(last, "", "nothing said");
    head.rc = EXIT_FAIL;
    j.opt.preflight = 1;
    is_int(job_preflight(&j, prog, &show), EXIT_FAIL, "a bad node: its code");
    is_str(last, "not starting the job: a node failed the preflight (dlrun "
           "check --nodes shows the same table)", "--preflight: the run "
           "does not start");
    return tap_done();
}
