/* status.c - what a running job keeps for `dlrun status`: a one-node
 * dlrun writes its ranks' lines into DIR/job-PID (lib/observe/jobstatus.h) once a
 * second, an agent puts its node's into the broker (dlrun.st.NODE), and a
 * head writes DIR/job-PID naming its broker.  Everything runs in the
 * supervisor's thread (its periodic hook and the output tap): no locks. */
#include "job/status.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "job/steprate.h"
#include "observe/jobstatus.h"
#include "observe/nvmlstat.h"
#include "observe/procstat.h"
#include "place/nodeset.h"
#include "rendezvous/client.h"
#include "run/output.h"
#include "run/supervise.h"
#include "util/clock.h"
#include "util/safefile.h"
#include "util/strv.h"

#define STATUS_EVERY_MS 1000
#define STATUS_FIRST_MS 300
#define STATUS_HEAD_MS 1000     /* an agent's connect and answer wait for one status */

struct status_watch {
    const struct job *j;
    int n;
    int *ranks;                     /* owned copy: plan rank of index i */
    long *out_ms;                   /* last output line, -1 none */
    unsigned long long *ticks;      /* CPU at the last sample */
    long *at_ms;
    struct supervise *sv;
    struct sv_hook inner;       /* the hook ours displaced */
    void (*tap)(void *ctx, int rank, int which, const char *p, size_t len);
    void *tap_ctx;
    long next_ms;
    char dir[4096];                 /* one-node dlrun: the file's folder */
    char name[64];
    struct client *c;               /* agent: the broker */
    int off;                        /* no runtime folder: nothing kept */
    struct nvs *nvml;               /* NULL: no NVML, no GPU column */
    int nvml_tried;
    double started;
    const struct broker *b;         /* one-node dlrun: its ranks' broker */
    struct steprate *sr;            /* the step rates there, or NULL */
};

/* The head's file, "" when none, and its header: the broker thread
 * rewrites it with the step rates while the main thread may end it. */
static pthread_mutex_t head_mu = PTHREAD_MUTEX_INITIALIZER;
static char head_file[4200];
static char *head_text;

/* This process's command line, one line (for the header). */
static void own_cmdline(char *buf, size_t len)
{
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, len - 1) : -1;

    if (fd >= 0)
        close(fd);
    if (n <= 0)
        n = snprintf(buf, len, "dlrun");
    buf[n] = '\0';
    for (ssize_t i = 0; i < n; i++)
        if (buf[i] == '\0' || (unsigned char)buf[i] < 0x20)
            buf[i] = ' ';
}

/* The header every job file starts with. */
static void put_header(FILE *m, const struct job *j, double started)
{
    char cmdline[1024];

    own_cmdline(cmdline, sizeof cmdline);
    fprintf(m, "dlrun-status 1\npid %d\nstarted %.3f\nnodes %d\nranks %d\n"
            "restarts %d\ncmd %s\n", (int)getpid(), started, j->plan.nnodes,
            j->plan.nranks, j->restart, cmdline);
}

/* --spares: the spares held ("spares HOST,HOST" or "spares -") and each
 * node excluded ("excluded ATTEMPT TIME HOST SPARE REASON", SPARE "-"
 * when none took its place), after the head's header. */
static void put_spares(FILE *m, const struct nodeset *ns)
{
    if (!ns)
        return;
    fputs("spares", m);
    for (size_t i = 0; i < ns->nspare; i++)
        fprintf(m, "%c%s", i ? ',' : ' ', ns->a->nodes[ns->nactive + i].name);
    fputs(ns->nspare ? "\n" : " -\n", m);
    for (size_t i = 0; i < ns->nexcl; i++) {
        const struct ns_excluded *e = &ns->excl[i];
        fprintf(m, "excluded %d %.3f %s %s %s\n", e->attempt, e->time,
                e->host, e->spare[0] ? e->spare : "-", e->reason);
    }
}

struct status_watch *job_status_create(const struct job *j, const int *ranks,
                                       int n)
{
    struct status_watch *w = calloc(1, sizeof *w);

    if (!w || j->plan.per_task || j->preflight || n <= 0)
        goto fail;
    w->j = j;
    w->n = n;
    w->ranks = malloc((size_t)n * sizeof *w->ranks);
    w->out_ms = malloc((size_t)n * sizeof *w->out_ms);
    w->ticks = calloc((size_t)n, sizeof *w->ticks);
    w->at_ms = calloc((size_t)n, sizeof *w->at_ms);
    if (!w->ranks || !w->out_ms || !w->ticks || !w->at_ms)
        goto fail;
    memcpy(w->ranks, ranks, (size_t)n * sizeof *ranks);
    for (int i = 0; i < n; i++)
        w->out_ms[i] = -1;
    w->started = clock_wall();
    return w;   /* the folder or the broker at the first sample */
fail:
    job_status_free(w);
    return NULL;
}

