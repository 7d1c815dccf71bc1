/* fuzz_pmix_names_remote.c - a published name's record as a hostile token
 * holder may write it under a broker key (lib/mpi/pmix_names_remote.h):
 * no crash, no read past the bytes; a record taken has its namespace
 * (1 to 255 bytes, NUL-terminated) and its value inside the input, and
 * formatting what was parsed gives the same bytes back.
 *
 * The input is the record itself (the broker's value, no NUL added). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/pmix_names_remote.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* a copy of its own size: a read past it is ASan's to catch */
    uint8_t *v = malloc(size ? size : 1);
    struct names_hit h = { 0 };
    struct err err = { "" };
    const uint8_t *ns, *val;
    char *again = NULL;
    size_t n = 0, nslen;

    if (!v)
        return 0;
    if (size)
        memcpy(v, data, size);
    if (names_record_parse(v, size, &h, &err) == 0) {
        ns = (const uint8_t *)h.nspace;
        val = h.val;
        nslen = strlen(h.nspace);
        if (ns < v || ns + nslen >= v + size || nslen == 0 || nslen > 255 ||
            val != ns + nslen + 1 || val + h.len != v + size)
            abort();
        /* "0" and the canonical numbers format back to the same bytes */
        if (names_record_format(h.nspace, h.rank, h.type, h.once, h.val,
                                h.len, &again, &n) < 0 ||
            n != size || memcmp(again, v, n) != 0)
            abort();
    }
    free(again);
    free(v);
    return 0;
}
