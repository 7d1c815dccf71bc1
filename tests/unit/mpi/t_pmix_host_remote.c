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
#include <stdlib.h>

#include "rendezvous/client.h"
#include "mpi/pmix_host_int.h"
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
    testbroker_stop(&tb);
}

int main(void)
{
    test_blobs();
    return tap_done();
}
#else
int main(void)
{
    return tap_skip_all("PMIx is not compiled in");
}
#endif
