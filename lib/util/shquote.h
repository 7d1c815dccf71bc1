/* shquote.h - values made safe for a POSIX shell script.
 *
 * A job script is read by sh (and its directive lines by sbatch/qsub/bsub),
 * so every value dlrun puts there either passes one of these checks or is
 * quoted here.  Nothing is ever executed to decide. */
#ifndef DLRUN_SHQUOTE_H
#define DLRUN_SHQUOTE_H

#include <stddef.h>

/* s as one shell word: bare when it has only characters no shell treats
 * specially, else in single quotes with each ' written as '\''.  Returns
 * a malloc'd string (caller frees) or NULL when out of memory.  The empty
 * string gives ''.  Newlines survive quoting, but callers that write a
 * line-oriented file refuse them first (shquote_has_newline). */
char *shquote(const char *s);

/* argv as one command line for a POSIX shell (sshd runs the remote
 * agent's this way): each word as shquote() makes it, separated by
 * spaces.  Caller frees; NULL when out of memory. */
char *shquote_join(char *const *argv);

/* 1 when s needs no quoting in a shell (non-empty, only letters, digits
 * and -_./:@%+=,). */
int shquote_is_bare(const char *s);

/* 1 when s holds a control character other than a tab (a newline, a
 * carriage return, an escape...): it would end or garble a line of the
 * script or of a directive. */
int shquote_has_control(const char *s);

#endif
