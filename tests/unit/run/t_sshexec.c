/* t_sshexec.c - one remote command over libssh against a real OpenSSH
 * server started here for each connection (sshd -i on the accepted
 * socket, a private config, keys made for the test; skipped where sshd or
 * ssh-keygen is missing): an unknown host key and a changed one refused
 * with the fingerprint, a key the server does not take refused, then a
 * command's stdin, stdout, stderr, exit code and death by a signal.  And
 * without a server: a port nobody listens on, a peer that is not SSH. */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sshd.h"
#include "run/sshexec.h"
#include "util/say.h"
#include "tap.h"

/* Run command to its end: stdin given, both streams collected. */
static int run(struct sshexec *x, const char *in, char *out, char *errs,
               size_t len)
{
    struct err err = { "" };
    size_t o = 0, e = 0;
    int rc = 0;

    if (in && (sshexec_write(x, in, strlen(in), &err) < 0 ||
               sshexec_send_eof(x, &err) < 0))
        return -1;
    while (rc >= 0 && !sshexec_done(x)) {
        struct pollfd p = { .fd = sshexec_fd(x), .events = POLLIN };
        int n1, n2;
        poll(&p, 1, 100);
        n1 = sshexec_read(x, 1, out + o, len - 1 - o, &err);
        n2 = sshexec_read(x, 2, errs + e, len - 1 - e, &err);
        if (n1 < 0 || n2 < 0)
            rc = -1;
        o += n1 > 0 ? (size_t)n1 : 0;
        e += n2 > 0 ? (size_t)n2 : 0;
    }
    out[o] = errs[e] = '\0';
    return rc;
}

/* Host keys unknown and changed, and a key the server does not take. */
static void refusals(struct sshexec_opts *o)
{
    struct err err = { "" };
    struct sshexec *x;
    char hint[400];

    write_file(path[KNOWN], "");
    x = sshexec_start(o, "true", &err);
    ok(!x && strstr(err.msg, "ssh 127.0.0.1: host key SHA256:") &&
       strstr(err.msg, "is not in") && strstr(err.msg, path[KNOWN]),
       "an unknown host key: refused with its fingerprint");
    printf("# %s\n", err.msg);
    snprintf(hint, sizeof hint, "ssh-keyscan -p %d 127.0.0.1 >> %s", o->port,
             path[KNOWN]);
    ok(strstr(err.msg, hint) != NULL, "  the way to add it names the port");

    known(o->port, path[OTHERKEY]);
    x = sshexec_start(o, "true", &err);
    snprintf(hint, sizeof hint, "ssh-keygen -R '[127.0.0.1]:%d'", o->port);
    ok(!x && strstr(err.msg, "CHANGED") && strstr(err.msg, hint),
       "a changed host key: refused, says how to remove the old one");

    known(o->port, path[HOSTKEY]);
    o->identity = path[OTHERKEY];
    x = sshexec_start(o, "true", &err);
    ok(!x && strstr(err.msg, "no key was accepted") &&
       strstr(err.msg, "--ssh-identity"), "a key the server does not take");
    o->identity = path[USERKEY];
}

/* Commands run: the streams, the exit code, a death by a signal. */
static void commands(const struct sshexec_opts *o)
{
    struct err err = { "" };
    struct sshexec *x;
    char out[256], errs[256];

    x = sshexec_start(o, "echo out; echo err >&2; read l; echo \"got $l\"; "
                      "exit 3", &err);
    ok(x != NULL, "connected, verified, authenticated, started");
    if (!x)
        printf("# %s\n", err.msg);
    ok(x && run(x, "hello\n", out, errs, sizeof out) == 0, "ran to its end");
    is_str(x ? out : NULL, "out\ngot hello\n", "stdout, stdin read");
    is_str(x ? errs : NULL, "err\n", "stderr apart");
    is_int(x ? sshexec_exit_code(x) : -2, 3, "its exit code");
    sshexec_close(x);

    x = sshexec_start(o, "kill -TERM $$", &err);
    ok(x && run(x, NULL, out, errs, sizeof out) == 0 &&
       sshexec_exit_code(x) == 128 + SIGTERM, "killed by SIGTERM: 143");
    sshexec_close(x);
}

