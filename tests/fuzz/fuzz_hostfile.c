/* fuzz_hostfile.c - host files and -H lists: any text is accepted or
 * refused with a message, never a crash, and accepted ones have hosts
 * with positive slots and names that are host names. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "where/alloc.h"
#include "where/hostfile.h"
#include "where/hostname.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const struct alloc *a)
{
    for (size_t i = 0; i < a->nnodes; i++)
        if (a->nodes[i].slots < 1 || hostname_check(a->nodes[i].name, NULL))
            abort();        /* only host names get through */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    struct alloc a = { 0 }, b = { 0 };
    struct err err = { "" };

    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    if (hostfile_parse(text, "fuzz", &a, &err) == 0)
        check(&a);
    else if (!err.msg[0])
        abort();            /* a refusal always says why */
    if (hosts_parse(text, &b, &err) == 0)
        check(&b);
    alloc_free(&a);
    alloc_free(&b);
    free(text);
    return 0;
}
