/* editdist.h - how far apart two words are, for "did you mean" (unknown
 * options in lib/util/optparse.c, unknown keys in lib/scripts/sites.c). */
#ifndef DLRUN_EDITDIST_H
#define DLRUN_EDITDIST_H

#include <stddef.h>

/* Levenshtein distance of a and b (borrowed): the fewest inserted, removed
 * or changed characters that make one the other.  Words of 63 characters
 * or more are never close: EDITDIST_FAR. */
#define EDITDIST_FAR 99
size_t editdist(const char *a, const char *b);

#endif