static void tap(void *ctx, int rank, int which, const char *p, size_t len)
{
    struct status_watch *w = ctx;

    for (int i = 0; i < w->n; i++)
        if (w->ranks[i] == rank && memchr(p, '\n', len))
            w->out_ms[i] = clock_ms();
    if (w->tap)
        w->tap(w->tap_ctx, rank, which, p, len);
}

void job_status_output(struct status_watch *w, struct output_opts *oo)
{
    if (!w)
        return;
    w->tap = oo->tap;
    w->tap_ctx = oo->tap_ctx;
    oo->tap = tap;
    oo->tap_ctx = w;
}

/* The GPU use of the GPUs pid sees (its CUDA_VISIBLE_DEVICES) into r. */
static void gpu_sample(struct nvs *nvml, pid_t pid, struct js_rank *r)
{
    char cvd[512];
    int set = nvs_proc_visible(pid, cvd, sizeof cvd);

    if (set >= 0 && nvs_sample(nvml, set ? cvd : NULL, &r->gpu_pct,
                               &r->gpu_mem_kb) == 0)
        r->has_gpu = 1;
}

/* The CPU ticks of every rank's process group (each rank leads its own),
 * in one pass over /proc: caller frees; NULL when it could not (each
 * sample then reads them itself). */
static unsigned long long *groups_cpu(const struct supervise *sv)
{
    pid_t *pg = calloc((size_t)sv->n + 1, sizeof *pg);
    unsigned long long *ticks = calloc((size_t)sv->n + 1, sizeof *ticks);

    for (int k = 0; pg && k < sv->n; k++)
        pg[k] = sv->ranks[k].running ? sv->ranks[k].pid : 0;
    if (!pg || !ticks || procstat_groups_cpu(pg, sv->n, ticks, NULL) < 0) {
        free(ticks);
        ticks = NULL;
    }
    free(pg);
    return ticks;
}

/* Rank lines of every rank this process started, into m. */
static void put_ranks(struct status_watch *w, FILE *m, long now)
{
    const struct plan *p = &w->j->plan;
    unsigned long long *group = groups_cpu(w->sv);

    for (int k = 0; k < w->sv->n; k++) {
        const struct sv_rank *s = &w->sv->ranks[k];
        struct js_rank r = { .rank = s->rank, .pid = (int)s->pid,
                             .state = 'X', .cpu_pct = -1, .rss_kb = -1,
                             .restarts = w->j->restart, .out_age_s = -1 };
        int i = 0;
        while (i < w->n && w->ranks[i] != s->rank)
            i++;
        if (s->rank < 0 || i == w->n)
            continue;   /* an agent of a subtree */
        snprintf(r.host, JS_HOST, "%s", p->nodes[p->rank_node[s->rank]].host);
        if (s->running)
            js_sample(s->pid, group ? &group[k] : NULL, &w->ticks[i],
                      &w->at_ms[i], &r);
        if (s->running && w->nvml)
            gpu_sample(w->nvml, s->pid, &r);
        if (w->out_ms[i] >= 0)
            r.out_age_s = (now - w->out_ms[i]) / 1000.0;
        js_put_rank(m, &r);
    }
    free(group);
}

