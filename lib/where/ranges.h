/* ranges.h - sets of small non-negative integers written as ranges,
 * "3-9,12": the plan nodes an agent starts (--spawn). */
#ifndef DLRUN_RANGES_H
#define DLRUN_RANGES_H

#include "util/err.h"

/* Parse s (borrowed) into ascending-as-written values, each in [0, max).
 * Returns the count (at least 1) and sets *out (caller frees), or -1 with
 * err.  At most max values in all. */
int ranges_parse(const char *s, int max, int **out, struct err *err);

/* v (n values) in the form ranges_parse reads, runs of consecutive values
 * folded.  Caller frees; NULL when out of memory or n < 1. */
char *ranges_format(const int *v, int n);

#endif
