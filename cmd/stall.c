/* stall.c - --stall-timeout for the ranks this dlrun starts.  The ranks
 * are sampled (CPU time from /proc, the lines the output engine passes
 * through its tap, the local broker's requests as progress) into the
 * detector of lib/observe/stall.h.  On a stall: one report per rank (state, wait
 * channel, CPU in the window, the last line and its age, a native rank's
 * stacks), Python ranks dump every thread (PYTHONFAULTHANDLER, set for the
 * ranks, and SIGABRT), the ranks are ended, and one last line names where
 * they waited; the job then counts as failed (exit EXIT_STALL, a restart
 * under --max-restarts).  SIGPWR prints the report without ending
 * anything.  Across nodes each agent watches its own ranks and the head
 * decides for all (head_stall_*, the keys in dlrun-broker(7)). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <time.h>

#include "rendezvous/broker.h"
#include "rendezvous/client.h"
#include "cmd.h"
#include "util/evloop.h"
#include "job/job.h"
#include "run/output.h"
#include "observe/procstat.h"
#include "observe/stackdump.h"
#include "observe/stall.h"
#include "util/strv.h"
#include "run/supervise.h"

#define LAST_MAX 160            /* bytes of the last line kept */
#define CAPTURE_MAX (256 * 1024)    /* of a rank's stderr after SIGABRT */
#define DUMP_MS 15000           /* for the Python ranks to dump and end */
#define GDB_MS 20000            /* for one debugger run */

#define FREEZE_MS 30000          /* for every node to freeze its ranks */

/* An agent freezes its ranks (SIGSTOP) after its report and waits for
 * the head's dlrun.dump, given once every node froze its own: a Python
 * rank that ended on one node would otherwise make its peers elsewhere
 * fail in their collective (connection closed) before they dump where
 * they waited. */
enum { WATCH, FROZEN, DUMP, TERM, DONE };

struct stall_out {
    unsigned long long lines;
    char last[LAST_MAX];
    long last_ms;               /* -1: no line yet */
    char *cap;                  /* stderr since the dump was asked */
    size_t ncap;
    pid_t python;               /* the interpreter sent SIGABRT, or 0 */
    char wchan[64];
};

struct stall_watch {
    struct job *j;
    struct supervise *sv;
    const int *ranks;           /* borrowed: plan ranks of sv->ranks[0..n) */
    int n;
    struct broker *broker;      /* borrowed: the local one, or NULL */
    struct sv_hook inner;       /* the hook ours displaced */
    struct stall *eng;
    struct stall_sample *v;
    struct stall_out *o;
    pid_t *pgrp;
    unsigned long long *cpu;
    long interval_ms, next_ms, deadline_ms, quiet_ms;
    int phase, capturing;
    /* an agent: the head decides for every node (dlrun.quiet.NODE says
     * this node's ranks are quiet, dlrun.stall is the head's verdict) */
    int agent, node, said_quiet;
    struct client *c;
    int sigfd;                  /* SIGPWR: a report on demand; -1 */
    long long asked;            /* the head's dlrun.reportreq seen */
};

static long mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void job_stall_block(const struct job *j, sigset_t *set)
{
    if (j->opt.stall_timeout_ms > 0)
        sigaddset(set, SIGPWR);
}

/* A signalfd for SIGPWR (blocked by job_stall_block), or -1. */
static int job_stall_sigfd(void)
{
    sigset_t set;

    sigemptyset(&set);
    sigaddset(&set, SIGPWR);
    return sigfd_open(&set, NULL);
}

/* Did SIGPWR come since the last look? */
static int asked_now(int sigfd)
{
    int got = 0;

    while (sigfd_take(sigfd) > 0)
        got = 1;
    return got;
}

struct stall_watch *job_stall_create(struct job *j, const int *ranks, int n)
{
    struct stall_watch *w;
    long t = j->opt.stall_timeout_ms;

