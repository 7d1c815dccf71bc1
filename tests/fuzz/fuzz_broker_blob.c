/* fuzz_broker_blob.c - blob heads and chunks as a hostile token holder
 * may write them (lib/rendezvous/broker_blob.h): no crash, no leak, no write past
 * the buffer; a blob taken is exactly the bytes its head announced.
 *
 * Byte 0: the broker's value limit, 1 + b % 64.  Then the head, up to
 * the first newline.  Then chunks, each a length byte and that many
 * bytes (cut short at the end of the input).  The blob is appended to a
 * buffer that already holds 3 bytes, as a fence appends node after node. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rendezvous/broker_blob.h"
#include "rendezvous/client.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct input {
    const uint8_t *p, *end;
    size_t given;               /* bytes of chunks handed out */
};

static int fetch(void *ctx, size_t i, void **val, size_t *len,
                 struct err *err)
{
    struct input *in = ctx;
    size_t n;

    (void)i;
    if (in->p >= in->end)
        return err_set(err, "no more chunks"), CLIENT_TIMEOUT;
    n = *in->p++;
    if (n > (size_t)(in->end - in->p))
        n = (size_t)(in->end - in->p);
    *val = malloc(n + 1);
    if (!*val)
        return err_set(err, "out of memory"), CLIENT_ERROR;
    memcpy(*val, in->p, n);
    ((char *)*val)[n] = '\0';
    *len = n;
    in->p += n;
    in->given += n;
    return CLIENT_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct input in;
    struct blob_head h;
    struct err err = { "" };
    const uint8_t *nl;
    size_t max, len = 3;
    char *buf = malloc(4);

    if (size < 1 || !buf) {
        free(buf);
        return 0;
    }
    memcpy(buf, "pre", 4);
    max = 1 + data[0] % 64;
    nl = memchr(data + 1, '\n', size - 1);
    in.p = nl ? nl + 1 : data + size;
    in.end = data + size;
    in.given = 0;
    if (blob_head_parse(data + 1, (size_t)((nl ? nl : data + size) - data - 1),
                        max, &h, &err) == 0 &&
        blob_assemble(&h, max, fetch, &in, "k", &buf, &len, &err) ==
            CLIENT_OK &&
        (len != 3 + h.len || in.given != h.len || memcmp(buf, "pre", 3)))
        abort();
    free(buf);
    return 0;
}
