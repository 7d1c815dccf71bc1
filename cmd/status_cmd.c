/* status_cmd.c - `dlrun status [--json]`: the running jobs of this user,
 * from the files in the user's runtime folder (lib/observe/jobstatus.h); a
 * multi-node job's ranks from its broker, where its agents put them. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rendezvous/client.h"
#include "cmd.h"
#include "observe/jobstatus.h"
#include "util/json.h"
#include "util/optparse.h"
#include "util/readall.h"
#include "util/safefile.h"

#define MAX_SHOWN 4096      /* ranks shown per job at most */

struct js_job {
    int pid, nodes, ranks, restarts;
    double started;
    char cmd[1024], broker[300], token[80];
    struct js_rank *r;      /* owned, n of them */
    int n;
    char note[600];         /* what could not be read, "" when all */
};

/* "key value" header lines; what follows them are rank lines. */
static size_t parse_header(const char *text, size_t len, struct js_job *jb)
{
    size_t i = 0;

    while (i < len) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t k = nl ? (size_t)(nl - text - i) : len - i;
        char line[1400];
        snprintf(line, sizeof line, "%.*s", (int)(k < sizeof line - 1 ? k :
                 sizeof line - 1), text + i);
        if (sscanf(line, "pid %d", &jb->pid) != 1 &&
            sscanf(line, "started %lf", &jb->started) != 1 &&
            sscanf(line, "nodes %d", &jb->nodes) != 1 &&
            sscanf(line, "ranks %d", &jb->ranks) != 1 &&
            sscanf(line, "restarts %d", &jb->restarts) != 1 &&
            sscanf(line, "broker %299s", jb->broker) != 1 &&
            sscanf(line, "token %79s", jb->token) != 1 &&
            strncmp(line, "dlrun-status ", 13) != 0) {
            if (strncmp(line, "cmd ", 4) != 0)
                break;      /* the first rank line */
            snprintf(jb->cmd, sizeof jb->cmd, "%.1000s", line + 4);
        }
        i += k + 1;
    }
    return i < len ? i : len;
}

/* Append the rank lines of text to jb->r. */
static void add_ranks(struct js_job *jb, const char *text, size_t len,
                      const char *from)
{
    struct err err = { "" };
    int room = MAX_SHOWN - jb->n, got = 0;

    if (room <= 0)
        return;
    if (js_parse_ranks(text, len, jb->r + jb->n, room, &got, &err) < 0)
        snprintf(jb->note, sizeof jb->note, "%s: %s", from, err.msg);
    else
        jb->n += got;
}

/* A head's job: each node's lines from the broker. */
static void read_broker(struct js_job *jb)
{
    struct err err = { "" };
    struct client *c = client_connect(jb->broker, jb->token, 3000, &err);
    int missing = 0;

    for (int i = 0; c && i < jb->nodes; i++) {
        char key[64], from[80];
        void *v = NULL;
        size_t len = 0;
        snprintf(key, sizeof key, "dlrun.st.%d", i);
        snprintf(from, sizeof from, "node %d", i);
        if (client_get(c, key, 0, &v, &len, &err) == CLIENT_OK)
            add_ranks(jb, v, len, from);
        else
            missing++;
        free(v);
    }
    if (!c)
        snprintf(jb->note, sizeof jb->note, "cannot reach its broker: %s",
                 err.msg);
    else if (missing)
        snprintf(jb->note, sizeof jb->note, "%d of %d nodes have not "
                 "reported yet (agents starting)", missing, jb->nodes);
    client_close(c);
}

/* One job file; 0, or -1 when it is not a running job's (then removed
 * when its dlrun is gone). */
static int read_job(const char *dir, const char *name, struct js_job *jb)
{
    char path[4400];
    char *text = NULL;
    size_t len = 0, body;

    FILE *f;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "re");
    text = f ? read_all(f, 1 << 24, &len) : NULL;
    if (f)
        fclose(f);
    if (!text)
        return -1;
    body = parse_header(text, len, jb);
    if (jb->pid <= 0 || (kill(jb->pid, 0) < 0 && errno == ESRCH)) {
        unlink(path);   /* a dlrun that was killed left it */
        free(text);
        return -1;
    }
    jb->r = calloc(MAX_SHOWN, sizeof *jb->r);
    if (jb->r && jb->broker[0])
        read_broker(jb);
    else if (jb->r)
        add_ranks(jb, text + body, len - body, name);
    free(text);
    return jb->r ? 0 : -1;
}

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
}

static void json_job(const struct js_job *jb, double now, int first)
{
    printf("%s{\"pid\":%d,\"command\":", first ? "" : ",", jb->pid);
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
    printf("]}");
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
           "its last output line.\n");
    return 1;
}

int cmd_status(int argc, char **argv)
{
    static const struct optp p = { status_opts, "status", 0, 0 };
    struct err err = { "" };
    char dir[4096];
    struct dirent *e;
    DIR *d;
    int json = 0, njobs = 0, first = argc;
    int rc = optp_parse(&p, argc, argv, &first, status_option, &json);
    struct timespec ts;

    if (rc != 0)
        return rc == 1 ? EXIT_OK : rc;
    if (first < argc)
        return cmd_fail(EXIT_USAGE, "status: unexpected argument '%s' "
                        "(usage: dlrun status [--json])", argv[first]);
    if (safefile_rundir(dir, sizeof dir, &err) < 0)
        return cmd_fail(EXIT_USAGE, "status: %s", err.msg);
    if (!(d = opendir(dir)))
        return cmd_fail(EXIT_FAIL, "status: cannot read %s", dir);
    clock_gettime(CLOCK_REALTIME, &ts);
    if (json)
        printf("{\"jobs\":[");
    while ((e = readdir(d))) {
        struct js_job jb = { 0 };
        if (strncmp(e->d_name, "job-", 4) != 0 ||
            read_job(dir, e->d_name, &jb) < 0)
            continue;
        if (json)
            json_job(&jb, ts.tv_sec + ts.tv_nsec / 1e9, njobs == 0);
        else
            print_job(&jb, ts.tv_sec + ts.tv_nsec / 1e9);
        njobs++;
        free(jb.r);
    }
    closedir(d);
    if (json)
        printf("]}\n");
    else if (njobs == 0)
        printf("no running dlrun jobs of yours on this host\n");
    return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAIL;
}
