/* hostfile.h - host lists given by the user: -H and --hostfile.
 *
 * -H:        "h1:4,h2:4", "node[1-4]:4", "h1,h1" (repeats add slots),
 *            "alice@h1:4" (log in as alice), "[fe80::1]:4" (an IPv6
 *            address takes brackets to have slots; bare, it has one).
 * hostfile:  Open MPI / PRRTE ("[user@]host slots=4 max_slots=8",
 *            "slots = 4", username=NAME), DeepSpeed ("host slots=4"),
 *            Horovod ("host:4"), PBS (one name per line, repeats are
 *            slots); '#' and '//' comments to the end of the line, block
 *            comments between '/' '*' and '*' '/'.
 *            max_slots alone gives that many slots; slots above max_slots
 *            is refused; a host given slots on two lines must be given the
 *            same count both times (Open MPI would add them up, changing
 *            the world size quietly), and is then counted once; a host
 *            cannot have two logins.  Every name is checked (hostname.h).
 */
#ifndef DLRUN_HOSTFILE_H
#define DLRUN_HOSTFILE_H

#include "where/alloc.h"
#include "util/err.h"

/* Add the hosts of a -H list to a (repeated names merged).  0 / -1. */
int hosts_parse(const char *list, struct alloc *a, struct err *err);

/* Add the hosts of a host file's text to a; path is only used in
 * messages ("path:line:col: ...").  0 / -1 with err. */
int hostfile_parse(const char *text, const char *path, struct alloc *a,
                   struct err *err);

#endif
