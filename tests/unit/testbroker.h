/* testbroker.h - a broker on 127.0.0.1 (a port the kernel picks) served
 * by a thread of the test, for a test that talks to it through a client
 * from its main thread.  lib/rendezvous/broker_thread does the same for
 * dlrun but takes no limits; a test wants them (a small value limit).
 * Header only. */
#ifndef DLRUN_TESTBROKER_H
#define DLRUN_TESTBROKER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include "rendezvous/broker.h"
#include "rendezvous/token.h"

struct testbroker {
    struct broker *b;
    pthread_t thread;
    atomic_int stop;
    char addr[64];                  /* "127.0.0.1:PORT" */
    char hex[TOKEN_HEX_LEN + 1];    /* its token */
};

static inline void *testbroker_serve(void *arg)
{
    struct testbroker *tb = arg;
    struct err err = { "" };

    while (!atomic_load(&tb->stop))
        broker_run_once(tb->b, 50, &err);
    return NULL;
}

/* Start tb's broker with token tok and limits lim (NULL: the defaults).
 * 0, or -1 with err. */
static inline int testbroker_start(struct testbroker *tb,
                                   const uint8_t tok[TOKEN_BYTES],
                                   const struct broker_limits *lim,
                                   struct err *err)
{
    atomic_store(&tb->stop, 0);
    tb->b = broker_create("127.0.0.1", 0, tok, lim, err);
    if (!tb->b)
        return -1;
    token_to_hex(tok, tb->hex);
    snprintf(tb->addr, sizeof tb->addr, "127.0.0.1:%d", broker_port(tb->b));
    if (pthread_create(&tb->thread, NULL, testbroker_serve, tb) != 0) {
        broker_destroy(tb->b);
        tb->b = NULL;
        return err_set(err, "cannot start the broker's thread");
    }
    return 0;
}

/* Stop serving, join the thread, destroy the broker. */
static inline void testbroker_stop(struct testbroker *tb)
{
    atomic_store(&tb->stop, 1);
    pthread_join(tb->thread, NULL);
    broker_destroy(tb->b);
    tb->b = NULL;
}

#endif
