/* t_heartbeat.c - the head's side of the agents' heartbeats
 * (lib/run/heartbeat.h) against a real broker: a counter that never moved is
 * not lost, one that moved is lost only past the timeout after its last
 * move, only the first lost node is told, and the counters are kept. */
#include <stdio.h>
#include <string.h>

#include "rendezvous/broker.h"
#include "rendezvous/client.h"
#include "run/heartbeat.h"
#include "tap.h"
#include "rendezvous/token.h"
#include "run/watch.h"

static const uint8_t token[TOKEN_BYTES] = "secret-token-16b";
static char token_hex[TOKEN_HEX_LEN + 1];

/* An agent's beat: one add to dlrun.hb.NODE from a watcher's thread
 * while the main thread serves the broker. */
struct beat {
    const char *addr, *key;
    int rc;
};

static int beat_step(void *ctx, int wake)
{
    struct beat *bt = ctx;
    struct err err = { "" };
    struct client *c = client_connect(bt->addr, token_hex, 5000, &err);

    (void)wake;
    bt->rc = c ? client_add(c, bt->key, 1, NULL, &err) : -1;
    client_close(c);
    return 1;
}

/* Beat node's counter once; serve b until the value is there. */
static int beat(struct broker *b, const char *key)
{
    struct err err = { "" };
    struct beat bt = { .addr = broker_addr(b), .key = key, .rc = -9 };
    struct watch *w = watch_start(beat_step, NULL, &bt, &err);

    for (int i = 0; w && i < 2000 && !watch_ended(w); i++)
        broker_run_once(b, 5, &err);
    watch_stop(w);
    return bt.rc;
}

int main(void)
{
    struct err err = { "" };
    struct broker *b = broker_create("unix:", 0, token, NULL, &err);
    struct heartbeat *h = heartbeat_create(2, 3000, &err);

    token_to_hex(token, token_hex);
    ok(b && h, "a broker and a heartbeat table");
    if (!b || !h)
        return tap_done();
    is_int(heartbeat_lost(h), -1, "nobody lost at first");
    is_int(heartbeat_check(h, b, 1000), -1, "no counter yet: nobody lost");
    is_int(heartbeat_check(h, b, 100000), -1, "  however long");
    is_int(heartbeat_timeout_ms(h), 3000, "the timeout kept");

    is_int(beat(b, "dlrun.hb.0"), CLIENT_OK, "node 0 beats");
    is_int(heartbeat_check(h, b, 200000), -1, "  a move: seen now");
    is_int(heartbeat_counters(h)[0], 1, "  its counter kept");
    is_int(heartbeat_counters(h)[1], 0, "  node 1 still silent");
    is_int(heartbeat_check(h, b, 203000), -1, "  not lost at the timeout");
    is_int(beat(b, "dlrun.hb.0"), CLIENT_OK, "node 0 beats again");
    is_int(heartbeat_check(h, b, 203500), -1, "  seen again");
    is_int(heartbeat_check(h, b, 206400), -1, "  the timeout counts from there");
    is_int(heartbeat_check(h, b, 206501), 0, "  lost just past it");
    is_int(heartbeat_lost(h), 0, "  and kept as lost");
    is_int((int)heartbeat_seen_ms(h, 0), 203500, "  last seen at its last move");
    is_int((int)heartbeat_seen_ms(h, 1), 0, "  node 1 never seen");
    is_int((int)heartbeat_seen_ms(h, 7), 0, "  no such node: 0");
    is_int(heartbeat_check(h, b, 999999), -1, "  told once");

    heartbeat_free(h);
    heartbeat_free(NULL);
    broker_destroy(b);
    return tap_done();
}
