/* fuzz_nodegroup.c - libFuzzer target for what one dlrun per node reads
 * back from the group's broker (any rank holds the token and can write
 * there): a node's record and the group's outcome.  The first byte picks
 * the decoder and the group's size.  It never crashes, and whatever it
 * accepts is written back the same (format, parse again, compare). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "run/nodegroup.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void member(const char *s, size_t n)
{
    struct ng_member m, again;
    struct err err;
    char buf[700];

    if (ng_member_parse(s, n, &m, &err) < 0)
        return;
    if (m.nproc < 1 || strlen(m.addr) == 0 || strlen(m.host) == 0 ||
        ng_member_format(&m, buf, sizeof buf) < 0 ||
        ng_member_parse(buf, strlen(buf), &again, &err) < 0 ||
        memcmp(&m, &again, sizeof m) != 0)
        abort();
}

static void outcome(const char *s, size_t n, int nnodes, int nranks)
{
    struct ng_end e, again;
    struct err err;
    char buf[200];

    if (ng_end_parse(s, n, nnodes, nranks, &e, &err) < 0)
        return;
    if (e.node < 0 || e.node >= nnodes || e.rank < 0 || e.rank >= nranks ||
        ng_end_format(&e, buf, sizeof buf) < 0 ||
        ng_end_parse(buf, strlen(buf), nnodes, nranks, &again, &err) < 0 ||
        memcmp(&e, &again, sizeof e) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if (data[0] & 1)
        member((const char *)data + 1, size - 1);
    else
        outcome((const char *)data + 1, size - 1, 1 + (data[0] >> 1) % 8,
                1 + (data[0] >> 4));
    return 0;
}
