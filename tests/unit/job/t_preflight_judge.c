/* t_preflight_judge.c - the head's judgement of the nodes' reports: a
 * node with fewer GPUs, no NCCL where others have it and a clock off is
 * blamed for each; a failed link names both ends; a node without a
 * report is named with its agent's exit code; the verdict says one line
 * per bad node, the folded list and Slurm's --exclude, and exit 1. */
#include "job/preflight_judge.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "job/job.h"
#include "util/say.h"
#include "where/sched.h"
#include "said.h"
#include "tap.h"

/* A node that reported everything a GPU node has. */
static void good(struct pf_node *nd, int node)
{
    memset(nd, 0, sizeof *nd);
    nd->have = 1;
    nd->r.node = node;
    snprintf(nd->r.version, sizeof nd->r.version, "%s", DLRUN_VERSION);
    nd->r.gpus = 4;
    snprintf(nd->r.nccl, sizeof nd->r.nccl, "libnccl.so.2");
    snprintf(nd->r.cuda, sizeof nd->r.cuda, "libcudart.so.12");
    nd->r.mem_free_mb = 1000;
    nd->offset_ms = 0.5;
    nd->agent_code = -1;
}

static void all_good(struct job *j, struct pf_node *nd, struct pf_link *l)
{
    for (int i = 0; i < 3; i++) {
        good(&nd[i], i);
        l[i] = (struct pf_link){ .peer = (i + 1) % 3, .rtt_us = 80 };
        nd[i].links = &l[i];
        nd[i].nlinks = 1;
        nd[i].have_links = 1;
    }
    ok(pf_judge(nd, 3, &j->plan) == 0, "every node as the others: none bad");
}

/* A spare's agent alone: its own faults only, nothing against others. */
static void spare_alone(void)
{
    struct pf_node nd;

    good(&nd, 3);
    nd.r.gpus = 0;
    nd.r.nccl[0] = '\0';
    nd.offset_ms = NAN;
    is_int(pf_judge_one(&nd), 0, "a spare alone: no GPUs and no NCCL are "
           "no fault without others to compare");
    snprintf(nd.r.import_mod, sizeof nd.r.import_mod, "torch");
    snprintf(nd.r.import_err, sizeof nd.r.import_err,
             "ModuleNotFoundError: No module named 'torch'");
    is_int(pf_judge_one(&nd), 1, "  its import failing: bad");
    is_str(nd.probe, "python imports", "  the probe named");
    is_str(nd.why, "import torch: ModuleNotFoundError: No module named "
           "'torch'", "  and why");
}

int main(void)
{
    struct said s = { 0 };
    struct plan_node hosts[3] = { { .host = "gpu1" }, { .host = "gpu2" },
                                  { .host = "gpu3" } };
    struct job j = { .plan = { .nnodes = 3, .nodes = hosts } };
    struct pf_node nd[3];
    struct pf_link l[3];

    say_set_sink(said_keep, &s);
    all_good(&j, nd, l);
    is_int(pf_verdict(nd, &j), EXIT_OK, "verdict: EXIT_OK");
    is_int(s.n, 0, "and nothing said (the table says all ok)");

    all_good(&j, nd, l);
    nd[1].r.gpus = 2;
    nd[1].r.nccl[0] = '\0';
    nd[1].offset_ms = -2500;
    is_int(pf_judge(nd, 3, &j.plan), 1, "one node short of the others: bad");
    is_str(nd[1].why, "2 GPUs visible, other nodes see 4; no NCCL library "
           "(other nodes have one); clock -2.5 s off the head's",
           "each fault named");
    is_str(nd[1].probe, "GPUs", "  the first probe that found one");
    is_str(nd[0].probe, "", "  a good node: none");
    j.alloc.source = "slurm-job";
    j.alloc.kind = ALLOC_JOB;
    j.alloc.sched = sched_find("slurm");
    is_int(pf_verdict(nd, &j), EXIT_FAIL, "verdict: EXIT_FAIL");
    is_str(s.all, "preflight: gpu2: 2 GPUs visible, other nodes see 4; no "
           "NCCL library (other nodes have one); clock -2.5 s off the "
           "head's\npreflight failed on 1 of 3 nodes: gpu2\n"
           "to avoid them: sbatch/salloc --exclude=gpu2\n",
           "the bad node, the verdict, Slurm's --exclude");

    all_good(&j, nd, l);
    l[0].rtt_us = -1;
    snprintf(l[0].err, sizeof l[0].err, "connection refused");
    nd[2].have = 0;
    nd[2].agent_code = 255;
    is_int(pf_judge(nd, 3, &j.plan), 3, "a failed link and a missing node");
    is_str(nd[0].why, "cannot reach gpu2: connection refused", "the caller");
    is_str(nd[1].why, "gpu1 cannot reach it: connection refused", "the peer");
    ok(strstr(nd[2].why, "no report (its agent ended with code 255") ==
       nd[2].why, "the missing node, with its agent's code");
    ok(!strcmp(nd[0].probe, "round trip") && !strcmp(nd[2].probe, "report"),
       "  the probes: round trip, report");
    s.n = 0;
    s.all[0] = '\0';
    j.alloc.source = "hosts";
    j.alloc.kind = ALLOC_HOSTS;
    j.alloc.sched = NULL;
    pf_verdict(nd, &j);
    ok(strstr(s.all, "preflight failed on 3 of 3 nodes: gpu[1-3]\n") &&
       !strstr(s.all, "--exclude"), "the hosts folded; no --exclude outside "
       "Slurm");
    spare_alone();
    return tap_done();
}
