/* editdist.c - Levenshtein distance for "did you mean". */
#include "util/editdist.h"

#include <string.h>

/* One row of the table at a time: option words and keys are short, so a
 * fixed row on the stack and no allocation. */
size_t editdist(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), row[64], prev, tmp;

    if (la >= 63 || lb >= 63)
        return EDITDIST_FAR;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        prev = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t best = prev + (a[i - 1] != b[j - 1]);

            tmp = row[j];
            if (row[j] + 1 < best)
                best = row[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            prev = tmp;
        }
    }
    return row[lb];
}