/* An alias of ssh_config: connected to its HostName, whose key
 * known_hosts holds (not the alias's). */
static void through_alias(struct sshexec_opts *o)
{
    struct err err = { "" };
    struct sshexec *x;
    char out[256], errs[256];

    write_file(path[SSH_CONF], "Host srv-alias\n  HostName 127.0.0.1\n");
    o->host = "srv-alias";
    x = sshexec_start(o, "echo via alias", &err);
    if (!x)
        printf("# %s\n", err.msg);
    ok(x && run(x, NULL, out, errs, sizeof out) == 0 &&
       strcmp(out, "via alias\n") == 0 && sshexec_exit_code(x) == 0,
       "an ssh_config alias: connected to its HostName, host key checked there");
    sshexec_close(x);
    o->host = "127.0.0.1";
}

/* The lines said through util/say.h, kept. */
struct said {
    int n, bad;                 /* lines; lines not one whole "ssh" line */
};

static void keep_line(void *ctx, const char *line)
{
    struct said *k = ctx;

    k->n++;
    if (strncmp(line, "ssh 127.0.0.1: libssh: ", 23) != 0 ||
        strchr(line, '\n'))
        k->bad++;
}

/* One command with config text: what libssh said through say(), and
 * how many bytes reached stderr meanwhile. */
static int logged(struct sshexec_opts *o, const char *config, struct said *k)
{
    char tmp[] = "/tmp/t_sshexec_err.XXXXXX", out[64], errs[64];
    struct err err = { "" };
    struct sshexec *x;
    int fd = mkstemp(tmp), saved = dup(2);
    say_sink_fn old = say_set_sink(keep_line, k);
    off_t size;

    write_file(path[SSH_CONF], config);
    memset(k, 0, sizeof *k);
    fflush(stderr);
    dup2(fd, 2);
    x = sshexec_start(o, "echo hi", &err);
    if (x)
        run(x, NULL, out, errs, sizeof out);
    sshexec_close(x);
    dup2(saved, 2);
    close(saved);
    say_set_sink(old, NULL);
    size = lseek(fd, 0, SEEK_END);
    close(fd);
    unlink(tmp);
    if (!x)
        printf("# %s\n", err.msg);
    return x ? (int)size : -1;
}

/* LogLevel ERROR, which users add to silence OpenSSH and libssh reads
 * as its own level: nothing on stderr, nothing said; -v (verbose) or
 * LogLevel DEBUG: libssh's messages as whole lines through say(). */
static void log_lines(struct sshexec_opts *o)
{
    struct said k;

    is_int(logged(o, "Host *\n  LogLevel ERROR\n", &k), 0,
           "LogLevel ERROR: libssh writes nothing on stderr");
    is_int(k.n, 0, "  and dlrun says nothing of it");
    o->verbose = 1;
    is_int(logged(o, "Host *\n  LogLevel ERROR\n", &k), 0,
           "verbose: still nothing raw on stderr");
    is_int(k.bad, 0, "  what it says is whole lines 'ssh HOST: libssh: ...'");
    o->verbose = 0;
    is_int(logged(o, "Host *\n  LogLevel DEBUG\n", &k), 0,
           "LogLevel DEBUG: nothing raw on stderr");
    ok(k.n > 0 && k.bad == 0, "  libssh's steps said, each a whole line");
    write_file(path[SSH_CONF], "");
}

