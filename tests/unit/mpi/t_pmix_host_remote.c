/* t_pmix_host_remote.c - the cross-node exchange of the hosted PMIx
 * server (lib/mpi/pmix_host_remote.c): blobs larger than the broker's
 * value limit go in chunks and come back byte for byte with their
 * status, an empty one adds nothing, one nobody put times out.  The
 * refusals of hostile heads and chunks are in rendezvous/t_broker_blob.c;
 * the fences themselves run in t_pmix_host.c's ranks. */
#include <stdio.h>
#include <string.h>

#include "tap.h"

#ifdef HAVE_PMIX
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "rendezvous/broker.h"
#include "rendezvous/client.h"
#include "mpi/pmix_host_int.h"
#include "rendezvous/token.h"

static atomic_int stop_broker;

static void *serve(void *arg)
{
    struct err err = { "" };

    while (!atomic_load(&stop_broker))
        broker_run_once(arg, 50, &err);
    return NULL;
}

/* Blobs larger than the broker's value limit go in chunks. */
static void test_blobs(void)
{
    uint8_t tok[TOKEN_BYTES] = { 1, 2, 3 };
    char hex[TOKEN_HEX_LEN + 1], addr[64], data[1000], *buf = NULL;
    struct broker_limits lim = { .max_value = 16 };
    struct err err = { "" };
    struct broker *b = broker_create("127.0.0.1", 0, tok, &lim, &err);
    struct client *c = NULL;
    pthread_t t;
    size_t len = 0;
    int status = -1;

    ok(b != NULL, "a broker that takes 16-byte values");
    if (!b)
        return;
    token_to_hex(tok, hex);
    snprintf(addr, sizeof addr, "127.0.0.1:%d", broker_port(b));
    pthread_create(&t, NULL, serve, b);
    c = client_connect(addr, hex, 5000, &err);
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (char)(i * 7);
    is_int(pmix_host_put_blob(c, "blob", data, sizeof data, 3, &err),
           CLIENT_OK, "put 1000 bytes in chunks");
    is_int(pmix_host_put_blob(c, "empty", NULL, 0, 0, &err), CLIENT_OK,
           "put an empty blob");
    is_int(pmix_host_get_blob(c, "blob", 1000, &buf, &len, &status, &err),
           CLIENT_OK, "get it back");
    ok(len == sizeof data && memcmp(buf, data, len) == 0 && status == 3,
       "  the same bytes and status");
    is_int(pmix_host_get_blob(c, "empty", 1000, &buf, &len, &status, &err),
           CLIENT_OK, "append the empty one");
    is_int((long)len, (long)sizeof data, "  nothing added");
    is_int(pmix_host_get_blob(c, "nothing", 100, &buf, &len, &status, &err),
           CLIENT_TIMEOUT, "a blob nobody put: timeout");
    free(buf);
    client_close(c);
    atomic_store(&stop_broker, 1);
    pthread_join(t, NULL);
    broker_destroy(b);
}

int main(void)
{
    test_blobs();
    return tap_done();
}
#else
int main(void)
{
    ok(1, "# skip: PMIx is not compiled in");
    return tap_done();
}
#endif
