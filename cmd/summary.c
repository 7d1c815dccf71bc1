/* summary.c - `--summary FILE`: what happened to every rank, as JSON, for
 * scripts and job post-mortems. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

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
