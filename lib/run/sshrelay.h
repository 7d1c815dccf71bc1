/* sshrelay.h - the work of `dlrun relay`: one command on a remote host
 * over ssh (sshexec.h), driven by an evloop until it ends.
 *
 * What the command writes goes on to this process's stdout and stderr in
 * whole lines (lineout.h).  The stop signals (SIGTERM, SIGINT, SIGHUP) and
 * EOF on the lifeline fd (the spawner died) close the command's stdin,
 * which a dlrun agent takes as "end your ranks": OpenSSH does not deliver
 * signals to root's commands. */
#ifndef DLRUN_SSHRELAY_H
#define DLRUN_SSHRELAY_H

#include <stddef.h>

#include "util/err.h"
#include "run/sshexec.h"

/* Block the stop signals (they are read in the loop: one that comes while
 * connecting must not kill the relay), ignore SIGPIPE, connect and start
 * command (borrowed) as sshexec_start does, write the len bytes of input
 * (borrowed) to its stdin, then relay until it ended.  Its exit code
 * (sshexec_exit_code); -1 with err when the connection failed or ended
 * before the command did. */
int sshrelay_run(const struct sshexec_opts *o, const char *command,
                 const char *input, size_t len, int lifeline, struct err *err);

#endif
