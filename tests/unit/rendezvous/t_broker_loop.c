/* t_broker_loop.c - a broker served from an evloop: a client in a thread
 * puts and gets (the epoll fd's watch), a GET of a key never set times out
 * (the deadline's timer: nothing else would wake the loop), a GET parked
 * before its PUT is answered, and a pipe the client thread writes ends the
 * loop (evloop_stop_on_fd). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rendezvous/broker.h"
#include "rendezvous/broker_loop.h"
#include "rendezvous/client.h"
#include "util/evloop.h"
#include "tap.h"
#include "rendezvous/token.h"

struct peer {
    char addr[64], hex[TOKEN_HEX_LEN + 1];
    int stop_fd;                /* written when done: the loop ends */
    int put, got, timed_out;    /* client results */
    char val[32];
};

static void *peer_main(void *arg)
{
    struct peer *p = arg;
    struct err err = { "" };
    struct client *c = client_connect(p->addr, p->hex, 5000, &err);
    void *v = NULL;
    size_t len = 0;

    if (c) {
        p->put = client_put(c, "k", "hello", 5, &err);
        p->got = client_get(c, "k", 1000, &v, &len, &err);
        if (v)
            snprintf(p->val, sizeof p->val, "%s", (char *)v);
        free(v);
        v = NULL;
        p->timed_out = client_get(c, "never", 100, &v, &len, &err);
        free(v);
        client_close(c);
    }
    (void)!write(p->stop_fd, "x", 1);
    return NULL;
}

int main(void)
{
    struct err err = { "" };
    struct peer p = { .put = 99, .got = 99, .timed_out = 99 };
    struct broker_loop bl;
    uint8_t tok[TOKEN_BYTES];
    struct broker *b;
    struct evloop *l;
    pthread_t t;
    int pipefd[2];

    if (token_new(tok, &err) < 0 || pipe(pipefd) < 0 ||
        !(b = broker_create("127.0.0.1", 0, tok, NULL, &err)) ||
        !(l = evloop_create(&err))) {
        ok(0, err.msg);
        return tap_done();
    }
    token_to_hex(tok, p.hex);
    snprintf(p.addr, sizeof p.addr, "127.0.0.1:%d", broker_port(b));
    p.stop_fd = pipefd[1];
    ok(broker_loop_add(&bl, b, l, &err) == 0, "broker_loop_add");
    ok(evloop_stop_on_fd(l, pipefd[0], &err) == 0, "a pipe ends the loop");
    pthread_create(&t, NULL, peer_main, &p);
    is_int(evloop_run(l, &err), 0, "served until the pipe was written");
    pthread_join(t, NULL);
    is_int(p.put, CLIENT_OK, "PUT answered");
    is_int(p.got, CLIENT_OK, "GET answered");
    is_str(p.val, "hello", "  with the value put");
    is_int(p.timed_out, CLIENT_TIMEOUT, "a GET of a key never set: timed out "
           "(the deadline's timer woke the loop)");
    evloop_destroy(l);
    broker_destroy(b);
    close(pipefd[0]);
    close(pipefd[1]);
    return tap_done();
}
