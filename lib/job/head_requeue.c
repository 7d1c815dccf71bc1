/* head_requeue.c - see head_requeue.h. */
#include "job/head_requeue.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "place/nodeset.h"
#include "run/proc.h"
#include "util/clock.h"
#include "util/say.h"
#include "where/sched.h"

#define REQUEUE_WORDS 16
#define REQUEUE_TRIES 5
#define REQUEUE_WAIT_MS 200
#define REQUEUE_CMD_MS 20000

/* tmpl with "{id}" and "{nodes}" replaced, into out (n bytes). */
static void expand(const char *tmpl, const struct head_requeue *rq, char *out,
                   size_t n)
{
    size_t k = 0;

    while (*tmpl && k + 1 < n) {
        const char *v = strncmp(tmpl, "{id}", 4) == 0 ? rq->id :
                        strncmp(tmpl, "{nodes}", 7) == 0 ? rq->nodes : NULL;
        if (!v) {
            out[k++] = *tmpl++;
            continue;
        }
        tmpl += v == rq->id ? 4 : 7;
        k += (size_t)snprintf(out + k, n - k, "%s", v);
        if (k >= n)
            k = n - 1;
    }
    out[k] = '\0';
}

/* Run the command cmd (a row's template) for rq; what it prints (stdout
 * and stderr) into out, its words into line.  Returns its code (0 ok). */
static int run(const char *const *cmd, const struct head_requeue *rq,
               char *out, size_t len, char *line, size_t llen)
{
    char words[REQUEUE_WORDS][4200], *argv[REQUEUE_WORDS + 1];
    struct err err = { "" };
    size_t n = 0, at = 0;
    int rc;

    line[0] = '\0';
    for (; cmd[n] && n < REQUEUE_WORDS; n++) {
        expand(cmd[n], rq, words[n], sizeof words[n]);
        argv[n] = words[n];
        if (at < llen)
            at += (size_t)snprintf(line + at, llen - at, "%s%s", n ? " " : "",
                                   words[n]);
    }
    argv[n] = NULL;
    rc = proc_capture(argv, 0, 1, REQUEUE_CMD_MS, out, len, &err);
    if (rc < 0)
        snprintf(out, len, "%s", err.msg);
    out[strcspn(out, "\n")] = '\0';     /* its first line, for ours */
    return rc;
}

/* Is w one of the blank-separated words of text? */
static int has_word(const char *text, const char *w)
{
    size_t n = strlen(w);

    for (const char *p = text; (p = strstr(p, w)); p += n)
        if ((p == text || p[-1] == ' ') && (!p[n] || strchr(" \n", p[n])))
            return 1;
    return 0;
}

/* The value of text's word that starts with key, into out ("" none). */
static void word_value(const char *text, const char *key, char *out, size_t n)
{
    const char *p = text;
    size_t k = strlen(key);

    out[0] = '\0';
    while ((p = strstr(p, key)) && p != text && p[-1] != ' ')
        p += k;
    if (p)
        snprintf(out, n, "%.*s", (int)strcspn(p + k, " \n"), p + k);
}

/* Can the job go on after a node fault: a spare to take the node's
 * place, or --nnodes MIN:MAX above MIN (it shrinks)? */
static int node_left(const struct nodeset *ns)
{
    return ns->nspare > 0 || (ns->min_nodes && !nodeset_exhausted(ns));
}

int head_requeue_check(const struct job *j, const struct head_fault *f,
                       struct head_requeue *rq)
{
    const struct sched *s = j->alloc.sched;
    const char *id = s && s->job_show ? getenv(s->job_var) : NULL;
    char out[16384], line[600], before[2048];

    memset(rq, 0, sizeof *rq);
    if (!j->nodeset || node_left(j->nodeset) || f->node < 0 ||
        f->node >= j->plan.nnodes || !id || !*id || strlen(id) >= sizeof rq->id)
        return 0;
    snprintf(rq->id, sizeof rq->id, "%s", id);
    if (run(s->job_show, rq, out, sizeof out, line, sizeof line) != 0)
        return 0;
    for (const char *const *w = s->requeueable; *w; w++)
        if (!has_word(out, *w))
            return 0;
    word_value(out, s->excluded_key, before, sizeof before);
    if (strcmp(before, s->excluded_none) == 0)
        before[0] = '\0';
    snprintf(rq->host, sizeof rq->host, "%s", j->plan.nodes[f->node].host);
    snprintf(rq->reason, sizeof rq->reason, "%s", f->reason);
    nodeset_excluded_list(j->nodeset, rq->bad, sizeof rq->bad);
    snprintf(rq->bad + strlen(rq->bad), sizeof rq->bad - strlen(rq->bad),
             "%s%s", rq->bad[0] ? "," : "", rq->host);
    snprintf(rq->nodes, sizeof rq->nodes, "%s%s%s", before,
             before[0] ? "," : "", rq->bad);
    rq->wanted = 1;
    return 1;
}

void head_requeue_exclude(struct job *j, const struct head_requeue *rq,
                          int attempt)
{
    struct err err = { "" };

    /* no node takes its place: the job ends here */
    if (rq->wanted && j->nodeset)
        nodeset_shrink(j->nodeset, rq->host, rq->reason, attempt,
                       clock_wall(), &err);
}

/* One command of the requeue, tried up to REQUEUE_TRIES times.  0, or
 * its code with what it printed in out and its words in line. */
static int step(const char *const *cmd, const struct head_requeue *rq,
                char *out, size_t len, char *line, size_t llen)
{
    struct timespec wait = { 0, REQUEUE_WAIT_MS * 1000000L };
    int rc = -1;

    for (int i = 0; i < REQUEUE_TRIES && rc != 0; i++) {
        if (i)
            nanosleep(&wait, NULL);
        rc = run(cmd, rq, out, len, line, llen);
    }
    return rc;
}

int head_requeue(const struct job *j, const struct head_requeue *rq, int rc)
{
    const struct sched *s = j->alloc.sched;
    char out[2048], line[600], failed[2800] = "";

    if (!rq->wanted)
        return rc;
    for (int i = 0; s->requeue_without[i]; i++) {
        if (step(s->requeue_without[i], rq, out, sizeof out, line,
                 sizeof line) == 0)
            continue;
        if (i == 0)
            return say_fail(rc, "node %s failed: %s; no spare left, and %s "
                            "job %s could not be requeued ('%s': %s): the "
                            "job ends", rq->host, rq->reason, s->title,
                            rq->id, line, out);
        if (!failed[0])
            snprintf(failed, sizeof failed, "; but '%s' failed: %s", line,
                     out);
    }
    say("node %s failed: %s; no spare left: %s job %s requeued without %s "
        "(%s%s)%s", rq->host, rq->reason, s->title, rq->id, rq->bad,
        s->excluded_key, rq->nodes, failed);
    return rc;
}
