/* summary.c - `--summary FILE`: what happened to every rank, as JSON, for
 * scripts and job post-mortems. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "job/job.h"
#include "place/nodeset.h"
#include "rendezvous/client.h"
#include "run/failwire.h"
#include "run/supervise.h"
#include "util/json.h"
#include "util/safefile.h"
#include "util/say.h"

/* The host of rank r, NULL for a rank the plan does not hold (not
 * believed: it names no host). */
static const char *rank_host(const struct plan *p, int r)
{
    return r >= 0 && r < p->nranks ? p->nodes[p->rank_node[r]].host : NULL;
}

static void write_rank(FILE *f, const struct job *j, const struct sv_rank *r)
{
    int sig = WIFSIGNALED(r->status) ? WTERMSIG(r->status) : 0;

    fprintf(f, "{\"rank\":%d,\"host\":", r->rank);
    json_string(f, rank_host(&j->plan, r->rank));
    fprintf(f, ",\"pid\":%d,\"exit_code\":%d,\"signal\":%d,"
            "\"start\":%.6f,\"end\":%.6f}", (int)r->pid,
            sig ? 128 + sig : supervise_exit_code(r->status), sig, r->start,
            r->end);
}

/* The rank that failed first, -1 for none or one outside the plan. */
static int failed_rank(const struct job *j, const struct supervise *sv)
{
    int r = sv->failed >= 0 && sv->failed < sv->n ? sv->ranks[sv->failed].rank
                                                  : -1;

    return r >= 0 && r < j->plan.nranks ? r : -1;
}

/* "nodes":["a","b"] from a comma list. */
static void write_node_list(FILE *f, const char *list)
{
    char name[256];

    fputs("\"nodes\":[", f);
    for (const char *s = list; *s;) {
        size_t n = strcspn(s, ",");
        snprintf(name, sizeof name, "%.*s", (int)n, s);
        if (s != list)
            fputc(',', f);
        json_string(f, name);
        s += n + (s[n] == ',');
    }
    fputc(']', f);
}

/* How long the job took to run again after the node's fault; the whole
 * is null when the ranks never ran again (the job ended first). */
static void write_recovery(FILE *f, const struct ns_recovery *r)
{
    long part[4], all = nodeset_recovery_parts(r, part);

    if (all < 0)
        fputs(",\"recovery_ms\":null", f);
    else
        fprintf(f, ",\"recovery_ms\":%ld", all);
    fprintf(f, ",\"detection_ms\":%ld,\"teardown_ms\":%ld,\"plan_ms\":%ld,"
            "\"start_ms\":%ld", part[0], part[1], part[2], part[3]);
}

/* --spares: the nodes excluded and each attempt's world. */
static void write_nodeset(FILE *f, const struct nodeset *ns)
{
    fputs(",\"excluded_nodes\":[", f);
    for (size_t i = 0; i < ns->nexcl; i++) {
        fputs(i ? ",{\"host\":" : "{\"host\":", f);
        json_string(f, ns->excl[i].host);
        fputs(",\"reason\":", f);
        json_string(f, ns->excl[i].reason);
        fprintf(f, ",\"attempt\":%d,\"time\":%.6f", ns->excl[i].attempt,
                ns->excl[i].time);
        write_recovery(f, &ns->excl[i].rec);
        fputc('}', f);
    }
    fputs("],\"attempts\":[", f);
    for (size_t i = 0; i < ns->natt; i++) {
        fprintf(f, "%s{\"attempt\":%zu,\"world_size\":%d,", i ? "," : "",
                i + 1, ns->att[i].world_size);
        write_node_list(f, ns->att[i].nodes);
        fputc('}', f);
    }
    fputc(']', f);
}

int summary_write(const struct job *j, const struct supervise *sv, int rc)
{
    /* not through another user's link, not into another user's file */
    int fd = safefile_open(AT_FDCWD, j->opt.summary, 0, 0644);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "w");

    if (!f) {
        if (fd >= 0)
            close(fd);
        return say_fail(-1, "--summary %s: %s", j->opt.summary,
                        errno == ELOOP ? "a symbolic link another user made" :
                        errno == EPERM ? "a file of another user" :
                        strerror(errno));
    }
    fprintf(f, "{\"exit_code\":%d,\"restarts\":%d,\"world_size\":%d,"
            "\"failed_rank\":%d,\"signal_received\":%d,\"source\":", rc,
            j->restart, j->plan.nranks, failed_rank(j, sv),
            sv->signal_received);
    json_string(f, j->alloc.source);
    fputs(",\"ranks\":[", f);
    for (int i = 0; i < sv->n; i++) {
        if (i)
            fputc(',', f);
        write_rank(f, j, &sv->ranks[i]);
    }
    fputc(']', f);
    if (j->nodeset)
        write_nodeset(f, j->nodeset);
    fputs("}\n", f);
    if (fclose(f) != 0)
        return say_fail(-1, "--summary %s: %s", j->opt.summary, strerror(errno));
    return 0;
}

/* One "RANK PID STATUS START END" line of node's agent into *r.  An agent
 * wrote it, or any rank (they hold the token): every number is parsed in
 * full and checked against the plan (the rank indexes the table, and is
 * one of node's), the times are finite.  0 / -1. */
static int parse_rank_line(const char *s, const struct plan *p, int node,
                           struct sv_rank *r)
{
    return fw_rank_parse(s, p->nranks, r) == 0 &&
           p->rank_node[r->rank] == node ? 0 : -1;
}

/* Node i's lines into the ranks' slots; a line that does not hold up is
 * left out (its rank stays as a lost agent's: killed). */
static void read_node(struct client *c, const struct plan *p, int node,
                      struct sv_rank *ranks)
{
    struct err err = { "" };
    char key[64], *line, *save = NULL;
    void *val = NULL;
    size_t len = 0;
    int bad = 0;

    snprintf(key, sizeof key, "dlrun.ranks.%d", node);
    if (client_get(c, key, 0, &val, &len, &err) != CLIENT_OK)
        return;
    for (line = strtok_r(val, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        struct sv_rank r;
        if (parse_rank_line(line, p, node, &r) == 0)
            ranks[r.rank] = r;
        else
            bad++;
    }
    if (bad)
        say_fail(0, "--summary: ignored %d bad line%s under %s (not written "
                 "by an agent)", bad, bad == 1 ? "" : "s", key);
    free(val);
}

int head_summary(const struct job *j, const char *addr, const char *token,
                 int failed_rank, int signal_received, int rc)
{
    const struct plan *p = &j->plan;
    struct err err = { "" };
    struct sv_rank *ranks = calloc((size_t)p->nranks, sizeof *ranks);
    /* the head checked it against the plan; checked again, it indexes */
    struct supervise sv = { .ranks = ranks, .n = p->nranks,
                            .failed = failed_rank >= 0 &&
                                      failed_rank < p->nranks ? failed_rank
                                                              : -1,
                            .signal_received = signal_received };
    struct client *c = client_connect(addr, token, 2000, &err);
    int out;

    if (!ranks || !c) {
        free(ranks);
        client_close(c);
        return say_fail(-1, "--summary %s: %s", j->opt.summary,
                        err.msg[0] ? err.msg : "out of memory");
    }
    /* a rank whose agent was lost did not report: shown killed */
    for (int r = 0; r < p->nranks; r++)
        ranks[r] = (struct sv_rank){ .rank = r, .status = SIGKILL };
    for (int i = 0; i < p->nnodes; i++)
        read_node(c, p, i, ranks);
    out = summary_write(j, &sv, rc);
    client_close(c);
    free(ranks);
    return out;
}
