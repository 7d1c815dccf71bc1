/* summary.c - `--summary FILE`: what happened to every rank, as JSON, for
 * scripts and job post-mortems. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include <stdlib.h>

#include "client.h"
#include "cmd.h"
#include "job.h"
#include "json.h"
#include "supervise.h"

static void write_rank(FILE *f, const struct job *j, const struct sv_rank *r)
{
    int sig = WIFSIGNALED(r->status) ? WTERMSIG(r->status) : 0;

    fprintf(f, "{\"rank\":%d,\"host\":", r->rank);
    json_string(f, j->plan.nodes[j->plan.rank_node[r->rank]].host);
    fprintf(f, ",\"pid\":%d,\"exit_code\":%d,\"signal\":%d,"
            "\"start\":%.6f,\"end\":%.6f}", (int)r->pid,
            sig ? 128 + sig : supervise_exit_code(r->status), sig, r->start,
            r->end);
}

int summary_write(const struct job *j, const struct supervise *sv, int rc)
{
    FILE *f = fopen(j->opt.summary, "w");

    if (!f)
        return cmd_fail(-1, "--summary %s: %s", j->opt.summary, strerror(errno));
    fprintf(f, "{\"exit_code\":%d,\"restarts\":%d,\"world_size\":%d,"
            "\"failed_rank\":%d,\"signal_received\":%d,\"source\":", rc,
            j->restart, j->plan.nranks,
            sv->failed >= 0 ? sv->ranks[sv->failed].rank : -1,
            sv->signal_received);
    json_string(f, j->alloc.source);
    fputs(",\"ranks\":[", f);
    for (int i = 0; i < sv->n; i++) {
        if (i)
            fputc(',', f);
        write_rank(f, j, &sv->ranks[i]);
    }
    fputs("]}\n", f);
    if (fclose(f) != 0)
        return cmd_fail(-1, "--summary %s: %s", j->opt.summary, strerror(errno));
    return 0;
}

/* Node i's "RANK PID STATUS START END" lines into the ranks' slots. */
static void read_node(struct client *c, int node, struct sv_rank *ranks,
                      int n)
{
    struct err err = { "" };
    char key[64], *line, *save = NULL;
    void *val = NULL;
    size_t len = 0;

    snprintf(key, sizeof key, "dlrun.ranks.%d", node);
    if (client_get(c, key, 0, &val, &len, &err) != CLIENT_OK)
        return;
    for (line = strtok_r(val, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        struct sv_rank r = { 0 };
        if (sscanf(line, "%d %d %d %lf %lf", &r.rank, &r.pid, &r.status,
                   &r.start, &r.end) == 5 && r.rank >= 0 && r.rank < n)
            ranks[r.rank] = r;
    }
    free(val);
}

int head_summary(const struct job *j, const char *addr, const char *token,
                 int failed_rank, int signal_received, int rc)
{
    const struct plan *p = &j->plan;
    struct err err = { "" };
    struct sv_rank *ranks = calloc((size_t)p->nranks, sizeof *ranks);
    struct supervise sv = { .ranks = ranks, .n = p->nranks,
                            .failed = failed_rank,
                            .signal_received = signal_received };
    struct client *c = client_connect(addr, token, 2000, &err);
    int out;

    if (!ranks || !c) {
        free(ranks);
        client_close(c);
        return cmd_fail(-1, "--summary %s: %s", j->opt.summary,
                        err.msg[0] ? err.msg : "out of memory");
    }
    /* a rank whose agent was lost did not report: shown killed */
    for (int r = 0; r < p->nranks; r++)
        ranks[r] = (struct sv_rank){ .rank = r, .status = SIGKILL };
    for (int i = 0; i < p->nnodes; i++)
        read_node(c, i, ranks, p->nranks);
    out = summary_write(j, &sv, rc);
    client_close(c);
    free(ranks);
    return out;
}
