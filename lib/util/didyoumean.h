/* didyoumean.h - a first word that is a mistyped subcommand, not a
 * program: `dlrun plna` meant `dlrun plan`, not a program called plna. */
#ifndef DLRUN_DIDYOUMEAN_H
#define DLRUN_DIDYOUMEAN_H

#include <stddef.h>

/* The subcommand of names (n, borrowed) that word (borrowed) was meant to
 * be, or NULL when word may well be the program to run: it is an option
 * (-...), has a '/', is a program execvp would find in path (a colon list,
 * NULL: "/bin:/usr/bin"), is a file in the current folder, or is not close
 * to any name (at most 1 edit for words of 3 letters or fewer, 2 for
 * longer ones).  The answer is one of names. */
const char *didyoumean_subcommand(const char *word, const char *const *names,
                                  size_t n, const char *path);

#endif
