/* ranges.c - see ranges.h. */
#include "where/ranges.h"
#include "util/strv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/* One decimal number in [0, max) at *s; advances *s.  -1 when none. */
static long number(const char **s, int max)
{
    char *end = NULL;
    long v;

    if (**s < '0' || **s > '9')
        return -1;
    errno = 0;
    v = strtol(*s, &end, 10);
    if (errno || v >= max)
        return -1;
    *s = end;
    return v;
}

int ranges_parse(const char *s, int max, int **out, struct err *err)
{
    const char *p = s;
    int n = 0, cap = 0, *v = NULL;

    *out = NULL;
    do {
        long lo = number(&p, max), hi = lo;
        if (lo >= 0 && *p == '-') {
            p++;
            hi = number(&p, max);
        }
        if (lo < 0 || hi < lo || (*p && *p != ','))
            goto bad;
        if (hi - lo >= (long)max - n)
            goto bad;
        for (long i = lo; i <= hi; i++) {
            if (n == cap) {
                int *nv = realloc(v, (size_t)(cap = cap ? 2 * cap : 16) *
                                         sizeof *v);
                if (!nv)
                    goto bad;
                v = nv;
            }
            v[n++] = (int)i;
        }
    } while (*p++ == ',');
    *out = v;
    return n;
bad:
    free(v);
    return err_set(err, "'%.80s': expected ranges such as 3-9,12 of numbers "
                   "below %d", s, max);
}

char *ranges_format(const int *v, int n)
{
    struct membuf b;
    FILE *m = n > 0 ? membuf_open(&b) : NULL;

    if (!m)
        return NULL;
    for (int i = 0; i < n;) {
        int j = i;
        while (j + 1 < n && v[j + 1] == v[j] + 1)
            j++;
        fprintf(m, i ? ",%d" : "%d", v[i]);
        if (j > i)
            fprintf(m, "-%d", v[j]);
        i = j + 1;
    }
    return membuf_close(&b);
}