    if (t <= 0 || n <= 0 || !(w = calloc(1, sizeof *w)))
        return NULL;
    *w = (struct stall_watch){ .j = j, .ranks = ranks, .n = n,
                               .agent = j->agent, .node = j->plan.self_node };
    w->eng = stall_create(n, t, procstat_hz());
    w->v = calloc((size_t)n, sizeof *w->v);
    w->o = calloc((size_t)n, sizeof *w->o);
    w->pgrp = calloc((size_t)n, sizeof *w->pgrp);
    w->cpu = calloc((size_t)n, sizeof *w->cpu);
    if (!w->eng || !w->v || !w->o || !w->pgrp || !w->cpu) {
        job_stall_free(w);
        cmd_fail(0, "warning: --stall-timeout: out of memory, not watching");
        return NULL;
    }
    for (int i = 0; i < n; i++)
        w->o[i].last_ms = -1;
    w->sigfd = job_stall_sigfd();
    /* a sample every 1/20 of the timeout: a stall is seen within 5% */
    w->interval_ms = t / 20 < 250 ? 250 : t / 20 > 5000 ? 5000 : t / 20;
    /* the ranks' Python dumps its threads on SIGABRT (and on a crash) */
    setenv("PYTHONFAULTHANDLER", "1", 0);
    return w;
}

void job_stall_free(struct stall_watch *w)
{
    if (!w)
        return;
    for (int i = 0; w->o && i < w->n; i++)
        free(w->o[i].cap);
    stall_destroy(w->eng);
    client_close(w->c);
    if (w->sigfd >= 0)
        close(w->sigfd);
    free(w->v);
    free(w->o);
    free(w->pgrp);
    free(w->cpu);
    free(w);
}

/* The output engine's tap: count lines, keep the last, capture dumps. */
static void tap(void *ctx, int rank, int which, const char *p, size_t len)
{
    struct stall_watch *w = ctx;
    struct stall_out *o = NULL;
    size_t end = len, start;

    for (int i = 0; i < w->n && !o; i++)
        if (w->ranks[i] == rank)
            o = &w->o[i];
    if (!o)
        return;
    o->lines++;
    o->last_ms = mono_ms();
    while (end > 0 && (p[end - 1] == '\n' || p[end - 1] == '\r'))
        end--;
    for (start = end; start > 0 && p[start - 1] != '\n'; start--)
        ;
    if (end > start)
        snprintf(o->last, sizeof o->last, "%.*s", (int)(end - start), p + start);
    if (w->capturing && which == 2 && o->python && o->ncap < CAPTURE_MAX) {
        size_t k = len < CAPTURE_MAX - o->ncap ? len : CAPTURE_MAX - o->ncap;
        char *c = realloc(o->cap, o->ncap + k);
        if (c) {
            memcpy(c + o->ncap, p, k);
            o->cap = c;
            o->ncap += k;
        }
    }
}

void job_stall_output(struct stall_watch *w, struct output_opts *oo)
{
    if (!w)
        return;
    oo->tap = tap;
    oo->tap_ctx = w;
}

/* One sample of every rank into the detector; 1 when stalled. */
static int sample(struct stall_watch *w, long now)
{
    struct broker_stats bs = { 0 };

    if (w->broker)
        broker_get_stats(w->broker, &bs);
    for (int i = 0; i < w->n; i++)
        w->pgrp[i] = w->sv->ranks[i].pid;
    if (procstat_groups_cpu(w->pgrp, w->n, w->cpu, NULL) < 0)
        return 0;       /* no /proc: nothing is known, nothing is ended */
    for (int i = 0; i < w->n; i++)
        w->v[i] = (struct stall_sample){
            .alive = w->sv->ranks[i].running, .cpu = w->cpu[i],
            .output = w->o[i].lines, .progress = bs.requests,
        };
    return stall_feed(w->eng, now, w->v);
}

static const char *host_of(const struct stall_watch *w, int i)
{
    const struct plan *p = &w->j->plan;
    const char *h = p->nodes[p->rank_node[w->ranks[i]]].host;

    return h ? h : "?";
}

/* Each line of text, indented, on stderr; of a debugger's only the
 * frames and thread headers (not its banner and source lines). */
