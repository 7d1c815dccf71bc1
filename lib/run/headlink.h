/* headlink.h - an agent's link to its head: it beats (adds 1 to
 * dlrun.hb.NODE about once a second), applies the signals the head
 * forwards (dlrun.ctl.1, .2, ...: ssh cannot deliver signals to root's
 * commands), and watches its lifeline (stdin under ssh: EOF when the
 * head, its relay or the connection is gone).  Losing the head either
 * way ends this agent's ranks: SIGTERM to this process, which its
 * supervisor forwards.  The head's side: headlink_forward below, and
 * lib/run/heartbeat.h for the beats.
 *
 * Two watchers (lib/run/watch.h) do it; start them after the signals are
 * blocked for the supervisor. */
#ifndef DLRUN_HEADLINK_H
#define DLRUN_HEADLINK_H

#include "util/err.h"

struct client;

struct headlink_conf {
    int node;                   /* this agent's plan node */
    int hb_ms;                  /* --heartbeat-timeout: the broker's
                                   connect timeout and answer grace */
    int beat;                   /* 1: beat and take signals through the
                                   head's broker: cl, else a connection of
                                   its own to DLRUN_BROKER/DLRUN_TOKEN */
    struct client *cl;          /* a connection to the head's broker that
                                   nothing else uses, owned from
                                   headlink_start on (closed there when it
                                   fails); NULL: see beat.  An agent's
                                   ranks reach the head through its relay:
                                   the beats must not share that
                                   connection's limits with them */
    int lifeline;               /* borrowed fd, or -1; left open */
    /* Told once, in a watcher's thread, why the head is lost, just before
     * the SIGTERM (not after headlink_end, not after a forwarded TERM,
     * INT, HUP or QUIT).  why is borrowed for the call. */
    void (*lost)(void *ctx, const char *why);
    void *ctx;                  /* borrowed: must live as long as the
                                   process (the watchers may) */
};

struct headlink;

/* Start the watchers conf asks for (a copy of conf is kept).  NULL with
 * err when a thread cannot start. */
struct headlink *headlink_start(const struct headlink_conf *conf,
                                struct err *err);

/* This agent's ranks are done: losing the head no longer matters.  The
 * watchers run on by themselves until they end or the process does; h
 * is freed by whichever ends last.  NULL is a no-op. */
void headlink_end(struct headlink *h);

/* The head's side of the forwarded signals: put sig as the next one
 * (dlrun.ctl.SEQ; *seq, 0 at first, is counted up) through c (borrowed),
 * where every agent's watcher waits for it.  0 / -1 with err. */
int headlink_forward(struct client *c, int *seq, int sig, struct err *err);

#endif
