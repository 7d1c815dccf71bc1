/* heartbeat.c - see heartbeat.h. */
#include "run/heartbeat.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "rendezvous/broker.h"

struct heartbeat {
    int nnodes, timeout_ms;
    long *seen_ms;              /* when node i's counter last moved */
    long long *hb;              /* its last value; 0: not started yet */
    atomic_int lost;            /* the node lost, -1 none */
};

struct heartbeat *heartbeat_create(int nnodes, int timeout_ms,
                                   struct err *err)
{
    struct heartbeat *h = calloc(1, sizeof *h);

    if (h) {
        h->nnodes = nnodes;
        h->timeout_ms = timeout_ms;
        atomic_init(&h->lost, -1);
        h->seen_ms = calloc((size_t)nnodes + 1, sizeof *h->seen_ms);
        h->hb = calloc((size_t)nnodes + 1, sizeof *h->hb);
    }
    if (!h || !h->seen_ms || !h->hb) {
        heartbeat_free(h);
        err_set(err, "out of memory");
        return NULL;
    }
    return h;
}

int heartbeat_check(struct heartbeat *h, const struct broker *b, long now_ms)
{
    char key[64], val[32];

    for (int i = 0; i < h->nnodes && atomic_load(&h->lost) < 0; i++) {
        long long v;
        snprintf(key, sizeof key, "dlrun.hb.%d", i);
        v = broker_peek(b, key, val, sizeof val) == 0 ? atoll(val) : 0;
        if (v != h->hb[i]) {
            h->hb[i] = v;
            h->seen_ms[i] = now_ms;
        } else if (v > 0 && now_ms - h->seen_ms[i] > h->timeout_ms) {
            atomic_store(&h->lost, i);
            return i;
        }
    }
    return -1;
}

int heartbeat_lost(const struct heartbeat *h)
{
    return atomic_load(&h->lost);
}

long heartbeat_seen_ms(const struct heartbeat *h, int node)
{
    return node >= 0 && node < h->nnodes ? h->seen_ms[node] : 0;
}

int heartbeat_timeout_ms(const struct heartbeat *h)
{
    return h->timeout_ms;
}

const long long *heartbeat_counters(const struct heartbeat *h)
{
    return h->hb;
}

void heartbeat_free(struct heartbeat *h)
{
    if (!h)
        return;
    free(h->seen_ms);
    free(h->hb);
    free(h);
}
