/* fuzz_stall.c - libFuzzer target for what crosses the broker under
 * --stall-timeout: the agents' "RANK WHERE" lines (stall_where_parse, any
 * rank holds the token and may write them), the stall line made of them
 * (stall_format_groups), and the faulthandler text a rank writes
 * (stall_py_where).
 *
 * It never crashes; every rank handed on is in range and every where is
 * printable and bounded; the line fits its buffer. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "observe/stall.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NRANKS 64

struct seen {
    int n;
    int rank[NRANKS];
    char where[NRANKS][STALL_WHERE_MAX];
};

static void must(int cond)
{
    if (!cond)
        abort();
}

static void take(void *ctx, int rank, const char *where)
{
    struct seen *s = ctx;
    size_t n = strlen(where);

    must(rank >= 0 && rank < NRANKS && n > 0 && n < STALL_WHERE_MAX);
    for (size_t i = 0; i < n; i++)
        must(where[i] >= 0x20 && where[i] <= 0x7e);
    if (s->n < NRANKS) {
        s->rank[s->n] = rank;
        memcpy(s->where[s->n++], where, n + 1);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct seen s;
    const char *hosts[NRANKS];
    char line[512], buf[128];

    s.n = 0;
    must(stall_where_parse((const char *)data, size, NRANKS, take, &s) >= 0);
    for (int i = 0; i < s.n; i++)
        hosts[i] = i % 2 ? "node1" : "node2";
    stall_format_groups(s.n, s.rank, hosts,
                        (const char (*)[STALL_WHERE_MAX])s.where, line,
                        sizeof line);
    must(strlen(line) < sizeof line);
    if (stall_py_where((const char *)data, size, buf, sizeof buf) == 0)
        must(strlen(buf) < sizeof buf);
    return 0;
}