static void publish(struct status_watch *w, long now)
{
    struct err err = { "" };
    struct membuf b;
    char *text, key[64];
    size_t len;
    FILE *m = membuf_open(&b);

    if (!m)
        return;
    if (!w->nvml_tried)     /* at the first sample: not on the launch path */
        w->nvml = nvs_open();
    w->nvml_tried = 1;
    if (!w->j->agent && !w->name[0]) {
        if (w->off || safefile_rundir(w->dir, sizeof w->dir, &err) < 0) {
            w->off = 1;     /* no folder of ours: the job runs without */
            free(membuf_close(&b));
            return;
        }
        snprintf(w->name, sizeof w->name, "job-%d", (int)getpid());
    }
    if (!w->j->agent)
        put_header(m, w->j, w->started);
    steprate_put(w->sr, m);
    put_ranks(w, m, now);
    if (!(text = membuf_close(&b)))
        return;
    len = b.len;
    if (!w->j->agent) {
        js_write(w->dir, w->name, text, len, &err);
    } else {
        /* This runs in the supervisor's loop, which also forwards the
         * signals that end the ranks: a head that stopped answering
         * (its link cut, the head stopped) must not hold that loop for
         * the broker's usual answer grace.  A status lost is only one
         * second's sample. */
        if (!w->c && (w->c = client_from_env(STATUS_HEAD_MS, &err)))
            client_set_answer_grace(w->c, STATUS_HEAD_MS);
        snprintf(key, sizeof key, "dlrun.st.%d", w->j->plan.self_node);
        if (w->c && client_put(w->c, key, text, len, &err) != CLIENT_OK) {
            client_close(w->c);     /* connects again next time */
            w->c = NULL;
        }
    }
    free(text);
}

static int status_tick(void *ctx, int readable)
{
    struct status_watch *w = ctx;
    int inner = supervise_hook_call(&w->inner, readable);
    long now = clock_ms();

    if (now >= w->next_ms) {
        for (int k = 0; w->sr && k < w->sv->n; k++)
            if (!w->sv->ranks[k].running)
                steprate_ended(w->sr, w->sv->ranks[k].rank);
        steprate_tick(w->sr, w->b);
        publish(w, now);
        w->next_ms = now + STATUS_EVERY_MS;
    }
    return supervise_sooner(inner, w->next_ms - now);
}

void job_status_watch(struct status_watch *w, struct supervise *sv,
                      const struct broker *b)
{
    if (!w)
        return;
    w->sv = sv;
    w->b = b;
    if (b && !w->j->agent && !w->sr)
        w->sr = steprate_create(&w->j->plan, w->j->opt.straggler_factor);
    supervise_hook(sv, status_tick, w, &w->inner);
    /* the first sample a little later: a job of a few milliseconds
     * (a benchmark's) costs no file */
    w->next_ms = clock_ms() + STATUS_FIRST_MS;
}

void job_status_free(struct status_watch *w)
{
    char path[4200];

    if (!w)
        return;
    if (w->name[0]) {
        snprintf(path, sizeof path, "%s/%s", w->dir, w->name);
        unlink(path);
    }
    client_close(w->c);
    nvs_close(w->nvml);
    steprate_free(w->sr);
    free(w->ranks);
    free(w->out_ms);
    free(w->ticks);
    free(w->at_ms);
    free(w);
}

void status_head_begin(const struct job *j, const char *addr,
                       const char *token)
{
    struct err err = { "" };
    char dir[4096], name[64], *text;
    struct membuf b;
    FILE *m;

    if (j->preflight || safefile_rundir(dir, sizeof dir, &err) < 0 ||
        !(m = membuf_open(&b)))
        return;
    put_header(m, j, clock_wall());
    put_spares(m, j->nodeset);
    fprintf(m, "broker %s\ntoken %s\n", addr, token);
    snprintf(name, sizeof name, "job-%d", (int)getpid());
    text = membuf_close(&b);
    pthread_mutex_lock(&head_mu);
    if (text && js_write(dir, name, text, b.len, &err) == 0) {
        snprintf(head_file, sizeof head_file, "%s/%s", dir, name);
        free(head_text);
        head_text = text;   /* kept for status_head_steps */
        text = NULL;
    }
    pthread_mutex_unlock(&head_mu);
    free(text);
}

void status_head_steps(const struct steprate *sr)
{
    struct err err = { "" };
    char dir[4200], *slash, *text;
    struct membuf b;
    FILE *m;

    pthread_mutex_lock(&head_mu);
    if (head_file[0] && head_text && (m = membuf_open(&b))) {
        fputs(head_text, m);
        steprate_put(sr, m);
        snprintf(dir, sizeof dir, "%s", head_file);
        slash = strrchr(dir, '/');
        if ((text = membuf_close(&b)) && slash) {
            *slash = '\0';
            js_write(dir, slash + 1, text, b.len, &err);
        }
        free(text);
    }
    pthread_mutex_unlock(&head_mu);
}

void status_head_end(void)
{
    pthread_mutex_lock(&head_mu);
    if (head_file[0])
        unlink(head_file);
    head_file[0] = '\0';
    free(head_text);
    head_text = NULL;
    pthread_mutex_unlock(&head_mu);
}
