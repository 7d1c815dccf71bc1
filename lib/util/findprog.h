/* findprog.h - where execvp would find a program. */
#ifndef DLRUN_FINDPROG_H
#define DLRUN_FINDPROG_H

#include <stddef.h>

/* prog as execvp would find it in path (a colon list; NULL = execvp's
 * default, "/bin:/usr/bin"), into buf (len bytes): prog itself when it
 * has a '/', else the first DIR/prog that is a regular file we may
 * execute.  0, or -1 when there is none (or it does not fit).  Searching
 * once in dlrun spares every child the failed execs of the folders
 * before it, while dlrun waits for each child's exec. */
int find_program(const char *prog, const char *path, char *buf, size_t len);

#endif
