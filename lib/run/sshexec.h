/* sshexec.h - one remote command over SSH (libssh): connect, check the
 * host key against known_hosts, authenticate with a key (ssh-agent or
 * identity files, never a password), exec without a pty, then exchange
 * bytes with the command and learn how it ended.
 *
 * Host keys are never accepted silently: an unknown or changed key is
 * refused with the fingerprint and the way to add it.
 *
 * libssh's own log never reaches the terminal raw: each message is one
 * line said through util/say.h ("ssh HOST: libssh: ..."), and only those
 * that opts.verbose or the config's LogLevel VERBOSE/DEBUG asks for. */
#ifndef DLRUN_SSHEXEC_H
#define DLRUN_SSHEXEC_H

#include <stddef.h>

#include "util/err.h"

struct sshexec_opts {
    const char *host;           /* borrowed; required */
    const char *user;           /* NULL: ~/.ssh/config, else the local user */
    int port;                   /* 0: ~/.ssh/config, else 22 */
    const char *identity;       /* a private key file to try, or NULL */
    const char *known_hosts;    /* NULL: ~/.ssh/known_hosts (and the
                                   system's /etc/ssh/ssh_known_hosts) */
    int timeout_s;              /* connect timeout; 0: 10 s */
    const char *config;         /* an ssh_config file instead of
                                   ~/.ssh/config, or NULL */
    int verbose;                /* libssh's warnings said (util/say.h);
                                   0: only when the config's LogLevel is
                                   VERBOSE or DEBUG* (then its steps) */
};

struct sshexec;

/* Connect, verify, authenticate and start command (borrowed; run by the
 * remote user's shell).  Caller must sshexec_close().  NULL with err, whose
 * message starts "ssh HOST: ". */
struct sshexec *sshexec_start(const struct sshexec_opts *o,
                              const char *command, struct err *err);

/* The host ssh would connect to for o->host, without connecting: the
 * HostName that ~/.ssh/config (or o->config) gives an alias, else o->host
 * itself, into out (len bytes).  0 / -1 with err. */
int sshexec_host_name(const struct sshexec_opts *o, char *out, size_t len,
                      struct err *err);

/* The socket to poll for readability (owned by x). */
int sshexec_fd(const struct sshexec *x);

/* Write len bytes to the command's stdin.  0 / -1 with err. */
int sshexec_write(struct sshexec *x, const void *buf, size_t len,
                  struct err *err);

/* End the command's stdin (EOF).  0 / -1 with err. */
int sshexec_send_eof(struct sshexec *x, struct err *err);

/* Read what has arrived, without waiting: stream 1 = stdout, 2 = stderr.
 * Returns the bytes read (0: none now), -1 with err when the connection
 * failed. */
int sshexec_read(struct sshexec *x, int stream, void *buf, size_t len,
                 struct err *err);

/* Has the command ended and both streams been read to their end? */
int sshexec_done(struct sshexec *x);

/* How the command ended, as an exit code: its code, 128+N when killed by
 * signal N, -1 when the server did not say (the connection broke). */
int sshexec_exit_code(const struct sshexec *x);

/* Disconnect and free.  NULL is a no-op. */
void sshexec_close(struct sshexec *x);

#endif