static void print_indented(const char *text, int debugger)
{
    for (const char *p = text; *p;) {
        size_t n = strcspn(p, "\n");
        if (!debugger || *p == '#' || strncmp(p, "Thread ", 7) == 0 ||
            strncmp(p, "TID ", 4) == 0 || strncmp(p, "PID ", 4) == 0)
            fprintf(stderr, "dlrun:     %.*s\n", (int)n, p);
        p += n + (p[n] == '\n');
    }
}

/* Rank i's report: what the kernel says, its last line, its stacks. */
static void report_rank(struct stall_watch *w, int i, long now)
{
    struct sv_rank *r = &w->sv->ranks[i];
    struct stall_out *o = &w->o[i];
    pid_t py = procstat_group_python(r->pid);
    pid_t who = py ? py : procstat_group_leaf(r->pid);
    struct procstat st = { .state = '?' };
    double cpu = (double)stall_window_cpu(w->eng, i) / (double)procstat_hz();
    char age[48] = "no output yet";

    procstat_read(who, &st);
    if (procstat_wchan(who, o->wchan, sizeof o->wchan) < 0 || !o->wchan[0] ||
        strcmp(o->wchan, "0") == 0)
        snprintf(o->wchan, sizeof o->wchan, "%s", st.state == 'R' ?
                 "(running)" : "?");
    if (o->last_ms >= 0)
        snprintf(age, sizeof age, "last line %ld s ago",
                 (now - o->last_ms) / 1000);
    fprintf(stderr, "dlrun:   rank %d (host %s, pid %d%s): state %c, waits in "
            "%s, CPU %.2f s in the window, %s%s%s%s\n", w->ranks[i],
            host_of(w, i), (int)who, py ? ", Python" : "", st.state, o->wchan,
            cpu, age, o->last[0] ? ": \"" : "", o->last,
            o->last[0] ? "\"" : "");
    if (py) {
        o->python = py;
        return;
    }
    static char buf[64 * 1024];
    const char *how = "kernel";
    stackdump_native(who, GDB_MS, buf, sizeof buf, &how);
    fprintf(stderr, "dlrun:   rank %d's threads (%s):\n", w->ranks[i], how);
    print_indented(buf, strcmp(how, "kernel") != 0);
}

/* Every Python rank gets SIGABRT (faulthandler dumps its threads) and,
 * when frozen, SIGCONT after it: the pending SIGABRT comes first. */
static void dump(struct stall_watch *w)
{
    int py = 0;

    w->capturing = 1;
    for (int i = 0; i < w->n; i++)
        if (w->o[i].python && kill(w->o[i].python, SIGABRT) == 0)
            py++;
    for (int i = 0; w->phase == FROZEN && i < w->n; i++)
        if (w->sv->ranks[i].running)
            killpg(w->sv->ranks[i].pid, SIGCONT);
    if (py)
        fprintf(stderr, "dlrun: the Python ranks' threads follow "
                "(faulthandler, on their stderr)\n");
    fflush(stderr);
    w->phase = DUMP;
    w->deadline_ms = mono_ms() + DUMP_MS;
}

static void freeze(struct stall_watch *w)
{
    struct err err = { "" };
    char key[64];

    for (int i = 0; i < w->n; i++)
        if (w->sv->ranks[i].running)
            killpg(w->sv->ranks[i].pid, SIGSTOP);
    snprintf(key, sizeof key, "dlrun.frozen.%d", w->node);
    if (w->c)
        client_put(w->c, key, "1", 1, &err);
    w->phase = FROZEN;
    w->deadline_ms = mono_ms() + FREEZE_MS;
}

/* Frozen: has the head said dump (or is it overdue)? */
static int thaw_due(struct stall_watch *w, long now)
{
    struct err err = { "" };
    void *val = NULL;
    size_t len = 0;
    int go = now >= w->deadline_ms ||
             (w->c && client_get(w->c, "dlrun.dump", 0, &val, &len, &err) ==
                      CLIENT_OK);

    free(val);
    return go;
}

