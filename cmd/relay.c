/* relay.c - `dlrun relay`: the head's (or a parent agent's) link to one
 * remote agent.  Internal: started once per remote node by the ssh
 * launcher (lib/launchers/ssh.c) with the agent's command line.
 *
 * It runs that command over libssh, hands it DLRUN_BROKER, DLRUN_TOKEN and
 * the -x values inside the channel (never on a command line `ps` shows), passes the
 * agent's output on in whole lines, and exits with the agent's exit code.
 * Its stdin is the spawner's lifeline: EOF there (the spawner died), or
 * SIGTERM/INT/HUP, closes the agent's stdin, which the agent takes as
 * "end your ranks" (OpenSSH does not deliver signals to root's commands). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "run/envwire.h"
#include "where/hostname.h"
#include "run/proc.h"
#include "util/optparse.h"
#include "util/shquote.h"
#include "run/sshexec.h"
#include "run/sshrelay.h"

extern char **environ;
#define RELAY_FAIL 255          /* like ssh: the connection, not the agent */

static const char usage[] =
    "usage: dlrun relay [--ssh-port P] [--ssh-user U] [--ssh-identity FILE]\n"
    "                   [--ssh-known-hosts FILE] [--ssh-config FILE]\n"
    "                   [--connect-timeout S] [-v] HOST\n"
    "                   -- COMMAND...\n"
    "Internal: dlrun starts one per remote node to run its agent there.\n";

static const struct optp_opt relay_opts[] = {
    { "ssh-port", 'p', 1, 0, 0, NULL },
    { "ssh-user", 'u', 1, 0, 0, NULL },
    { "ssh-identity", 'i', 1, 0, 0, NULL },
    { "ssh-known-hosts", 'k', 1, 0, 0, NULL },
    { "connect-timeout", 't', 1, 0, 0, NULL },
    { "ssh-config", 'c', 1, 0, 0, NULL },
    { "verbose", 'v', 0, 0, 0, NULL },
    { "v", 'v', 0, 0, 0, NULL },
    { "h", 'h', 0, 0, 0, NULL },
    { "help", 'h', 0, 0, 0, NULL },
    { NULL, 0, 0, 0, 0, NULL },
};

static int relay_option(void *ctx, const struct optp_hit *h)
{
    struct sshexec_opts *o = ctx;
    char *v = h->v[0];

    switch (h->opt->code) {
    case 'p': return optp_int("--ssh-port", v, 1, 65535, &o->port);
    case 't': return optp_int("--connect-timeout", v, 1, 65535,
                              &o->timeout_s);
    case 'u': o->user = v; return 0;
    case 'i': o->identity = v; return 0;
    case 'k': o->known_hosts = v; return 0;
    case 'c': o->config = v; return 0;
    case 'v': o->verbose = 1; return 0;
    default: return fputs(usage, stdout), 1;
    }
}

/* The options, then HOST -- COMMAND...: *cmd the command's index.  0, 1
 * (help shown) or EXIT_USAGE. */
static int parse(int argc, char **argv, struct sshexec_opts *o, int *cmd)
{
    static const struct optp p = { relay_opts, "relay", 0, 0, NULL };
    struct err err = { "" };
    int first = argc, rc = optp_parse(&p, argc, argv, &first, relay_option,
                                      o);

    if (rc != 0)
        return rc;
    if (first + 2 > argc || strcmp(argv[first + 1], "--") != 0 ||
        first + 2 == argc)
        return cmd_fail(EXIT_USAGE, "relay: expected HOST -- COMMAND...");
    o->host = argv[first];
    if (hostname_check(o->host, &err) < 0)  /* before libssh sees it */
        return cmd_fail(EXIT_USAGE, "relay: %s", err.msg);
    *cmd = first + 2;
    return 0;
}

/* The secrets and the -x values (DLRUN_X_*), which go first on the
 * agent's stdin: envwire's lines ended by an empty one.  The caller frees
 * the text; NULL with err. */
static char *secrets(size_t *len, struct err *err)
{
    char *text;

    if (!getenv("DLRUN_BROKER") || !getenv("DLRUN_TOKEN")) {
        err_set(err, "DLRUN_BROKER and DLRUN_TOKEN must be set");
        return NULL;
    }
    if (!(text = envwire_encode(environ, len)))
        err_set(err, "out of memory");
    return text;
}

/* For bench/: pretend the connection took ms, then run the command here. */
static int relay_simulated(char **cmd, int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

    struct err err = { "" };
    int e;

    nanosleep(&ts, NULL);
    proc_exec(cmd, NULL, NULL, &e, &err);
    return cmd_fail(e == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC, "relay: %s",
                    err.msg);
}

int cmd_relay(int argc, char **argv)
{
    struct sshexec_opts o = { 0 };
    struct err err = { "" };
    char *command = NULL, *text = NULL;
    const char *sim = getenv("DLRUN_RELAY_SIM_MS");
    size_t len = 0;
    int at = argc, rc = parse(argc, argv, &o, &at);

    if (rc != 0)
        return rc == 1 ? EXIT_OK : rc;
    if (sim)
        return relay_simulated(argv + at, atoi(sim));
    if (!(command = shquote_join(argv + at)))
        err_set(&err, "relay: out of memory");
    /* stdin is the lifeline: its EOF ends the agent */
    if (!command || !(text = secrets(&len, &err)) ||
        (rc = sshrelay_run(&o, command, text, len, 0, &err)) < 0)
        rc = cmd_fail(RELAY_FAIL, "%s", err.msg);
    free(command);
    free(text);
    return rc;
}
