/* fuzz_pmimap.c - libFuzzer target for pmimap_nodes: any bytes as the
 * PMI_process_mapping a launcher's key-value space returns, for a size
 * taken from the first byte.  It never crashes or runs long; what it
 * accepts gives every rank a node below *nnodes, every node a rank, and
 * local ranks that count each node's ranks. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "where/pmimap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void must(int cond)
{
    if (!cond)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct err err = { "" };
    int ranks, node[256], nnodes = -1, local, local_size, seen[256] = { 0 };
    char *s;

    if (size < 1)
        return 0;
    ranks = data[0] + 1;
    s = malloc(size);
    must(s != NULL);
    memcpy(s, data + 1, size - 1);
    s[size - 1] = '\0';
    if (pmimap_nodes(s, ranks, node, &nnodes, &err) < 0) {
        must(err.msg[0] != '\0' && strlen(err.msg) < sizeof err.msg);
    } else {
        must(nnodes >= 1 && nnodes <= ranks);
        for (int r = 0; r < ranks; r++) {
            must(node[r] >= 0 && node[r] < nnodes);
            pmimap_local(node, ranks, r, &local, &local_size);
            must(local == seen[node[r]]++ && local < local_size);
        }
        for (int i = 0; i < nnodes; i++)
            must(seen[i] > 0);
    }
    free(s);
    return 0;
}