/* The ranks went quiet: report, ask the Python ones for their stacks. */
static void trip(struct stall_watch *w, long now)
{
    struct supervise *sv = w->sv;

    w->quiet_ms = stall_quiet_ms(w->eng, now);
    fprintf(stderr, "dlrun: no rank wrote output, used CPU or reported "
            "progress for %ld s (--stall-timeout); the ranks%s%s:\n",
            w->quiet_ms / 1000, w->agent ? " on " : "",
            w->agent ? host_of(w, 0) : "");
    for (int i = 0; i < w->n; i++)
        if (sv->ranks[i].running)
            report_rank(w, i, now);
    /* a failure of the job (a restart may follow), not one rank's */
    for (int i = 0; i < w->n && sv->failed < 0; i++)
        if (sv->ranks[i].running)
            sv->failed = i;
    fflush(stderr);
    if (w->agent) {
        freeze(w);
        return;
    }
    dump(w);
}

static void signal_ranks(struct stall_watch *w, int sig)
{
    for (int i = 0; i < w->n; i++)
        if (w->sv->ranks[i].running)
            killpg(w->sv->ranks[i].pid, sig);
}

/* The Python ranks are done dumping (or took too long)? */
static int dumped(const struct stall_watch *w, long now)
{
    for (int i = 0; i < w->n; i++)
        if (w->o[i].python && w->sv->ranks[i].running)
            return now >= w->deadline_ms;
    return 1;
}

/* The report of every running rank, without ending anything. */
static void report_all(struct stall_watch *w, long now, const char *why)
{
    fprintf(stderr, "dlrun: report %s: ranks quiet for %ld s; the ranks%s%s:\n",
            why, stall_quiet_ms(w->eng, now) / 1000, w->agent ? " on " : "",
            w->agent ? host_of(w, 0) : "");
    for (int i = 0; i < w->n; i++)
        if (w->sv->ranks[i].running)
            report_rank(w, i, now);
    fflush(stderr);
}

/* An agent's quiet node: tell the head when that changes; trip when the
 * head saw every node quiet.  1 when it must trip. */
static int agent_verdict(struct stall_watch *w, int quiet)
{
    struct err err = { "" };
    char key[64];
    void *val = NULL;
    size_t len = 0;
    int go = 0;

    if (!w->c && !(w->c = client_from_env(5000, &err)))
        return 0;
    snprintf(key, sizeof key, "dlrun.quiet.%d", w->node);
    if (quiet != w->said_quiet &&
        client_put(w->c, key, quiet ? "1" : "0", 1, &err) == CLIENT_OK)
        w->said_quiet = quiet;
    if (quiet && client_get(w->c, "dlrun.stall", 0, &val, &len, &err) ==
                 CLIENT_OK)
        go = 1;
    free(val);
    val = NULL;
    if (client_get(w->c, "dlrun.reportreq", 0, &val, &len, &err) == CLIENT_OK &&
        atoll(val) != w->asked) {
        w->asked = atoll(val);
        report_all(w, mono_ms(), "asked for (SIGPWR at the head)");
    }
    free(val);
    return go;
}

static void step(struct stall_watch *w, long now)
{
    if (w->phase == WATCH) {
        int quiet = sample(w, now);
        if (asked_now(w->sigfd))
            report_all(w, now, "asked for (SIGPWR)");
        if (w->agent ? agent_verdict(w, quiet) : quiet) {
            trip(w, now);
            now = mono_ms();
        }
    }
    if (w->phase == FROZEN && thaw_due(w, now))
        dump(w);
    if (w->phase == DUMP && dumped(w, now)) {
        signal_ranks(w, SIGTERM);
        w->phase = TERM;
        w->deadline_ms = now + w->sv->kill_timeout_ms;
    } else if (w->phase == TERM && now >= w->deadline_ms) {
        signal_ranks(w, SIGKILL);
        w->phase = DONE;
    }
}