/* The host ssh would connect to, read from a config, nothing connected. */
static void host_names(void)
{
    static const char text[] = "Host gpu1 gpu2\n  HostName 10.1.0.7\n"
        "Host *.ib\n  HostName %h.example.org\nHost plain\n  User someone\n";
    char conf[] = "/tmp/t_sshexec_conf.XXXXXX", name[256];
    struct sshexec_opts o = { .config = conf };
    struct err err = { "" };
    int fd = mkstemp(conf);

    if (fd < 0 || write(fd, text, sizeof text - 1) != (ssize_t)sizeof text - 1)
        printf("# cannot write %s\n", conf);
    close(fd);
    o.host = "gpu2";
    ok(sshexec_host_name(&o, name, sizeof name, &err) == 0 &&
       strcmp(name, "10.1.0.7") == 0, "an alias: its HostName");
    o.host = "n1.ib";
    ok(sshexec_host_name(&o, name, sizeof name, &err) == 0 &&
       strcmp(name, "n1.ib.example.org") == 0, "HostName %%h: expanded");
    o.host = "plain";
    ok(sshexec_host_name(&o, name, sizeof name, &err) == 0 &&
       strcmp(name, "plain") == 0, "a Host without HostName: the name itself");
    o.host = "elsewhere";
    ok(sshexec_host_name(&o, name, 4, &err) < 0 &&
       strstr(err.msg, "ssh elsewhere: HostName elsewhere... is too long"),
       "no room for the name: refused, named");
    unlink(conf);
}

static void with_server(void)
{
    struct sshexec_opts o = { .host = "127.0.0.1", .timeout_s = 120 };
    int port, lfd = local_socket(16, &port);
    pid_t srv;

    if (lfd < 0 || setup() < 0) {
        ok(1, "# skip: no sshd or ssh-keygen");
        return;
    }
    srv = serve(lfd, NULL);
    close(lfd);
    o.port = port;
    o.identity = path[USERKEY];
    o.known_hosts = path[KNOWN];
    o.config = path[SSH_CONF];
    refusals(&o);
    commands(&o);
    through_alias(&o);
    log_lines(&o);
    kill(srv, SIGKILL);
    waitpid(srv, NULL, 0);
    sh("rm -rf %s%s", dir, "");
}

static void without_server(void)
{
    struct err err = { "" };
    char want[128];
    struct sshexec_opts o = { .host = "127.0.0.1", .timeout_s = 120,
                              .config = "/dev/null",
                              .known_hosts = "/dev/null" };
    int port, fd = local_socket(0, &port);     /* bound, not listening */
    pid_t srv;

    o.port = port;
    ok(!sshexec_start(&o, "true", &err) &&
       strstr(err.msg, "ssh 127.0.0.1: cannot connect"),
       "nobody listening: cannot connect");
    snprintf(want, sizeof want, "cannot connect to 127.0.0.1 port %d (after "
             "0.", port);
    ok(strstr(err.msg, want) && strstr(err.msg, "--connect-timeout 120): "
                                       "Connection refused"),
       "  the address and port tried, how long, the timeout, the reason");
    printf("# %s\n", err.msg);
    close(fd);

    fd = local_socket(4, &port);
    srv = serve(fd, "");        /* accepts, then closes at once */
    close(fd);
    o.port = port;
    o.host = "localhost";
    ok(!sshexec_start(&o, "true", &err) &&
       strstr(err.msg, "ssh localhost: cannot connect to localhost at ") &&
       !strstr(err.msg, "Socket error: disconnected"),
       "closed at once: the name, its address, and no 'Socket error: disconnected'");
    printf("# %s\n", err.msg);
    o.host = "127.0.0.1";
    kill(srv, SIGKILL);
    waitpid(srv, NULL, 0);

    fd = local_socket(4, &port);
    srv = serve(fd, "HTTP/1.0 400 Bad Request\r\n\r\n");
    close(fd);
    o.port = port;
    ok(!sshexec_start(&o, "true", &err) && strstr(err.msg, "ssh 127.0.0.1: "),
       "a peer that is not SSH: refused, the host named");
    printf("# %s\n", err.msg);
    kill(srv, SIGKILL);
    waitpid(srv, NULL, 0);
    sshexec_close(NULL);
    ok(1, "sshexec_close(NULL)");
}

int main(void)
{
    alarm(600);     /* hang guard */
    signal(SIGPIPE, SIG_IGN);
    host_names();
    without_server();
    with_server();
    return tap_done();
}
