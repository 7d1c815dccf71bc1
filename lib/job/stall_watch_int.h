/* stall_watch_int.h - what the files of the stall watch share
 * (stall_watch.c: the sampling and the phases; stall_report.c: the report
 * and the last line; stall_head.c: the head's side).  Not an API: users
 * include job/stall_watch.h. */
#ifndef DLRUN_STALL_WATCH_INT_H
#define DLRUN_STALL_WATCH_INT_H

#include <stddef.h>
#include <sys/types.h>

#include "observe/stall.h"
#include "run/supervise.h"

#define STALL_LAST_MAX 160              /* bytes of the last line kept */
#define STALL_FREEZE_MS 30000           /* for every node to freeze its ranks */
#define STALL_STACK_WORDS 8192          /* of one rank's stack signature */
#define STALL_STACK_MS 3000             /* for the ranks' stacks to be read */

/* An agent freezes its ranks (SIGSTOP) after its report and waits for
 * the head's dlrun.dump, given once every node froze its own: a Python
 * rank that ended on one node would otherwise make its peers elsewhere
 * fail in their collective (connection closed) before they dump where
 * they waited. */
enum { STALL_WATCH, STALL_FROZEN, STALL_DUMP, STALL_TERM, STALL_DONE };

struct stall_out {
    unsigned long long lines;
    char last[STALL_LAST_MAX];
    long last_ms;               /* -1: no line yet */
    char *cap;                  /* owned: stderr since the dump was asked */
    size_t ncap;
    pid_t python;               /* the interpreter sent SIGABRT, or 0 */
    char wchan[64];
};

struct stall_watch {
    struct job *j;              /* borrowed */
    struct supervise *sv;       /* borrowed while it runs */
    const int *ranks;           /* borrowed: plan ranks of sv->ranks[0..n) */
    int n;
    struct broker *broker;      /* borrowed: the local one, or NULL */
    struct sv_hook inner;       /* the hook ours displaced */
    struct stall *eng;          /* owned, like the arrays of n below */
    struct stall_sample *v;
    struct stall_out *o;
    pid_t *pgrp;
    unsigned long long *cpu;
    int *want;                  /* ranks whose stacks to sample */
    unsigned long long **stk;   /* owned: a rank's STALL_STACK_WORDS, made
                                   when first sampled */
    long *nstk;                 /* words in stk[i], or -1 */
    long interval_ms, next_ms, deadline_ms, quiet_ms;
    int phase, capturing;
    /* an agent: the head decides for every node (dlrun.quiet.NODE says
     * this node's ranks are quiet, dlrun.stall is the head's verdict) */
    int agent, node, said_quiet;
    struct client *c;           /* owned: to the head's broker, or NULL */
    int sigfd;                  /* SIGPWR: a report on demand; -1 */
    long long asked;            /* the head's dlrun.reportreq seen */
};

/* A signalfd for SIGPWR (blocked by job_stall_block), or -1; the caller
 * closes it. */
int stall_sigfd(void);

/* Did SIGPWR come on sigfd since the last look? */
int stall_asked(int sigfd);

/* How often a watch of timeout_ms looks: 1/20 of it, 0.25 to 5 s. */
long stall_interval_ms(long timeout_ms);

/* The host of w's rank i (borrowed from the plan). */
const char *stall_host(const struct stall_watch *w, int i);

/* The ranks went quiet at now: say the report, then freeze them (an
 * agent) or ask the Python ones for their stacks (stall_report.c). */
void stall_trip(struct stall_watch *w, long now);

/* Say the report of every running rank without ending anything; why
 * names who asked (stall_report.c). */
void stall_report_all(struct stall_watch *w, long now, const char *why);

/* Freeze the ranks / ask the Python ones to dump (stall_watch.c). */
void stall_freeze(struct stall_watch *w);
void stall_dump(struct stall_watch *w);

#endif
