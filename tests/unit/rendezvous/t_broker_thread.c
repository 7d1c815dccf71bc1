/* t_broker_thread.c - a broker served from a thread of its own, over
 * loopback in this process: the kernel's port, clients with the token
 * sharing keys and counters, a wrong token turned away, a second broker
 * on a taken port refused, and a stop that closes what is connected. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rendezvous/broker_thread.h"
#include "rendezvous/client.h"
#include "tap.h"
#include "rendezvous/token.h"

int main(void)
{
    uint8_t tok[TOKEN_BYTES], other[TOKEN_BYTES];
    char hex[TOKEN_HEX_LEN + 1], bad[TOKEN_HEX_LEN + 1], addr[64];
    struct err err = { "" };
    struct broker_thread *t, *t2;
    struct client *a, *b;
    void *val = NULL;
    size_t len = 0;
    int64_t n = 0;

    token_new(tok, &err);
    token_new(other, &err);
    token_to_hex(tok, hex);
    token_to_hex(other, bad);
    t = broker_thread_start("127.0.0.1", 0, tok, &err);
    if (!ok(t != NULL, "broker_thread_start")) {
        printf("# %s\n", err.msg);
        return tap_done();
    }
    ok(broker_thread_port(t) > 0, "port 0: the kernel's pick");
    snprintf(addr, sizeof addr, "127.0.0.1:%d", broker_thread_port(t));
    a = client_connect(addr, hex, 60000, &err);
    b = client_connect(addr, hex, 60000, &err);
    ok(a && b, "two clients with the token");
    ok(a && b && client_put(a, "k", "v1", 2, &err) == 0 &&
       client_get(b, "k", 60000, &val, &len, &err) == 0 && len == 2 &&
       !memcmp(val, "v1", 2), "a value put by one is read by the other");
    free(val);
    ok(a && b && client_add(a, "n", 1, NULL, &err) == 0 &&
       client_add(b, "n", 2, &n, &err) == 0 && n == 3, "a shared counter");
    ok(!client_connect(addr, bad, 60000, &err) && err.msg[0],
       "a wrong token is turned away");
    printf("# %s\n", err.msg);

    t2 = broker_thread_start("127.0.0.1", broker_thread_port(t), tok, &err);
    ok(!t2 && err.msg[0], "a second broker on the same port: refused");
    printf("# %s\n", err.msg);
    broker_thread_stop(t2);

    broker_thread_stop(t);
    ok(a && client_put(a, "k", "v2", 2, &err) < 0,
       "after stop, a client's request fails");
    client_close(a);
    client_close(b);
    ok(!client_connect(addr, hex, 100, &err), "nobody serves the port any more");
    broker_thread_stop(NULL);
    ok(1, "broker_thread_stop(NULL)");
    return tap_done();
}
