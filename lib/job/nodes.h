/* nodes.h - one dlrun per node started by hand: the group's setup
 * (nodes.c) and its attempts (nodes_run.c: run_nodes in job.h). */
#ifndef DLRUN_NODES_H
#define DLRUN_NODES_H

#include <stdatomic.h>
#include <signal.h>

#include "rendezvous/broker_thread.h"
#include "rendezvous/client.h"
#include "job/job.h"
#include "run/nodegroup.h"
#include "rendezvous/token.h"
#include "run/watch.h"

enum {
    NODES_DONE,                 /* no rank of this node runs */
    NODES_RUNNING,              /* they run */
    NODES_TOLD,                 /* the watcher stopped them (SIGTERM) */
};

struct nodes {
    struct job *j;              /* borrowed */
    int rendezvous;             /* c10d: node ranks on arrival */
    int join_timeout_s;         /* --rdzv-conf join_timeout (600) */
    int is_host;                /* --rdzv-conf is_host: 1, 0, -1 unset */
    int last_call_s;            /* --rdzv-conf last_call_timeout (30):
                                   elastic, after MIN nodes joined */
    char host[256];             /* the endpoint's host and port */
    int port;
    char endpoint[300];         /* "HOST:PORT", the ranks' DLRUN_BROKER */
    char token[TOKEN_HEX_LEN + 1];
    struct ng_conf conf;
    struct broker_thread *server;   /* owned: this node serves, or NULL */
    struct broker_thread *ranks;    /* owned: node rank 0's broker for the
                                       ranks of this attempt, or NULL */
    struct nodegroup *main, *watch; /* owned: two connections */
    sigset_t orig;              /* the mask before dlrun blocked signals */
    /* the watcher of one attempt (lib/run/watch.h) */
    struct ng_group g;
    struct watch *watcher;      /* owned, or NULL */
    atomic_int state;           /* NODES_*: the ranks' state, shared with
                                   the watcher */
    int stopsig;                /* the signal that stopped a wait */
};

/* Read j's options (j borrowed, kept in n->j) into n (zeroed by the
 * caller: the endpoint, the token, this node's record) and serve the
 * group's broker when this node does (n->server: the caller stops it).
 * 0, or the exit code after saying why (lib/util/say.h). */
int nodes_setup(struct nodes *n, struct job *j);

#endif
