/* status_cmd.c - `dlrun status [--json]`: the running jobs of this user
 * (lib/observe/jobscan.h reads them) as a table or one JSON object. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "observe/jobscan.h"
#include "util/clock.h"
#include "util/json.h"
#include "util/optparse.h"
#include "util/safefile.h"

static void fmt_rss(long long kb, char *out, size_t len)
{
    if (kb < 0)
        snprintf(out, len, "-");
    else if (kb >= 1024 * 1024)
        snprintf(out, len, "%.1f GiB", kb / 1048576.0);
    else
        snprintf(out, len, "%lld MiB", kb / 1024);
}

/* The GPU columns of r ("" when the job shows none), into out. */
static void fmt_gpu(const struct js_rank *r, int gpu, char *out, size_t len)
{
    char mem[32];

    fmt_rss(r->has_gpu ? r->gpu_mem_kb : -1, mem, sizeof mem);
    if (!gpu)
        out[0] = '\0';
    else if (r->has_gpu)
        snprintf(out, len, " %5.1f %-10s", r->gpu_pct, mem);
    else
        snprintf(out, len, " %5s %-10s", "-", "-");
}

/* The step rates, slowest first, when the ranks report their steps. */
static void print_steps(const struct js_job *jb)
{
    if (jb->nsteps == 0)
        return;
    printf("  step rates per %s (dlrun_progress), slowest first; median "
           "%.1f steps/s:\n", jb->step_unit, jb->step_median);
    printf("  %-16s %8s %9s  %s\n", "HOST", "STEPS/S", "VS MEDIAN", "RANKS");
    for (int i = 0; i < jb->nsteps; i++) {
        const struct js_steps *s = &jb->steps[i];
        char ratio[32];
        snprintf(ratio, sizeof ratio, s->ratio > 0 ? "%.2fx" : "-", s->ratio);
        printf("  %-16s %8.2f %9s  %s\n", s->host, s->rate, ratio, s->ranks);
    }
}

/* --spares: the spares held and taken, each node excluded and why. */
static void print_spares(const struct js_job *jb, double now)
{
    int held = jb->spares_held[0] != '\0', taken = 0;

    if (!jb->spares)
        return;
    for (const char *c = jb->spares_held; *c; c++)
        held += *c == ',';
    for (int i = 0; i < jb->nexcl; i++)
        taken += jb->excl[i].spare[0] != '\0';
    printf("  spares: %d held%s%s%s, %d taken", held, held ? " (" : "",
           jb->spares_held, held ? ")" : "", taken);
    for (int i = 0, k = 0; i < jb->nexcl; i++)
        if (jb->excl[i].spare[0])
            printf("%s%s", k++ ? "," : " (", jb->excl[i].spare);
    printf("%s\n", taken ? ")" : "");
    for (int i = 0; i < jb->nexcl; i++) {
        const struct js_excluded *e = &jb->excl[i];
        printf("  excluded %s (attempt %d, %.0f s ago): %s", e->host,
               e->attempt, now - e->time, e->reason);
        if (e->spare[0])
            printf("; %s in its place", e->spare);
        printf("\n");
    }
}

static void print_job(const struct js_job *jb, double now)
{
    int gpu = 0;    /* the GPU columns when NVML read some rank's GPUs */

    for (int i = 0; i < jb->n; i++)
        gpu |= jb->r[i].has_gpu;
    printf("job %d: %d rank%s on %d node%s, up %.0f s, restarts %d: %s\n",
           jb->pid, jb->ranks, jb->ranks == 1 ? "" : "s", jb->nodes,
           jb->nodes == 1 ? "" : "s", now - jb->started, jb->restarts,
           jb->cmd);
    if (jb->note[0])
        printf("  (%s)\n", jb->note);
    print_spares(jb, now);
    printf("  %-5s %-16s %-8s %-5s %6s %-10s%s %-8s %s\n", "RANK", "HOST",
           "PID", "STATE", "CPU%", "RSS", gpu ? "  GPU% GPU MEM   " : "",
           "RESTARTS", "LAST OUTPUT");
    for (int i = 0; i < jb->n; i++) {
        const struct js_rank *r = &jb->r[i];
        char rss[32], cpu[16], age[32], g[48];
        fmt_rss(r->rss_kb, rss, sizeof rss);
        fmt_gpu(r, gpu, g, sizeof g);
        snprintf(cpu, sizeof cpu, r->cpu_pct < 0 ? "-" : "%.1f", r->cpu_pct);
        snprintf(age, sizeof age, r->out_age_s < 0 ? "none yet" :
                 "%.0f s ago", r->out_age_s);
        printf("  %-5d %-16s %-8d %-5c %6s %-10s%s %-8d %s\n", r->rank,
               r->host, r->pid, r->state == 'X' ? '-' : r->state, cpu, rss,
               g, r->restarts, r->state == 'X' ? "ended" : age);
    }
    print_steps(jb);
}

static void json_steps(const struct js_job *jb)
{
    printf(",\"step_rates\":{\"per\":");
    json_string(stdout, jb->step_unit);
    printf(",\"median\":%.3f,\"slowest_first\":[", jb->step_median);
    for (int i = 0; i < jb->nsteps; i++) {
        const struct js_steps *s = &jb->steps[i];
        printf("%s{\"host\":", i ? "," : "");
        json_string(stdout, s->host);
        printf(",\"ranks\":");
        json_string(stdout, s->ranks);
        printf(",\"steps_per_s\":%.3f,\"median_ratio\":%.3f}", s->rate,
               s->ratio);
    }
    printf("]}");
}

