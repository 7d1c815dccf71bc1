/* shwords.h - the words of one line of a job script, as the shell would
 * split them, for `dlrun script --check FILE` to give the dlrun line of a
 * script to dlrun's own option parser.
 *
 * What dlrun script writes is understood: words separated by blanks,
 * '...' (nothing special inside), "..." (a backslash keeps the next " \ $
 * or `; $NAME stays as it is written: its value is the job's), a
 * backslash outside quotes, and the parameter expansions the templates
 * use: ${NAME+WORDS} gives WORDS split again (NAME is taken to be set),
 * ${NAME} and $NAME outside quotes give nothing (an unknown value, such
 * as NQSV_MPIOPTS).  A # at the start of a word begins a comment.
 * Anything else the shell would treat specially (` $( ; | & < > and
 * other expansions) is refused: a line with it is not one of ours. */
#ifndef DLRUN_SHWORDS_H
#define DLRUN_SHWORDS_H

#include "util/err.h"
#include "util/strv.h"

#define SHWORDS_MAX_LINE 65536

/* Split line (borrowed) into words appended to out.  0, or -1 with err
 * (an unterminated quote or ${, a construct not understood, a line over
 * SHWORDS_MAX_LINE bytes, out of memory); out may then hold some words. */
int shwords_split(const char *line, struct strv *out, struct err *err);

#endif
