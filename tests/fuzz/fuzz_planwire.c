/* fuzz_planwire.c - libFuzzer target for the plan an agent fetches from
 * the head's broker (lib/place/planwire.h), which any holder of the job's
 * token (every rank) could have written.
 *
 * It never crashes; a refusal says why; what it accepts is a rank table
 * that holds together (every rank on a node of the plan, each node's
 * count what its ranks add up to), from which an agent's plan builds; and
 * it encodes back to a wire that decodes to the same encoding. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "place/planwire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void must(int cond)
{
    if (!cond)
        abort();
}

static void check_table(const struct planwire *w)
{
    long sum = 0;

    must(w->nnodes > 0 && w->nranks > 0 && w->nranks <= PLANWIRE_MAX_RANKS);
    for (int i = 0; i < w->nnodes; i++) {
        must(w->nodes[i].host && w->nodes[i].nranks > 0);
        sum += w->nodes[i].nranks;
    }
    must(sum == w->nranks);
    for (int r = 0; r < w->nranks; r++)
        must(w->rank_node[r] >= 0 && w->rank_node[r] < w->nnodes);
}

/* encode(plan of w, w) decodes, and encodes to the same bytes again. */
static void check_roundtrip(const struct planwire *w)
{
    struct err err = { "" };
    struct alloc a;
    struct plan p;
    struct planwire w2;
    size_t len = 0, len2 = 0;
    uint8_t *one = NULL, *two = NULL;

    must(planwire_plan(w, &a, &p, &err) == 0);
    must(p.nranks == w->nranks && p.nnodes == w->nnodes);
    one = planwire_encode(&p, w, &len, &err);
    must(one != NULL);
    must(planwire_decode(one, len, &w2, &err) == 0);
    two = planwire_encode(&p, &w2, &len2, &err);
    must(two && len2 == len && memcmp(one, two, len) == 0);
    planwire_free(&w2);
    free(one);
    free(two);
    plan_free(&p);
    alloc_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct planwire w;
    struct err err = { "" };
    int rc = planwire_decode(data, size, &w, &err);

    must(rc == 0 || rc == -1);
    must(rc == 0 || err.msg[0]);
    if (rc == 0) {
        check_table(&w);
        check_roundtrip(&w);
    }
    planwire_free(&w);
    return 0;
}
