/* envset.h - an ordered set of environment variables, each with the
 * reason it has its value ("from"), as `dlrun env` shows them. */
#ifndef DLRUN_ENVSET_H
#define DLRUN_ENVSET_H

#include <stddef.h>

#include "util/err.h"

struct envvar {
    char *name, *value, *from;      /* owned; from NULL under no_from */
    size_t namelen;
};

struct envset {
    struct envvar *v;               /* owned, n entries */
    size_t n, cap;
    int no_from;                    /* set by the caller: keep no reasons
                                       (a launch builds ~70 variables per
                                       rank; only `dlrun env` shows why) */
};

/* Set NAME=VALUE (replacing an earlier value, keeping its position) with
 * a printf-style reason.  0 / -1 with err. */
int envset_set(struct envset *s, const char *name, const char *value,
               struct err *err, const char *from_fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Same with an int value. */
int envset_setint(struct envset *s, const char *name, long value,
                  struct err *err, const char *from_fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* The value of NAME or NULL (borrowed). */
const char *envset_get(const struct envset *s, const char *name);

void envset_free(struct envset *s);     /* frees members; s may be NULL */

/* A new environ-style array: base (borrowed, may be NULL) with the set's
 * variables replacing or appended, in one allocation.  Caller frees with
 * envset_free_envp. */
char **envset_envp(const struct envset *s, char **base);
void envset_free_envp(char **envp);

#endif
