/* preflight_judge.h - what the head makes of the nodes' preflight
 * reports: each node's faults against the head and the other nodes (a
 * dlrun version, a program or import, fewer GPUs, no NCCL or CUDA where
 * others have them, a clock off the head's, a link that failed), the
 * table the caller shows (cmd/ prints it on stdout), and the verdict. */
#ifndef DLRUN_PREFLIGHT_JUDGE_H
#define DLRUN_PREFLIGHT_JUDGE_H

#include "observe/preflight.h"

struct job;
struct plan;

#define PF_WHY_MAX 600

/* What the head learnt of one node. */
struct pf_node {
    int have;                   /* its report decoded */
    struct pf_report r;
    struct pf_link *links;      /* owned: its link results, nlinks of them */
    int nlinks, have_links;
    double offset_ms;           /* its clock against the head's, NAN unknown */
    int agent_code;             /* its agent process's exit code, -1 unknown */
    char why[PF_WHY_MAX];       /* what is wrong, "" when nothing */
    char probe[32];             /* the probe that found it first ("python
                                   imports", "clock", "round trip"...), ""
                                   when nothing */
};

/* The results as the caller shows them: one row per node of plan. */
struct pf_table {
    const struct plan *plan;    /* borrowed */
    const struct pf_node *nodes;    /* borrowed: plan->nnodes entries */
    int nbad;                   /* nodes with a why */
};

/* How the caller shows the table (borrowed by the job while the
 * preflight runs): fn(ctx, t) once, t borrowed for the call. */
struct pf_show {
    void (*fn)(void *ctx, const struct pf_table *t);
    void *ctx;
};

/* Fill each node's why (n nodes of plan p) from its report, its
 * offset_ms and agent_code, and the links every node timed.  Returns how
 * many nodes are bad. */
int pf_judge(struct pf_node *nd, int n, const struct plan *p);

/* One node alone (a spare's agent, held in reserve): its own faults,
 * no comparison with other nodes and no links (its offset_ms may be
 * NAN).  1 when it is bad (why and probe filled), else 0. */
int pf_judge_one(struct pf_node *nd);

/* After the table: say one line per bad node, then the verdict (and, in
 * a Slurm allocation, the --exclude that avoids them).  EXIT_OK when no
 * node is bad, else EXIT_FAIL. */
int pf_verdict(const struct pf_node *nd, const struct job *j);

#endif
