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
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "run/envwire.h"
#include "where/hostname.h"
#include "run/proc.h"
#include "util/shquote.h"
#include "run/sshexec.h"
#include "run/sshrelay.h"

extern char **environ;
#define RELAY_FAIL 255          /* like ssh: the connection, not the agent */

static const char usage[] =
    "usage: dlrun relay [--ssh-port P] [--ssh-user U] [--ssh-identity FILE]\n"
    "                   [--ssh-known-hosts FILE] [--ssh-config FILE]\n"
    "                   [--connect-timeout S] HOST\n"
    "                   -- COMMAND...\n"
    "Internal: dlrun starts one per remote node to run its agent there.\n";

static int opt_int(const char *name, const char *v, int *out)
{
    char *end = NULL;
    long n = strtol(v, &end, 10);

    if (!*v || *end || n < 1 || n > 65535)
        return cmd_fail(EXIT_USAGE, "relay: %s %s: expected 1 to 65535", name,
                        v);
    *out = (int)n;
    return 0;
}

static int parse(int argc, char **argv, struct sshexec_opts *o)
{
    struct err err = { "" };
    static const struct option lo[] = {
        { "ssh-port", required_argument, NULL, 'p' },
        { "ssh-user", required_argument, NULL, 'u' },
        { "ssh-identity", required_argument, NULL, 'i' },
        { "ssh-known-hosts", required_argument, NULL, 'k' },
        { "connect-timeout", required_argument, NULL, 't' },
        { "ssh-config", required_argument, NULL, 'c' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int c;

    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+h", lo, NULL)) != -1) {
        if (c == 'h')
            return fputs(usage, stdout), 1;
        if ((c == 'p' && opt_int("--ssh-port", optarg, &o->port)) ||
            (c == 't' && opt_int("--connect-timeout", optarg, &o->timeout_s)))
            return EXIT_USAGE;
        if (c == '?' || c == ':')
            return cmd_fail(EXIT_USAGE, "relay: bad option '%s'",
                            argv[optind - 1]);
        o->user = c == 'u' ? optarg : o->user;
        o->identity = c == 'i' ? optarg : o->identity;
        o->known_hosts = c == 'k' ? optarg : o->known_hosts;
        o->config = c == 'c' ? optarg : o->config;
    }
    if (optind + 2 > argc || strcmp(argv[optind + 1], "--") != 0 ||
        optind + 2 == argc)
        return cmd_fail(EXIT_USAGE, "relay: expected HOST -- COMMAND...");
    o->host = argv[optind];
    if (hostname_check(o->host, &err) < 0)  /* before libssh sees it */
        return cmd_fail(EXIT_USAGE, "relay: %s", err.msg);
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
    int rc = parse(argc, argv, &o);

    if (rc != 0)
        return rc == 1 ? EXIT_OK : rc;
    if (sim)
        return relay_simulated(argv + optind + 2, atoi(sim));
    if (!(command = shquote_join(argv + optind + 2)))
        err_set(&err, "relay: out of memory");
    /* stdin is the lifeline: its EOF ends the agent */
    if (!command || !(text = secrets(&len, &err)) ||
        (rc = sshrelay_run(&o, command, text, len, 0, &err)) < 0)
        rc = cmd_fail(RELAY_FAIL, "%s", err.msg);
    free(command);
    free(text);
    return rc;
}
