/* stall_head.c - the head's side of --stall-timeout across nodes: every
 * node's agent says when its ranks are quiet (dlrun.quiet.NODE); the
 * ranks' progress comes here (dlrun.progress).  All nodes quiet and no
 * progress for the timeout is a stall: dlrun.stall tells the agents,
 * which report and freeze their ranks (dlrun.frozen.NODE); once every
 * node froze, dlrun.dump lets them dump; once every node put where its
 * ranks waited (dlrun.where.NODE), dlrun.reported lets them end. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "job/job.h"
#include "job/stall_watch.h"
#include "job/stall_watch_int.h"
#include "rendezvous/client.h"
#include "util/clock.h"
#include "util/say.h"

struct head_stall {
    const struct job *j;            /* borrowed */
    const char *addr, *token;       /* borrowed: the head's broker */
    struct client *c;               /* owned, or NULL until connected */
    long timeout_ms, interval_ms, next_ms, progress_ms, frozen_by;
    char progress[32];
    int tripped, dumped, reported;
    int sigfd;                      /* SIGPWR: ask the agents for a report */
    const struct supervise *sv;     /* borrowed: the agents' processes */
    long *gone_ms;                  /* owned: when node i's agent was seen
                                       ended */
    struct sv_hook inner;           /* the hook ours displaced */
    int fault_node;                 /* the plan node the stall line blames
                                       (stall_one_node), or -1 */
    char fault_reason[200];
};

