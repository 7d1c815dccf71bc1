/* relay.c - `dlrun relay`: the head's (or a parent agent's) link to one
 * remote agent.  Internal: started once per remote node by the ssh
 * launcher (launchers/ssh.c) with the agent's command line.
 *
 * It runs that command over libssh, hands it DLRUN_BROKER, DLRUN_TOKEN and
 * the -x values inside the channel (never on a command line `ps` shows), passes the
 * agent's output on in whole lines, and exits with the agent's exit code.
 * Its stdin is the spawner's lifeline: EOF there (the spawner died), or
 * SIGTERM/INT/HUP, closes the agent's stdin, which the agent takes as
 * "end your ranks" (OpenSSH does not deliver signals to root's commands). */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "envwire.h"
#include "hostname.h"
#include "proc.h"
#include "shquote.h"
#include "sshexec.h"
#include "writeq.h"

#define RELAY_LINE_MAX 65536

extern char **environ;
#define RELAY_FAIL 255          /* like ssh: the connection, not the agent */

struct relay_stream {
    int fd;                     /* where whole lines go: 1 or 2 */
    size_t len;
    char buf[RELAY_LINE_MAX];
};

static const char usage[] =
    "usage: dlrun relay [--ssh-port P] [--ssh-user U] [--ssh-identity FILE]\n"
    "                   [--ssh-known-hosts FILE] [--ssh-config FILE]\n"
    "                   [--connect-timeout S] HOST\n"
    "                   -- COMMAND...\n"
    "Internal: dlrun starts one per remote node to run its agent there.\n";

/* Write the complete lines held, at most PIPE_BUF bytes per write where
 * lines allow, so that relays sharing one pipe never mix within a line.
 * With force, also what follows the last newline. */
static void stream_flush(struct relay_stream *s, int force)
{
    size_t done = 0;

    while (done < s->len) {
        char *nl = memchr(s->buf + done, '\n', s->len - done);
        size_t end = nl ? (size_t)(nl - s->buf) + 1 : s->len;
        if (!nl && !force && s->len < sizeof s->buf)
            break;
        /* take further whole lines while the chunk stays within PIPE_BUF */
        while (nl && end < s->len) {
            char *next = memchr(s->buf + end, '\n', s->len - end);
            if (!next || (size_t)(next - (s->buf + done)) + 1 > PIPE_BUF)
                break;
            end = (size_t)(next - s->buf) + 1;
        }
        (void)writeq_write_all(s->fd, s->buf + done, end - done);
        done = end;
    }
    memmove(s->buf, s->buf + done, s->len - done);
    s->len -= done;
}

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

/* The secrets and the -x values (DLRUN_X_*) go first on the agent's
 * stdin, in envwire's lines ended by an empty one. */
static int send_secrets(struct sshexec *x, struct err *err)
{
    size_t len = 0;
    char *text;
    int rc;

    if (!getenv("DLRUN_BROKER") || !getenv("DLRUN_TOKEN"))
        return err_set(err, "DLRUN_BROKER and DLRUN_TOKEN must be set");
    if (!(text = envwire_encode(environ, &len)))
        return err_set(err, "out of memory");
    rc = sshexec_write(x, text, len, err);
    free(text);
    return rc;
}

/* Read what the agent sent; -1 with err when the connection failed. */
static int pump(struct sshexec *x, struct relay_stream *s, struct err *err)
{
    for (int i = 0; i < 2; i++) {
        int n;
        do {
            n = sshexec_read(x, i + 1, s[i].buf + s[i].len,
                             sizeof s[i].buf - s[i].len, err);
            if (n < 0)
                return -1;
            s[i].len += (size_t)n;
            stream_flush(&s[i], 0);
        } while (n > 0);
    }
    return 0;
}

/* Until the agent ended: pass its output on; on a stop signal or the
 * lifeline's EOF, close its stdin.  The exit code for the relay. */
static int relay_loop(struct sshexec *x, int sfd, const char *host)
{
    static struct relay_stream s[2] = { { .fd = 1 }, { .fd = 2 } };
    struct err err = { "" };
    int eof_sent = 0, code;

    while (!sshexec_done(x)) {
        struct pollfd p[3] = {
            { .fd = sshexec_fd(x), .events = POLLIN },
            { .fd = sfd, .events = POLLIN },
            { .fd = eof_sent ? -1 : 0, .events = POLLIN },
        };
        struct signalfd_siginfo si;
        char junk[256];
        if (pump(x, s, &err) < 0)
            break;
        if (sshexec_done(x) || poll(p, 3, 1000) < 0)
            continue;
        int stop = read(sfd, &si, sizeof si) == (ssize_t)sizeof si;
        if (p[2].revents && read(0, junk, sizeof junk) <= 0)
            stop = 1;
        if (stop && !eof_sent) {
            eof_sent = 1;
            sshexec_send_eof(x, &err);
        }
    }
    stream_flush(&s[0], 1);
    stream_flush(&s[1], 1);
    code = sshexec_exit_code(x);
    if (code >= 0)
        return code;
    cmd_fail(0, "ssh %s: the connection ended before the agent did%s%s", host,
             err.msg[0] ? ": " : "", err.msg);
    return RELAY_FAIL;
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
    struct sshexec *x = NULL;
    char *command = NULL;
    const char *sim = getenv("DLRUN_RELAY_SIM_MS");
    sigset_t stop;
    int rc = parse(argc, argv, &o), sfd;

    if (rc != 0)
        return rc == 1 ? EXIT_OK : rc;
    if (sim)
        return relay_simulated(argv + optind + 2, atoi(sim));
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGHUP);
    sigprocmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);
    sfd = signalfd(-1, &stop, SFD_CLOEXEC | SFD_NONBLOCK);
    command = shquote_join(argv + optind + 2);
    if (sfd < 0 || !command) {
        rc = cmd_fail(RELAY_FAIL, "relay: out of resources");
        goto out;
    }
    x = sshexec_start(&o, command, &err);
    if (!x || send_secrets(x, &err) < 0) {
        rc = cmd_fail(RELAY_FAIL, "%s", err.msg);
        goto out;
    }
    rc = relay_loop(x, sfd, o.host);
out:
    sshexec_close(x);
    free(command);
    return rc;
}