/* sv's periodic hook: the wrapped one's, then ours when due. */
static int tick(void *ctx, int readable)
{
    struct stall_watch *w = ctx;
    int inner = supervise_hook_call(&w->inner, readable);
    long now = mono_ms();

    if (w->phase != DONE && now >= w->next_ms) {
        step(w, now);
        w->next_ms = now + (w->phase == WATCH ? w->interval_ms : 100);
    }
    return supervise_sooner(inner, w->phase == DONE ? -1 : w->next_ms - now);
}

void job_stall_watch(struct stall_watch *w, struct supervise *sv,
                     struct broker *b)
{
    if (!w)
        return;
    w->sv = sv;
    w->broker = b;
    supervise_hook(sv, tick, w, &w->inner);
    w->next_ms = mono_ms();
}

/* Where rank i waited: its Python frame, else its wait channel; "" for
 * a rank that had ended before the stall. */
static void where_of(const struct stall_watch *w, int i, char *buf,
                     size_t len)
{
    const struct stall_out *o = &w->o[i];

    buf[0] = '\0';
    if (o->python && o->cap && stall_py_where(o->cap, o->ncap, buf, len) == 0)
        return;
    if (o->python || o->wchan[0])
        snprintf(buf, len, "%s%s", o->python ? "no Python stack; kernel " : "",
                 o->wchan[0] ? o->wchan : "?");
}

/* "RANK WHERE" lines for the head (dlrun.where.NODE). */
static void agent_tell_where(struct stall_watch *w,
                             char (*wh)[STALL_WHERE_MAX])
{
    struct err err = { "" };
    char key[64], *text = NULL;
    struct membuf b;
    FILE *m = membuf_open(&b);

    for (int i = 0; m && wh && i < w->n; i++)
        if (wh[i][0])
            fprintf(m, "%d %s\n", w->ranks[i], wh[i]);
    snprintf(key, sizeof key, "dlrun.where.%d", w->node);
    if (m && (text = membuf_close(&b)) &&
        (w->c || (w->c = client_from_env(5000, &err))) &&
        client_put(w->c, key, text, b.len, &err) == CLIENT_OK) {
        void *val = NULL;
        size_t n = 0;
        /* until every node told: ending now could end the others' dumps
         * (srun ends a step when one task ends) */
        client_get(w->c, "dlrun.reported", FREEZE_MS, &val, &n, &err);
        free(val);
        err.msg[0] = '\0';
    }
    if (err.msg[0])
        cmd_fail(0, "agent: cannot tell the head where the ranks waited: %s",
                 err.msg);
    free(text);
}

int job_stall_finish(struct stall_watch *w)
{
    char (*wh)[STALL_WHERE_MAX];
    const char **hosts;
    char line[4096];

    if (!w || w->phase == WATCH)
        return 0;
    wh = calloc((size_t)w->n, sizeof *wh);
    hosts = calloc((size_t)w->n, sizeof *hosts);
    for (int i = 0; wh && hosts && i < w->n; i++) {
        where_of(w, i, wh[i], sizeof wh[i]);
        hosts[i] = host_of(w, i);
    }
    if (w->agent)       /* the head says it for every node */
        agent_tell_where(w, wh);
    else if (wh && hosts)
        stall_format_groups(w->n, w->ranks, hosts,
                            (const char (*)[STALL_WHERE_MAX])wh, line,
                            sizeof line);
    if (!w->agent)
        cmd_fail(0, "stalled %ld s: %s", w->quiet_ms / 1000,
                 wh && hosts ? line : "out of memory");
    free(wh);
    free(hosts);
    return 1;
}

/* The head of a job across nodes: every node's agent says when its ranks
 * are quiet (dlrun.quiet.NODE); the ranks' progress comes here
 * (dlrun.progress).  All nodes quiet and no progress for the timeout is a
 * stall: dlrun.stall tells the agents, which report and end their ranks
 * and put where they waited into dlrun.where.NODE. */
