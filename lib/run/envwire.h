/* envwire.h - how secrets and -x values travel between dlrun processes,
 * never on a command line (`ps` shows every argv to every user of a node).
 *
 * Agents get DLRUN_BROKER and DLRUN_TOKEN this way and the -x values in
 * the head's plan (lib/place/planwire.h, from the broker).
 *
 * In an environment (srun's, a local agent's, srun --mpi=pmix's tasks'):
 * each -x value as DLRUN_X_NAME=VALUE (--mpi=srun's tasks, which have no
 * broker), beside DLRUN_BROKER and DLRUN_TOKEN.  The prefix keeps the value from acting on the dlrun
 * processes in between (-x LD_PRELOAD=..., -x PATH=...); the receiving
 * dlrun takes the DLRUN_X_ variables out of its environment and gives them
 * to its ranks as -x NAME=VALUE.  /proc/PID/environ is readable by the
 * process's owner and root only.
 *
 * On a stream (the agent's stdin inside the ssh channel): those variables
 * as lines, "\" and newline escaped as "\\" and "\n", ended by an empty
 * line.  Lines without a backslash are the older DLRUN_BROKER/DLRUN_TOKEN
 * format unchanged. */
#ifndef DLRUN_ENVWIRE_H
#define DLRUN_ENVWIRE_H

#include <stddef.h>

#include "util/envset.h"
#include "util/err.h"
#include "util/strv.h"

#define ENVWIRE_PREFIX "DLRUN_X_"
/* One entry at most (Linux's limit on one environment string, so a larger
 * one could not have been passed on anyway), and all entries together. */
#define ENVWIRE_ENTRY_MAX (128 * 1024)
#define ENVWIRE_TOTAL_MAX (1024 * 1024)

/* Does the variable travel to agents (DLRUN_BROKER, DLRUN_TOKEN, DLRUN_X_*)?
 * entry: "NAME=VALUE" or a name of namelen bytes. */
int envwire_travels(const char *entry, size_t namelen);

/* For one -x entry (borrowed): "NAME=VALUE", or "NAME" with the value NAME
 * has in envp (borrowed; NULL-terminated), as DLRUN_X_NAME=VALUE in out.
 * Returns 1 when set, 0 when NAME has no value here (the receiver reads
 * its own: pass "-xNAME" on), -1 with err. */
int envwire_put_export(struct envset *out, const char *entry, char **envp,
                       struct err *err);

/* Take every DLRUN_X_NAME=VALUE out of this process's environment
 * (unsetenv: the ranks never see them) and append "NAME=VALUE" to the -x
 * list *exports (realloc'd, NULL-terminated, *n entries; its strings are
 * borrowed, these from owned, which the caller frees with strv_free after
 * the list).  0 / -1 with err. */
int envwire_take_exports(char ***exports, int *n, struct strv *owned,
                         struct err *err);

/* The stream form of the entries of envp (borrowed) that travel, ended by
 * the empty line; *len its length.  Caller frees.  NULL when out of
 * memory. */
char *envwire_encode(char **envp, size_t *len);

/* A stream decoder fed in pieces. */
struct envwire_dec {
    struct strv out;            /* owned: the "NAME=VALUE" entries so far */
    char *buf;                  /* owned: the entry being read */
    size_t len, cap, total;
    int esc;                    /* the last byte was a backslash */
};

/* Feed len bytes; *used says how many were taken (all but what follows
 * the end).  1: the end (empty line) was reached, d->out holds every
 * entry; 0: more is needed; -1 with err (bad escape, NUL, an entry without
 * NAME=, an entry or the whole over its limit).  Free with
 * envwire_dec_free. */
int envwire_feed(struct envwire_dec *d, const void *data, size_t len,
                 size_t *used, struct err *err);
void envwire_dec_free(struct envwire_dec *d);

/* Read one stream from fd a byte at a time (nothing after its end is
 * taken: the rest of fd is someone else's) into out (caller frees).
 * 0 / -1 with err (EOF before the end too). */
int envwire_read(int fd, struct strv *out, struct err *err);

#endif
