/* stall_report.c - what the stall watch says: one report per rank (state,
 * wait channel, CPU in the window, the last line and its age, a native
 * rank's stacks), and after the ranks ended the one line naming where
 * they waited (an agent tells its head instead, dlrun.where.NODE). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job/job.h"
#include "job/stall_watch.h"
#include "job/stall_watch_int.h"
#include "observe/procstat.h"
#include "observe/stackdump.h"
#include "rendezvous/client.h"
#include "util/say.h"
#include "util/strv.h"

#define GDB_MS 20000            /* for one debugger run */

const char *stall_host(const struct stall_watch *w, int i)
{
    const struct plan *p = &w->j->plan;
    const char *h = p->nodes[p->rank_node[w->ranks[i]]].host;

    return h ? h : "?";
}

/* Each line of text, indented; of a debugger's only the frames and
 * thread headers (not its banner and source lines). */
static void say_indented(const char *text, int debugger)
{
    for (const char *p = text; *p;) {
        size_t n = strcspn(p, "\n");
        if (!debugger || *p == '#' || strncmp(p, "Thread ", 7) == 0 ||
            strncmp(p, "TID ", 4) == 0 || strncmp(p, "PID ", 4) == 0)
            say("    %.*s", (int)n, p);
        p += n + (p[n] == '\n');
    }
}

/* A native rank's threads, through a debugger or the kernel. */
static void say_stacks(int rank, pid_t who)
{
    static char buf[64 * 1024];
    const char *how = "kernel";

    stackdump_native(who, GDB_MS, buf, sizeof buf, &how);
    say("  rank %d's threads (%s):", rank, how);
    say_indented(buf, strcmp(how, "kernel") != 0);
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
        snprintf(o->wchan, sizeof o->wchan, "%s", st.state != 'R' ? "?" :
                 stall_spinning(w->eng, i) ? "(spinning)" : "(running)");
    if (o->last_ms >= 0)
        snprintf(age, sizeof age, "last line %ld s ago",
                 (now - o->last_ms) / 1000);
    say("  rank %d (host %s, pid %d%s): state %c, waits in %s, CPU %.2f s "
        "in the window%s, %s%s%s%s", w->ranks[i], stall_host(w, i), (int)who,
        py ? ", Python" : "", st.state, o->wchan, cpu,
        stall_spinning(w->eng, i) ? " (its stack did not move)" :
        "", age,
        o->last[0] ? ": \"" : "", o->last, o->last[0] ? "\"" : "");
    if (py)
        o->python = py;
    else
        say_stacks(w->ranks[i], who);
}

void stall_trip(struct stall_watch *w, long now)
{
    struct supervise *sv = w->sv;

    w->quiet_ms = stall_quiet_ms(w->eng, now);
    say("no rank wrote output, used CPU or reported progress for %ld s "
        "(--stall-timeout); the ranks%s%s:", w->quiet_ms / 1000,
        w->agent ? " on " : "", w->agent ? stall_host(w, 0) : "");
    for (int i = 0; i < w->n; i++)
        if (sv->ranks[i].running)
            report_rank(w, i, now);
    /* a failure of the job (a restart may follow), not one rank's */
    for (int i = 0; i < w->n && sv->failed < 0; i++)
        if (sv->ranks[i].running)
            sv->failed = i;
    if (w->agent)
        stall_freeze(w);
    else
        stall_dump(w);
}

void stall_report_all(struct stall_watch *w, long now, const char *why)
{
    say("report %s: ranks quiet for %ld s; the ranks%s%s:", why,
        stall_quiet_ms(w->eng, now) / 1000, w->agent ? " on " : "",
        w->agent ? stall_host(w, 0) : "");
    for (int i = 0; i < w->n; i++)
        if (w->sv->ranks[i].running)
            report_rank(w, i, now);
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

/* "RANK WHERE" lines for the head (dlrun.where.NODE); then wait until
 * every node told: ending now could end the others' dumps (srun ends a
 * step when one task ends). */
static void agent_tell_where(struct stall_watch *w,
                             char (*wh)[STALL_WHERE_MAX])
{
    struct err err = { "" };
    char key[64], *text = NULL;
    struct membuf b;
    FILE *m = membuf_open(&b);
    void *val = NULL;
    size_t n = 0;

    for (int i = 0; m && wh && i < w->n; i++)
        if (wh[i][0])
            fprintf(m, "%d %s\n", w->ranks[i], wh[i]);
    snprintf(key, sizeof key, "dlrun.where.%d", w->node);
    if (m && (text = membuf_close(&b)) &&
        (w->c || (w->c = client_from_env(5000, &err))) &&
        client_put(w->c, key, text, b.len, &err) == CLIENT_OK) {
        client_get(w->c, "dlrun.reported", STALL_FREEZE_MS, &val, &n, &err);
        err.msg[0] = '\0';
    }
    if (err.msg[0])
        say("agent: cannot tell the head where the ranks waited: %s",
            err.msg);
    free(val);
    free(text);
}

int job_stall_finish(struct stall_watch *w)
{
    char (*wh)[STALL_WHERE_MAX];
    const char **hosts;
    char line[4096];

    if (!w || w->phase == STALL_WATCH)
        return 0;
    wh = calloc((size_t)w->n, sizeof *wh);
    hosts = calloc((size_t)w->n, sizeof *hosts);
    for (int i = 0; wh && hosts && i < w->n; i++) {
        where_of(w, i, wh[i], sizeof wh[i]);
        hosts[i] = stall_host(w, i);
    }
    if (w->agent)       /* the head says it for every node */
        agent_tell_where(w, wh);
    else if (wh && hosts)
        stall_format_groups(w->n, w->ranks, hosts,
                            (const char (*)[STALL_WHERE_MAX])wh, line,
                            sizeof line);
    if (!w->agent)
        say("stalled %ld s: %s", w->quiet_ms / 1000,
            wh && hosts ? line : "out of memory");
    free(wh);
    free(hosts);
    return EXIT_STALL;
}
