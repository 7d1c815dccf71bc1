/* pmimap.c - reading PMI_process_mapping (pmimap.h): the text into
 * blocks, then the blocks repeated over the ranks as MPICH's
 * MPIR_NODEMAP_populate_ids_from_mapping does.
 */
#include "where/pmimap.h"

#include <stdlib.h>
#include <string.h>

struct block {
    int start, nodes, ppn;
};

/* One number at *s (digits only, at most PMIMAP_MAX_NUM), *s moved past
 * it: 0, or -1. */
static int num(const char **s, int *out)
{
    long v = 0;

    if (**s < '0' || **s > '9')
        return -1;
    while (**s >= '0' && **s <= '9') {
        v = v * 10 + (**s - '0');
        if (v > PMIMAP_MAX_NUM)
            return -1;
        (*s)++;
    }
    *out = (int)v;
    return 0;
}

/* c at *s (spaces around it skipped), *s moved past it. */
static int eat(const char **s, char c)
{
    while (**s == ' ')
        (*s)++;
    if (**s != c)
        return -1;
    (*s)++;
    while (**s == ' ')
        (*s)++;
    return 0;
}

/* "(START,NODES,PPN)" at *s into b. */
static int one_block(const char **s, struct block *b)
{
    if (eat(s, '(') < 0 || num(s, &b->start) < 0 || eat(s, ',') < 0 ||
        num(s, &b->nodes) < 0 || eat(s, ',') < 0 || num(s, &b->ppn) < 0 ||
        eat(s, ')') < 0)
        return -1;
    return b->nodes > 0 && b->ppn > 0 &&
           b->start <= PMIMAP_MAX_NUM - b->nodes ? 0 : -1;
}

/* The blocks of s into b (PMIMAP_MAX_BLOCKS): their count, or -1. */
static int parse(const char *s, struct block *b)
{
    int n = 0;

    if (eat(&s, '(') < 0 || strncmp(s, "vector", 6) != 0)
        return -1;
    s += 6;
    while (eat(&s, ',') == 0) {
        if (n == PMIMAP_MAX_BLOCKS || one_block(&s, &b[n]) < 0)
            return -1;
        n++;
    }
    if (n == 0 || eat(&s, ')') < 0 || *s)
        return -1;
    return n;
}

/* The blocks over size ranks into node; the largest node index + 1. */
static int spread(const struct block *b, int n, int size, int *node)
{
    int r = 0, top = 0;

    while (r < size)
        for (int i = 0; i < n && r < size; i++)
            for (int j = 0; j < b[i].nodes && r < size; j++)
                for (int k = 0; k < b[i].ppn && r < size; k++) {
                    node[r++] = b[i].start + j;
                    if (b[i].start + j + 1 > top)
                        top = b[i].start + j + 1;
                }
    return top;
}

int pmimap_nodes(const char *s, int size, int *node, int *nnodes,
                 struct err *err)
{
    struct block *b = calloc(PMIMAP_MAX_BLOCKS, sizeof *b);
    char *seen = NULL, q[84];
    int n, top, rc = -1;

    if (!b)
        return err_set(err, "out of memory");
    if (size < 1 || (n = parse(s, b)) < 0) {
        err_set(err, "PMI_process_mapping '%s' is not (vector,(START,NODES,"
                "PPN),...)", err_quote(q, 80, s, strlen(s)));
        goto out;
    }
    top = spread(b, n, size, node);
    if (top > size) {   /* more nodes than ranks: one has none */
        err_set(err, "PMI_process_mapping '%s' names %d nodes for %d ranks",
                err_quote(q, 80, s, strlen(s)), top, size);
        goto out;
    }
    if (!(seen = calloc((size_t)top, 1))) {
        err_set(err, "out of memory");
        goto out;
    }
    for (int r = 0; r < size; r++)
        seen[node[r]] = 1;
    for (int i = 0; i < top; i++)
        if (!seen[i]) {
            err_set(err, "PMI_process_mapping '%s' gives node %d no rank of "
                    "%d", err_quote(q, 80, s, strlen(s)), i, size);
            goto out;
        }
    *nnodes = top;
    rc = 0;
out:
    free(seen);
    free(b);
    return rc;
}

void pmimap_local(const int *node, int size, int rank, int *local,
                  int *local_size)
{
    *local = *local_size = 0;
    for (int r = 0; r < size; r++)
        if (node[r] == node[rank]) {
            *local += r < rank;
            (*local_size)++;
        }
}
