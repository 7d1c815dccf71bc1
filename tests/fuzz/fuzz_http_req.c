/* fuzz_http_req.c - any bytes, in pieces of any size, into the HTTP
 * request engine and each request it completes into the Gloo rendezvous
 * store (lib/rendezvous/hvd_server.c's hvd_answer): no crash, no leak, every error
 * has a status to answer with, every request a known answer, and the
 * store never holds more than its budget.
 *
 * Byte 0 picks the piece size; the rest is the stream. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rendezvous/http_req.h"
#include "rendezvous/hvd_server.h"
#include "rendezvous/hvd_store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define BUDGET 4096

static int on_req(void *ctx, const struct http_request *r)
{
    struct hvd_store *st = ctx;
    struct err err = { "" };
    const void *body;
    size_t len;
    int status;

    if (!r->method[0] || r->target[0] != '/' || (r->body_len && !r->body))
        abort();
    status = hvd_answer(st, r, &body, &len, &err);
    if (status != 200 && status != 400 && status != 404 && status != 411 &&
        status != 501 && status != 507 && status != 500)
        abort();
    if (status == 200 && body == NULL && r->method[0] == 'G')
        abort();
    if (hvd_store_bytes(st) > BUDGET)
        abort();
    /* a DELETE of key "!" declares the scope, to reach finalize */
    if (r->method[0] == 'D' && strstr(r->target, "/!"))
        hvd_store_scope_size(st, "s", 2, &err);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const size_t pieces[8] = { 1, 2, 3, 7, 24, 25, 100, 1 << 20 };
    struct err err = { "" };
    struct hvd_store *st;
    struct http_req p;
    size_t piece;
    int rc = 0;

    if (size < 1)
        return 0;
    piece = pieces[data[0] & 7];
    st = hvd_store_create(BUDGET, &err);
    if (!st || http_req_init(&p, 512, 1024, on_req, st, &err) < 0)
        abort();
    for (size_t off = 1; off < size && rc == 0; off += piece)
        rc = http_req_feed(&p, data + off, size - off < piece ? size - off : piece,
                           &err);
    if (rc < 0 && http_req_status(&p) < 400)
        abort();
    http_req_free(&p);
    hvd_store_destroy(st);
    return 0;
}