struct head_stall *head_stall_create(const struct job *j, const char *addr,
                                     const char *token)
{
    struct head_stall *hs;
    long t = j->opt.stall_timeout_ms;

    if (t <= 0 || !(hs = calloc(1, sizeof *hs)))
        return NULL;
    *hs = (struct head_stall){ .j = j, .addr = addr, .token = token,
                               .timeout_ms = t, .progress_ms = clock_ms(),
                               .fault_node = -1 };
    hs->interval_ms = stall_interval_ms(t);
    hs->next_ms = clock_ms() + hs->interval_ms;
    hs->gone_ms = calloc((size_t)j->plan.nnodes, sizeof *hs->gone_ms);
    if (!hs->gone_ms) {
        free(hs);
        return NULL;
    }
    hs->sigfd = stall_sigfd();
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

/* Has every node's agent said what (dlrun.WHAT.NODE), or ended? */
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

/* Watching: pass SIGPWR on as dlrun.reportreq; every node quiet: put
 * dlrun.stall. */
static void head_watch_step(struct head_stall *hs, long now)
{
    struct err err = { "" };

    hs->next_ms = now + hs->interval_ms;
    if (!hs->c)
        hs->c = client_connect(hs->addr, hs->token, 2000, &err);
    if (hs->c && stall_asked(hs->sigfd))
        client_add(hs->c, "dlrun.reportreq", 1, NULL, &err);
    if (hs->c && head_quiet(hs, now) &&
        client_put(hs->c, "dlrun.stall", "1", 1, &err) == CLIENT_OK) {
        hs->tripped = 1;
        hs->frozen_by = now + STALL_FREEZE_MS;
    }
}

/* Tripped: every node frozen, dump; every node's where told, the agents
 * may end (srun ends a step's other tasks when one ends). */
static void head_trip_step(struct head_stall *hs, long now)
{
    struct err err = { "" };
    const char *next = hs->dumped ? "dlrun.reported" : "dlrun.dump";

    hs->next_ms = now + 100;
    if ((all_said(hs, hs->dumped ? "where" : "frozen", now) ||
         now >= hs->frozen_by) &&
        client_put(hs->c, next, "1", 1, &err) == CLIENT_OK) {
        hs->reported = hs->dumped;
        hs->dumped = 1;
        hs->frozen_by = now + STALL_FREEZE_MS;
    }
}

static int head_tick(void *ctx, int readable)
{
    struct head_stall *hs = ctx;
    int inner = supervise_hook_call(&hs->inner, readable);
    long now = clock_ms();

    if (!hs->tripped && now >= hs->next_ms)
        head_watch_step(hs, now);
    else if (hs->tripped && !hs->reported && now >= hs->next_ms)
        head_trip_step(hs, now);
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

/* Every node's "RANK WHERE" lines into hw; the bad lines, counted. */
static int read_wheres(struct head_stall *hs, struct head_where *hw)
{
    const struct plan *p = &hs->j->plan;
    char key[64], *text = malloc(65536);
    int bad = 0;

    for (int i = 0; text && i < p->nnodes; i++) {
        snprintf(key, sizeof key, "dlrun.where.%d", i);
        if (get_text(hs->c, key, text, 65536) == 0)
            bad += stall_where_parse(text, strlen(text), p->nranks,
                                     take_where, hw);
    }
    free(text);
    return bad;
}

/* The ranks of where's entry one's node that said where (consecutive
 * ones as a range) into buf (len bytes); how many. */
static int node_ranks(const struct plan *p, const char (*wh)[STALL_WHERE_MAX],
                      int one, char *buf, size_t len)
{
    int node = p->rank_node[one], count = 0, from = -1;
    size_t k = 0;

    buf[0] = '\0';
    for (int r = 0; r <= p->nranks && k + 1 < len; r++) {
        int in = r < p->nranks && p->rank_node[r] == node && wh[r][0];
        if (in && from < 0)
            from = r;
        if (in || from < 0)
            continue;
        k += (size_t)snprintf(buf + k, len - k, from == r - 1 ? "%s%d" :
                              "%s%d-%d", k ? ", " : "", from, r - 1);
        count += r - from;
        from = -1;
    }
    return count;
}

/* The stall line blames one node (stall_one_node): note it and why. */
static void blame_node(struct head_stall *hs, const char *const *hosts,
                       const char (*wh)[STALL_WHERE_MAX])
{
    const struct plan *p = &hs->j->plan;
    int one = stall_one_node(p->nranks, hosts, wh), n, spin;
    char list[64];

    if (one < 0)
        return;
    n = node_ranks(p, wh, one, list, sizeof list);
    hs->fault_node = p->rank_node[one];
    spin = strcmp(wh[one], "(spinning)") == 0;
    snprintf(hs->fault_reason, sizeof hs->fault_reason, "its rank%s %s "
             "stalled for %ld s %s%s while the others waited elsewhere "
             "(--stall-timeout)", n == 1 ? "" : "s", list,
             hs->timeout_ms / 1000, spin ? "(stack not moving)" : "in ",
             spin ? "" : wh[one]);
}

int head_stall_node(const struct head_stall *hs, char *reason, size_t len)
{
    if (!hs || hs->fault_node < 0)
        return -1;
    snprintf(reason, len, "%s", hs->fault_reason);
    return hs->fault_node;
}

int head_stall_finish(struct head_stall *hs)
{
    const struct plan *p;
    struct head_where hw = { NULL };
    const char **hosts = NULL;
    int *ranks = NULL, bad = 0;
    char line[4096] = "";

    if (!hs || !hs->tripped || !hs->c)
        return 0;
    p = &hs->j->plan;
    hw.wh = calloc((size_t)p->nranks, sizeof *hw.wh);
    hosts = calloc((size_t)p->nranks, sizeof *hosts);
    ranks = calloc((size_t)p->nranks, sizeof *ranks);
    if (hw.wh && hosts && ranks)
        bad = read_wheres(hs, &hw);
    for (int r = 0; hosts && ranks && r < p->nranks; r++) {
        ranks[r] = r;
        hosts[r] = p->nodes[p->rank_node[r]].host;
    }
    if (bad)
        say("ignoring %d line%s of the agents' stall reports that are not "
            "\"RANK WHERE\"", bad, bad == 1 ? "" : "s");
    if (hw.wh && hosts && ranks) {
        stall_format_groups(p->nranks, ranks, hosts,
                            (const char (*)[STALL_WHERE_MAX])hw.wh, line,
                            sizeof line);
        blame_node(hs, hosts, (const char (*)[STALL_WHERE_MAX])hw.wh);
    }
    say("stalled %ld s: %s", hs->timeout_ms / 1000,
        line[0] ? line : "the agents did not say where");
    free(hw.wh);
    free(hosts);
    free(ranks);
    return EXIT_STALL;
}