struct head_stall {
    const struct job *j;
    const char *addr, *token;       /* borrowed: the head's broker */
    struct client *c;
    long timeout_ms, interval_ms, next_ms, progress_ms, frozen_by;
    char progress[32];
    int tripped, dumped, reported;
    int sigfd;                      /* SIGPWR: ask the agents for a report */
    const struct supervise *sv;     /* the agents' processes */
    long *gone_ms;                  /* when node i's agent was seen ended */
    struct sv_hook inner;       /* the hook ours displaced */
};

struct head_stall *head_stall_create(const struct job *j, const char *addr,
                                     const char *token)
{
    struct head_stall *hs;
    long t = j->opt.stall_timeout_ms;

    if (t <= 0 || !(hs = calloc(1, sizeof *hs)))
        return NULL;
    *hs = (struct head_stall){ .j = j, .addr = addr, .token = token,
                               .timeout_ms = t, .progress_ms = mono_ms() };
    hs->interval_ms = t / 20 < 250 ? 250 : t / 20 > 5000 ? 5000 : t / 20;
    hs->next_ms = mono_ms() + hs->interval_ms;
    hs->gone_ms = calloc((size_t)j->plan.nnodes, sizeof *hs->gone_ms);
    hs->sigfd = job_stall_sigfd();
    if (!hs->gone_ms) {
        free(hs);
        return NULL;
    }
    return hs;
}

void head_stall_free(struct head_stall *hs)
{
    if (!hs)
        return;
    client_close(hs->c);
    if (hs->sigfd >= 0)
        close(hs->sigfd);
    free(hs->gone_ms);
    free(hs);
}

/* key's value into buf (len bytes, cut); 0, or -1 when not set. */
static int get_text(struct client *c, const char *key, char *buf, size_t len)
{
    struct err err = { "" };
    void *val = NULL;
    size_t n = 0;
    int rc = client_get(c, key, 0, &val, &n, &err) == CLIENT_OK ? 0 : -1;

    if (rc == 0)
        snprintf(buf, len, "%.*s", (int)(n < len ? n : len - 1), (char *)val);
    free(val);
    return rc;
}

/* Has node's agent ended (its ranks with it) at least the timeout ago
 * (quiet since)?  Under ssh each node's agent (or relay) is a process of
 * the head's, rank -1-NODE; under srun there is one for all. */
static int agent_gone(struct head_stall *hs, int node, long now)
{
    for (int i = 0; i < hs->sv->n; i++) {
        if (hs->sv->ranks[i].rank != -1 - node)
            continue;
        if (hs->sv->ranks[i].running)
            return 0;
        if (!hs->gone_ms[node])
            hs->gone_ms[node] = now;
        return now - hs->gone_ms[node] >= hs->timeout_ms;
    }
    return 0;
}

/* Every node quiet and no progress for the timeout? */
static int head_quiet(struct head_stall *hs, long now)
{
    char val[32] = "", key[64];
    int nodes = hs->j->plan.nnodes, quiet = 0;

    get_text(hs->c, "dlrun.progress", val, sizeof val);
    if (strcmp(val, hs->progress) != 0) {
        snprintf(hs->progress, sizeof hs->progress, "%s", val);
        hs->progress_ms = now;
    }
    for (int i = 0; i < nodes; i++) {
        snprintf(key, sizeof key, "dlrun.quiet.%d", i);
        quiet += agent_gone(hs, i, now) ||
                 (get_text(hs->c, key, val, sizeof val) == 0 &&
                  strcmp(val, "1") == 0);
    }
    return quiet == nodes && now - hs->progress_ms >= hs->timeout_ms;
}

/* Has every node's agent frozen its ranks (dlrun.frozen.NODE)? */
static int all_said(struct head_stall *hs, const char *what, long now)
{
    char key[64], val[8];

    for (int i = 0; i < hs->j->plan.nnodes; i++) {
        snprintf(key, sizeof key, "dlrun.%s.%d", what, i);
        if (!agent_gone(hs, i, now + hs->timeout_ms) &&
            get_text(hs->c, key, val, sizeof val) < 0)
            return 0;
    }
    return 1;
}

