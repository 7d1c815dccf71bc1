/* headlink.c - see headlink.h. */
#include "run/headlink.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rendezvous/client.h"
#include "run/watch.h"

struct headlink {
    struct headlink_conf c;
    atomic_int stopping, done;
    atomic_int refs;            /* the owner's and one per watcher */
    /* the beating watcher's own */
    struct client *cl;
    int seq, connected;
    char hb_key[64];
    struct err err;
};

static void headlink_unref(struct headlink *h)
{
    if (atomic_fetch_sub(&h->refs, 1) != 1)
        return;
    client_close(h->cl);
    free(h);
}

/* End this agent's ranks (once): its supervisor forwards the SIGTERM. */
static void headlink_lost(struct headlink *h, const char *why)
{
    if (atomic_exchange(&h->stopping, 1) || atomic_load(&h->done))
        return;
    if (h->c.lost)
        h->c.lost(h->c.ctx, why);
    kill(getpid(), SIGTERM);
}

/* A signal the head forwarded.  SIGKILL (a second Ctrl-C at the head)
 * becomes two SIGINTs here, which the supervisor turns into SIGKILL. */
static void apply_ctl(struct headlink *h, int sig)
{
    if (sig == SIGKILL) {
        kill(getpid(), SIGINT);
        kill(getpid(), SIGINT);
        return;
    }
    if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGQUIT)
        atomic_store(&h->stopping, 1);
    if (sig > 0 && sig < NSIG)
        kill(getpid(), sig);
}

/* Beat, and wait up to a second for the next forwarded signal.  The
 * connection is made here, in the watcher, not to hold up the start. */
static int beat_step(void *ctx, int wake)
{
    struct headlink *h = ctx;
    char ctl[64];
    void *val = NULL;
    size_t len = 0;
    int rc;

    (void)wake;
    if (!h->connected) {
        h->connected = 1;
        if (!(h->cl = client_from_env(h->c.hb_ms, &h->err)))
            return 1;
        client_set_answer_grace(h->cl, h->c.hb_ms);
    }
    rc = client_add(h->cl, h->hb_key, 1, NULL, &h->err);
    snprintf(ctl, sizeof ctl, "dlrun.ctl.%d", h->seq);
    if (rc == CLIENT_OK)
        rc = client_get(h->cl, ctl, 1000, &val, &len, &h->err);
    if (rc == CLIENT_OK) {
        h->seq++;
        apply_ctl(h, atoi(val));
    }
    free(val);
    return rc != CLIENT_OK && rc != CLIENT_TIMEOUT;
}

static void beat_done(void *ctx, int last)
{
    struct headlink *h = ctx;
    char why[ERR_MSG_MAX + 40];

    (void)last;
    snprintf(why, sizeof why, "lost the head: %s", h->err.msg);
    headlink_lost(h, why);
    headlink_unref(h);
}

/* EOF on the lifeline: whoever started this agent is gone. */
static int lifeline_step(void *ctx, int wake)
{
    struct headlink *h = ctx;
    char buf[256];
    ssize_t n = read(h->c.lifeline, buf, sizeof buf);

    (void)wake;
    return !(n > 0 || (n < 0 && errno == EINTR));
}

static void lifeline_done(void *ctx, int last)
{
    struct headlink *h = ctx;

    (void)last;
    headlink_lost(h, "the head is gone (the connection to it closed)");
    headlink_unref(h);
}

/* One watcher of h, left to run by itself; it holds a reference. */
static int headlink_watch(struct headlink *h, watch_step_fn *step,
                          watch_done_fn *done, struct err *err)
{
    struct watch *w;

    atomic_fetch_add(&h->refs, 1);
    w = watch_start(step, done, h, err);
    if (!w) {
        atomic_fetch_sub(&h->refs, 1);
        return -1;
    }
    watch_detach(w);
    return 0;
}

struct headlink *headlink_start(const struct headlink_conf *conf,
                                struct err *err)
{
    struct headlink *h = calloc(1, sizeof *h);

    if (!h) {
        client_close(conf->cl);
        err_set(err, "out of memory");
        return NULL;
    }
    h->c = *conf;
    h->cl = conf->cl;
    h->connected = h->cl != NULL;
    if (h->cl)
        client_set_answer_grace(h->cl, conf->hb_ms);
    h->seq = 1;
    atomic_init(&h->refs, 1);
    snprintf(h->hb_key, sizeof h->hb_key, "dlrun.hb.%d", conf->node);
    if ((conf->beat && headlink_watch(h, beat_step, beat_done, err) < 0) ||
        (conf->lifeline >= 0 &&
         headlink_watch(h, lifeline_step, lifeline_done, err) < 0)) {
        headlink_end(h);    /* a watcher already started keeps h */
        return NULL;
    }
    return h;
}

void headlink_end(struct headlink *h)
{
    if (!h)
        return;
    atomic_store(&h->done, 1);
    headlink_unref(h);
}

int headlink_forward(struct client *c, int *seq, int sig, struct err *err)
{
    char key[64], val[16];

    snprintf(key, sizeof key, "dlrun.ctl.%d", ++*seq);
    snprintf(val, sizeof val, "%d", sig);
    return client_put(c, key, val, strlen(val), err) == CLIENT_OK ? 0 : -1;
}