/* A comma list ("n5,n6") as a JSON array of strings. */
static void json_list(const char *list)
{
    char item[600];

    printf("[");
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        snprintf(item, sizeof item, "%.*s", (int)n, p);
        printf("%s", p == list ? "" : ",");
        json_string(stdout, item);
        p += n + (p[n] == ',');
    }
    printf("]");
}

static void json_spares(const struct js_job *jb)
{
    printf(",\"spares\":{\"held\":");
    json_list(jb->spares_held);
    printf(",\"taken\":[");
    for (int i = 0, k = 0; i < jb->nexcl; i++)
        if (jb->excl[i].spare[0]) {
            printf("%s", k++ ? "," : "");
            json_string(stdout, jb->excl[i].spare);
        }
    printf("]},\"excluded_nodes\":[");
    for (int i = 0; i < jb->nexcl; i++) {
        const struct js_excluded *e = &jb->excl[i];
        printf("%s{\"host\":", i ? "," : "");
        json_string(stdout, e->host);
        printf(",\"reason\":");
        json_string(stdout, e->reason);
        printf(",\"attempt\":%d,\"time\":%.3f,\"spare\":", e->attempt,
               e->time);
        if (e->spare[0])
            json_string(stdout, e->spare);
        else
            printf("null");
        printf("}");
    }
    printf("]");
}

static void json_job(const struct js_job *jb, double now, int first)
{
    printf("%s{\"pid\":%d,\"command\":", first ? "{\"jobs\":[" : ",",
           jb->pid);
    json_string(stdout, jb->cmd);
    printf(",\"nodes\":%d,\"world_size\":%d,\"restarts\":%d,\"uptime_s\":%.1f,"
           "\"note\":", jb->nodes, jb->ranks, jb->restarts, now - jb->started);
    json_string(stdout, jb->note);
    printf(",\"ranks\":[");
    for (int i = 0; i < jb->n; i++) {
        const struct js_rank *r = &jb->r[i];
        printf("%s{\"rank\":%d,\"host\":", i ? "," : "", r->rank);
        json_string(stdout, r->host);
        printf(",\"pid\":%d,\"state\":\"%c\",\"cpu_percent\":%.1f,"
               "\"rss_kb\":%lld,\"restarts\":%d,\"last_output_age_s\":%.1f",
               r->pid, r->state, r->cpu_pct, r->rss_kb, r->restarts,
               r->out_age_s);
        if (r->has_gpu)     /* only where NVML read the rank's GPUs */
            printf(",\"gpu_percent\":%.1f,\"gpu_mem_kb\":%lld",
                   r->gpu_pct, r->gpu_mem_kb);
        printf("}");
    }
    printf("]");
    if (jb->nsteps)     /* only where the ranks report their steps */
        json_steps(jb);
    if (jb->spares)     /* only a job with --spares */
        json_spares(jb);
    printf("}");
}

static const struct optp_opt status_opts[] = {
    { "json", 'j', 0, 0, 0, NULL },
    { "h", 'h', 0, 0, 0, NULL },
    { "help", 'h', 0, 0, 0, NULL },
    { NULL, 0, 0, 0, 0, NULL },
};

static int status_option(void *ctx, const struct optp_hit *h)
{
    if (h->opt->code == 'j')
        return *(int *)ctx = 1, 0;
    printf("usage: dlrun status [--json]\nThe running dlrun jobs of this user "
           "started on this host: per rank its host, pid, state, CPU %%, RSS, "
           "GPU %% and GPU memory (where NVML is), restarts and the age of "
           "its last output line; where the ranks call dlrun_progress() "
           "each step, the step rates per node (per rank on one node), "
           "slowest first.\n");
    return 1;
}

/* How the jobs are shown: a table, or one JSON object. */
struct shown {
    int json;
    double now;     /* wall-clock seconds */
    int n;          /* jobs shown so far */
};

static void show_job(void *ctx, const struct js_job *jb)
{
    struct shown *sh = ctx;

    if (sh->json)
        json_job(jb, sh->now, sh->n == 0);
    else
        print_job(jb, sh->now);
    sh->n++;
}

int cmd_status(int argc, char **argv)
{
    static const struct optp p = { status_opts, "status", 0, 0, NULL };
    struct err err = { "" };
    struct shown sh = { 0, clock_wall(), 0 };
    char dir[4096];
    int first = argc, njobs = 0;
    int rc = optp_parse(&p, argc, argv, &first, status_option, &sh.json);

    if (rc != 0)
        return rc == 1 ? EXIT_OK : rc;
    if (first < argc)
        return cmd_fail(EXIT_USAGE, "status: unexpected argument '%s' "
                        "(usage: dlrun status [--json])", argv[first]);
    if (safefile_rundir(dir, sizeof dir, &err) < 0)
        return cmd_fail(EXIT_USAGE, "status: %s", err.msg);
    if (jobscan_each(dir, show_job, &sh, &njobs, &err) < 0)
        return cmd_fail(EXIT_FAIL, "status: %s", err.msg);
    if (sh.json)
        printf("%s]}\n", njobs ? "" : "{\"jobs\":[");
    else if (njobs == 0)
        printf("no running dlrun jobs of yours on this host\n");
    return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAIL;
}
