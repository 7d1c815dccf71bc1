/* jobopts.c - what struct options owns (jobopts.h). */
#include "job/jobopts.h"

#include <stdlib.h>

char *options_keep(struct options *o, char *s)
{
    char **v = s ? realloc(o->strs, (size_t)(o->nstrs + 1) * sizeof *v) : NULL;

    if (!v) {
        free(s);
        return NULL;
    }
    o->strs = v;
    v[o->nstrs++] = s;
    return s;
}

void options_free(struct options *o)
{
    for (int i = 0; i < o->nstrs; i++)
        free(o->strs[i]);
    free(o->strs);
    free(o->progv);
    free(o->mpmd_first);
    free(o->exports);
    free(o->ranks_filter);
    o->strs = NULL;
    o->nstrs = 0;
    o->progv = NULL;
    o->mpmd_first = NULL;
    o->exports = NULL;
    o->ranks_filter = NULL;
}