static int head_tick(void *ctx, int readable)
{
    struct head_stall *hs = ctx;
    struct err err = { "" };
    int inner = supervise_hook_call(&hs->inner, readable);
    long now = mono_ms();

    if (!hs->tripped && now >= hs->next_ms) {
        hs->next_ms = now + hs->interval_ms;
        if (!hs->c)
            hs->c = client_connect(hs->addr, hs->token, 2000, &err);
        if (hs->c && asked_now(hs->sigfd))
            client_add(hs->c, "dlrun.reportreq", 1, NULL, &err);
        if (hs->c && head_quiet(hs, now) &&
            client_put(hs->c, "dlrun.stall", "1", 1, &err) == CLIENT_OK) {
            hs->tripped = 1;
            hs->frozen_by = now + FREEZE_MS;
        }
    } else if (hs->tripped && !hs->reported && now >= hs->next_ms) {
        /* every node frozen: dump; every node's where told: the agents
         * may end (srun ends a step's other tasks when one ends) */
        const char *next = hs->dumped ? "dlrun.reported" : "dlrun.dump";
        hs->next_ms = now + 100;
        if ((all_said(hs, hs->dumped ? "where" : "frozen", now) ||
             now >= hs->frozen_by) &&
            client_put(hs->c, next, "1", 1, &err) == CLIENT_OK) {
            hs->reported = hs->dumped;
            hs->dumped = 1;
            hs->frozen_by = now + FREEZE_MS;
        }
    }
    return supervise_sooner(inner, hs->reported ? -1 : hs->next_ms - now);
}

void head_stall_watch(struct head_stall *hs, struct supervise *sv)
{
    if (!hs)
        return;
    hs->sv = sv;
    supervise_hook(sv, head_tick, hs, &hs->inner);
}

struct head_where {
    char (*wh)[STALL_WHERE_MAX];
};

static void take_where(void *ctx, int rank, const char *where)
{
    struct head_where *hw = ctx;

    snprintf(hw->wh[rank], STALL_WHERE_MAX, "%s", where);
}

int head_stall_finish(struct head_stall *hs)
{
    const struct plan *p;
    struct head_where hw;
    const char **hosts;
    int *ranks, bad = 0;
    char key[64], line[4096] = "", *text = malloc(65536);

    if (!hs || !hs->tripped || !hs->c)
        return free(text), 0;
    p = &hs->j->plan;
    hw.wh = calloc((size_t)p->nranks, sizeof *hw.wh);
    hosts = calloc((size_t)p->nranks, sizeof *hosts);
    ranks = calloc((size_t)p->nranks, sizeof *ranks);
    for (int i = 0; text && hw.wh && hosts && ranks && i < p->nnodes; i++) {
        snprintf(key, sizeof key, "dlrun.where.%d", i);
        if (get_text(hs->c, key, text, 65536) == 0)
            bad += stall_where_parse(text, strlen(text), p->nranks,
                                     take_where, &hw);
    }
    for (int r = 0; hosts && ranks && r < p->nranks; r++) {
        ranks[r] = r;
        hosts[r] = p->nodes[p->rank_node[r]].host;
    }
    if (bad)
        cmd_fail(0, "ignoring %d line%s of the agents' stall reports that "
                 "are not \"RANK WHERE\"", bad, bad == 1 ? "" : "s");
    if (hw.wh && hosts && ranks)
        stall_format_groups(p->nranks, ranks, hosts,
                            (const char (*)[STALL_WHERE_MAX])hw.wh, line,
                            sizeof line);
    cmd_fail(0, "stalled %ld s: %s", hs->timeout_ms / 1000,
             line[0] ? line : "the agents did not say where");
    free(text);
    free(hw.wh);
    free(hosts);
    free(ranks);
    return 1;
}

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
        cmd_fail(0, "SIG%s: passed it to the ranks on %d node%s through "
                 "their agents; exit %d", name, j->plan.nnodes,
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
    cmd_fail(0, "SIG%s: passed it to the %d rank%s%s; exit %d", name, ranks,
             ranks == 1 ? "" : "s", more, rc);
}
