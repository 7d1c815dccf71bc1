/* t_editdist.c - the one Levenshtein distance behind "did you mean". */
#include <string.h>

#include "util/editdist.h"
#include "tap.h"

int main(void)
{
    char long_word[80];

    memset(long_word, 'a', sizeof long_word - 1);
    long_word[sizeof long_word - 1] = '\0';
    is_int((long)editdist("", ""), 0, "two empty words");
    is_int((long)editdist("nproc", "nproc"), 0, "the same word");
    is_int((long)editdist("", "abc"), 3, "from nothing: one insert each");
    is_int((long)editdist("nnode", "nnodes"), 1, "one left out");
    is_int((long)editdist("hostfle", "hostfile"), 1, "one letter dropped");
    is_int((long)editdist("kitten", "sitting"), 3, "the textbook pair");
    is_int((long)editdist("master-adr", "master-addr"), 1, "torchrun typo");
    is_int((long)editdist("nodes", "ndoes"), 2, "a swap counts two");
    is_int((long)editdist(long_word, "a"), EDITDIST_FAR,
           "a word of 63 characters or more is never close");
    return tap_done();
}
