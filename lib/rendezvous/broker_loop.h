/* broker_loop.h - a broker served from an evloop: its epoll fd watched,
 * broker_run_once called when that is readable and when its next deadline
 * (a GET, a barrier, an AUTH timeout) comes due.  The way `dlrun broker`,
 * the head and a broker thread all serve one, beside their own fds. */
#ifndef DLRUN_BROKER_LOOP_H
#define DLRUN_BROKER_LOOP_H

#include "rendezvous/broker.h"
#include "util/err.h"
#include "util/evloop.h"

/* The caller's storage, alive while l runs; the fields are the loop's. */
struct broker_loop {
    struct broker *b;               /* borrowed */
    struct evloop_timer *due;       /* owned by the evloop */
};

/* Serve b (borrowed: destroy it after the loop ended) from l.  A failure
 * of the broker's epoll set ends evloop_run with -1 and its err.  -1 with
 * err when out of memory. */
int broker_loop_add(struct broker_loop *bl, struct broker *b, struct evloop *l,
                    struct err *err);

#endif
