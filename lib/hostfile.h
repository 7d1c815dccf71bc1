/* hostfile.h - host lists given by the user: -H and --hostfile.
 *
 * -H:        "h1:4,h2:4", "node[1-4]:4", "h1,h1" (repeats count as slots).
 * hostfile:  Open MPI ("host slots=4 max_slots=8"), Horovod/DeepSpeed
 *            ("host:4", "host slots=4"), PBS style (one name per line,
 *            repeats are slots); '#' comments and blank lines.
 */
#ifndef DLRUN_HOSTFILE_H
#define DLRUN_HOSTFILE_H

#include "alloc.h"
#include "err.h"

/* Add the hosts of a -H list to a (repeated names merged).  0 / -1. */
int hosts_parse(const char *list, struct alloc *a, struct err *err);

/* Add the hosts of a host file's text to a; path is only used in
 * messages ("path:line:col: ...").  0 / -1 with err. */
int hostfile_parse(const char *text, const char *path, struct alloc *a,
                   struct err *err);

#endif
