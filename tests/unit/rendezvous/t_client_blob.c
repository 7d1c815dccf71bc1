/* t_client_blob.c - blobs through a broker client
 * (lib/rendezvous/client_blob.c): larger than the broker's value limit
 * they go in chunks and come back byte for byte with their status, an
 * empty one adds nothing, one nobody put times out; what a hostile token
 * holder writes is refused without overflow.  The PMIx and simple-PMI
 * fences that use them run in t_pmix_host.c's and t_pmi_serve_remote.c's
 * ranks. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rendezvous/client.h"
#include "rendezvous/client_blob.h"
#include "tap.h"
#include "testbroker.h"

/* Blobs larger than the broker's value limit go in chunks. */
static void test_blobs(void)
{
    uint8_t tok[TOKEN_BYTES] = { 1, 2, 3 };
    char data[1000], *buf = NULL;
    struct broker_limits lim = { .max_value = 16 };
    struct err err = { "" };
    struct testbroker tb;
    struct client *c = NULL;
    size_t len = 0;
    int status = -1;

    if (!ok(testbroker_start(&tb, tok, &lim, &err) == 0,
            "a broker that takes 16-byte values"))
        return;
    c = client_connect(tb.addr, tb.hex, 5000, &err);
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (char)(i * 7);
    is_int(client_put_blob(c, "blob", data, sizeof data, 3, &err),
           CLIENT_OK, "put 1000 bytes in chunks");
    is_int(client_put_blob(c, "empty", NULL, 0, 0, &err), CLIENT_OK,
           "put an empty blob");
    is_int(client_get_blob(c, "blob", 1000, &buf, &len, &status, &err),
           CLIENT_OK, "get it back");
    ok(len == sizeof data && memcmp(buf, data, len) == 0 && status == 3,
       "  the same bytes and status");
    is_int(client_get_blob(c, "empty", 1000, &buf, &len, &status, &err),
           CLIENT_OK, "append the empty one");
    is_int((long)len, (long)sizeof data, "  nothing added");
    is_int(client_get_blob(c, "nothing", 100, &buf, &len, &status, &err),
           CLIENT_TIMEOUT, "a blob nobody put: timeout");
    free(buf);
    client_close(c);
    testbroker_stop(&tb);
}

/* What a hostile rank can write, read back by client_get_blob. */
static void test_hostile_blobs(void)
{
    uint8_t tok[TOKEN_BYTES] = { 9, 8, 7 };
    char chunk[4096], *buf = NULL;
    struct err err = { "" };
    struct testbroker tb;
    struct client *c = NULL;
    size_t len = 0;
    int status = 5;

    if (!ok(testbroker_start(&tb, tok, NULL, &err) == 0, "a broker"))
        return;
    c = client_connect(tb.addr, tb.hex, 5000, &err);
    memset(chunk, 'x', sizeof chunk);
    client_put(c, "evil.0", chunk, sizeof chunk, &err);
    client_put(c, "evil", "18446744073709551615 1 0", 24, &err);
    is_int(client_get_blob(c, "evil", 1000, &buf, &len, &status, &err),
           CLIENT_ERROR, "head 18446744073709551615 1 0: refused, no overflow");
    ok(strstr(err.msg, "bad blob head under evil") != NULL, "  says so");
    is_int((long)len, 0, "  nothing appended");
    is_int(status, 5, "  status untouched");
    client_put(c, "big", "4095 1 0", 8, &err);
    client_put(c, "big.0", chunk, sizeof chunk, &err);
    is_int(client_get_blob(c, "big", 1000, &buf, &len, &status, &err),
           CLIENT_ERROR, "a chunk longer than its head says: refused");
    client_put(c, "fine", "4096 1 -3", 9, &err);
    client_put(c, "fine.0", chunk, sizeof chunk, &err);
    is_int(client_get_blob(c, "fine", 1000, &buf, &len, &status, &err),
           CLIENT_OK, "a well-formed blob still reads");
    ok(len == sizeof chunk && status == -3, "  its bytes and status");
    free(buf);
    client_close(c);
    testbroker_stop(&tb);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    test_blobs();
    test_hostile_blobs();
    return tap_done();
}
