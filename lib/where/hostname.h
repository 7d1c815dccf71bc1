/* hostname.h - what may be a host name or a login name.
 *
 * Host names reach ssh (the relay's HOST argument, libssh), srun's
 * --nodelist and the agents' command lines.  A name that starts with '-'
 * would be read as an option there, and "$(...)" or a space would mean
 * something else on a command line; neither is a host.  Every allocation
 * source checks its names (alloc_add_node) and the relay checks again
 * before it connects.
 *
 * A host name is one of:
 *   - a DNS name (RFC 952/1123): labels of letters, digits and '-', not
 *     starting or ending with '-', 1 to 63 bytes each, separated by '.',
 *     253 bytes in all, maybe one final '.'; '_' is tolerated inside a
 *     label (some clusters' /etc/hosts use it); a name of digits and dots
 *     only must be an IPv4 address;
 *   - an IPv4 address (dotted quad, 10.0.0.1);
 *   - an IPv6 address, bare or in brackets (fe80::1, [fe80::1]), maybe with
 *     a zone (fe80::1%eth0).
 * A login name (the "user" of "user@host" in a host file or -H) is 1 to
 * 32 letters, digits, '.', '_' and '-', not starting with '-'.
 */
#ifndef DLRUN_HOSTNAME_H
#define DLRUN_HOSTNAME_H

#include <stddef.h>

#include "util/err.h"

#define HOSTNAME_MAX 253
#define LOGIN_MAX 32

/* 0 when name is a host name as above; -1 with err ('host name "X": why;
 * a host name is ...') otherwise.  The caller puts where the name came
 * from in front ("-H", "FILE:LINE", "SLURM_JOB_NODELIST"). */
int hostname_check(const char *name, struct err *err);

/* 0 when login (len bytes) is a login name as above; -1 with err. */
int hostname_check_login(const char *login, size_t len, struct err *err);

/* 1 when name is an IPv6 address, bare or in brackets (with a zone or
 * not), else 0. */
int hostname_is_ipv6(const char *name);

#endif
