/* jobscan.c - the running jobs of this user (jobscan.h). */
#include "observe/jobscan.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rendezvous/client.h"
#include "util/readall.h"

/* A step-rate line ("stepmedian", "steps") into jb; 1 when it was one. */
static int steps_line(const char *line, struct js_job *jb)
{
    struct js_steps *s = &jb->steps[jb->nsteps < JS_MAX_STEPS ? jb->nsteps
                                    : JS_MAX_STEPS - 1];

    if (sscanf(line, "stepmedian %lf %7s", &jb->step_median,
               jb->step_unit) == 2)
        return 1;
    if (strncmp(line, "steps ", 6) != 0)
        return 0;
    if (sscanf(line, "steps %63s %lf %lf %199s", s->host, &s->rate,
               &s->ratio, s->ranks) == 4 && jb->nsteps < JS_MAX_STEPS)
        jb->nsteps++;
    return 1;
}

/* A --spares line ("spares", "excluded") into jb; 1 when it was one. */
static int spares_line(const char *line, struct js_job *jb)
{
    struct js_excluded *e = &jb->excl[jb->nexcl < JS_MAX_EXCLUDED ? jb->nexcl
                                      : JS_MAX_EXCLUDED - 1];
    int at = 0;

    if (sscanf(line, "spares %599s", jb->spares_held) == 1) {
        jb->spares = 1;
        if (strcmp(jb->spares_held, "-") == 0)
            jb->spares_held[0] = '\0';
        return 1;
    }
    if (strncmp(line, "excluded ", 9) != 0)
        return 0;
    if (sscanf(line, "excluded %d %lf %255s %255s %n", &e->attempt, &e->time,
               e->host, e->spare, &at) == 4 && at > 0 &&
        jb->nexcl < JS_MAX_EXCLUDED) {
        snprintf(e->reason, sizeof e->reason, "%s", line + at);
        if (strcmp(e->spare, "-") == 0)
            e->spare[0] = '\0';
        jb->nexcl++;
    }
    return 1;
}

size_t jobscan_header(const char *text, size_t len, struct js_job *jb)
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
            !steps_line(line, jb) && !spares_line(line, jb) &&
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
    int room = JS_MAX_SHOWN - jb->n, got = 0;

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
    body = jobscan_header(text, len, jb);
    if (jb->pid <= 0 || (kill(jb->pid, 0) < 0 && errno == ESRCH)) {
        unlink(path);   /* a dlrun that was killed left it */
        free(text);
        return -1;
    }
    jb->r = calloc(JS_MAX_SHOWN, sizeof *jb->r);
    if (jb->r && jb->broker[0])
        read_broker(jb);
    else if (jb->r)
        add_ranks(jb, text + body, len - body, name);
    free(text);
    return jb->r ? 0 : -1;
}

int jobscan_each(const char *dir, js_job_fn fn, void *ctx, int *njobs,
                 struct err *err)
{
    struct dirent *e;
    DIR *d = opendir(dir);

    *njobs = 0;
    if (!d) {
        err_set(err, "cannot read %s", dir);
        return -1;
    }
    while ((e = readdir(d))) {
        struct js_job jb = { 0 };
        if (strncmp(e->d_name, "job-", 4) != 0 ||
            read_job(dir, e->d_name, &jb) < 0)
            continue;
        fn(ctx, &jb);
        (*njobs)++;
        free(jb.r);
    }
    closedir(d);
    return 0;
}
