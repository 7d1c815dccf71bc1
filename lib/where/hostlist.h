/* hostlist.h - Slurm hostlists ("rack[1-2]-n[01-04],x[5]") and
 * SLURM_TASKS_PER_NODE strings ("2(x3),1").
 *
 * The grammar and the output are Slurm's own (src/common/hostlist.c, checked
 * against `scontrol show hostnames` / `scontrol show hostlist` of Slurm
 * 22.05): on every input Slurm accepts and whose brackets are balanced, the
 * names, their order and the folded string are the same as Slurm's.  Where
 * Slurm guesses or misbehaves we refuse instead, with a message:
 *   - unbalanced or nested brackets ("n[1-", "a]", "a[1[2]"): Slurm invents
 *     names such as "n]" or "a[12";
 *   - control characters other than tab and newline, which separate names
 *     (Slurm 22.05 kept a newline inside a name, "a\nb"), and a newline
 *     inside brackets;
 *   - numbers of 2^64-1 or more: Slurm wraps them or drops the hosts;
 *   - an error in a bracket set that is neither of the last two: Slurm
 *     skips that part (at times with a message) and prints the rest;
 *   - more than HOSTLIST_MAX_NAMES names or HOSTLIST_MAX_BYTES of text.
 * Text after the last bracket set ("tux[0-2]-ib" is tux0-ib,tux1-ib,tux2-ib)
 * is read as Slurm 23.11 and later do: every name ends with it (22.05
 * refused it).  A refusal's suggested fix ("write n[1-3]") is itself valid
 * input.  Slurm's odd but harmless readings are kept
 * (hostlist.c says which): "n[1, 3]" is n1,n03, and with three bracket sets
 * the middle one turns slowest.
 */
#ifndef DLRUN_HOSTLIST_H
#define DLRUN_HOSTLIST_H

#include <stddef.h>

#include "util/err.h"

/* Slurm's limits (MAX_RANGE, MAX_PREFIX_CNT in hostlist.c): hosts in one
 * "lo-hi", and hosts named by one bracket set that is not the last one. */
#define HOSTLIST_MAX_RANGE 65536
#define HOSTLIST_MAX_PREFIX 65536
/* Ours, so that no input allocates without bound (several bracket sets
 * multiply: "a[0-65535]b[0-65535]" would be 2^32 names): at most this many
 * names, and this many bytes of names, from one expansion. */
#define HOSTLIST_MAX_NAMES 1048576
#define HOSTLIST_MAX_BYTES (64 * 1024 * 1024)
/* Tasks (or CPUs) on one node: Slurm keeps them in 16 bits. */
#define TASKS_PER_NODE_MAX 65535

/* Expand a Slurm hostlist ("rack[1-2]-n[01-04],tux[0-2],x[5]") into names,
 * order and duplicates kept, exactly as `scontrol show hostnames` does.
 * Items are separated by commas, spaces, tabs or newlines outside brackets;
 * "" gives
 * no names.  On success *hosts (caller frees with
 * hostlist_free) and *n are set, returns 0.  On bad input returns -1 with
 * err naming the offending part and how to fix it; *hosts is NULL, *n 0. */
int hostlist_expand(const char *spec, char ***hosts, size_t *n,
                    struct err *err);

/* Free what hostlist_expand returned; NULL is a no-op. */
void hostlist_free(char **hosts, size_t n);

/* Fold names into the compressed form `scontrol show hostlist` prints for
 * them ("n1,n2,n3,m" -> "n[1-3],m"; order and duplicates kept, no sorting).
 * No names give "".  Returns a malloc'd string (caller frees) or NULL with
 * err set: a name that is empty, holds a bracket, comma or whitespace, or
 * ends in a number of 2^64-1 or more cannot be written as a hostlist. */
char *hostlist_fold(char *const *hosts, size_t n, struct err *err);

/* Parse SLURM_TASKS_PER_NODE-style "2(x3),1" (also SLURM_JOB_CPUS_PER_NODE)
 * into one count per node: {2, 2, 2, 1}; *counts is malloc'd (caller frees).
 * Counts are 1..TASKS_PER_NODE_MAX (Slurm never lists a node with no
 * tasks, so 0 is refused), at most HOSTLIST_MAX_NAMES nodes, and the sum
 * fits in an int.  Returns 0, or -1 with err set and *counts NULL, *n 0. */
int tasks_per_node_parse(const char *spec, int **counts, size_t *n,
                         struct err *err);

#endif
