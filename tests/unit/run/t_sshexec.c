/* t_sshexec.c - one remote command over libssh against a real OpenSSH
 * server started here for each connection (sshd -i on the accepted
 * socket, a private config, keys made for the test; skipped where sshd or
 * ssh-keygen is missing): an unknown host key and a changed one refused
 * with the fingerprint, a key the server does not take refused, then a
 * command's stdin, stdout, stderr, exit code and death by a signal.  And
 * without a server: a port nobody listens on, a peer that is not SSH. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sshexec.h"
#include "tap.h"

static char dir[] = "/tmp/t_sshexec.XXXXXX";
static char path[8][300];       /* files in dir, by index below */
enum { HOSTKEY, USERKEY, OTHERKEY, AUTHKEYS, KNOWN, SSHD_CONF, SSH_CONF, LOG };

/* A TCP socket on 127.0.0.1, any port (listening when backlog > 0). */
static int local_socket(int backlog, int *port)
{
    struct sockaddr_in a = { .sin_family = AF_INET };
    socklen_t len = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 ||
        (backlog && listen(fd, backlog) < 0) ||
        getsockname(fd, (struct sockaddr *)&a, &len) < 0)
        return -1;
    *port = ntohs(a.sin_port);
    return fd;
}

/* A child that accepts on lfd forever: each connection gets reply_text
 * written and closed when it is not NULL, else an sshd -i of its own. */
static pid_t serve(int lfd, const char *reply_text)
{
    pid_t pid = fork();

    if (pid != 0)
        return pid;
    for (;;) {
        int c = accept(lfd, NULL, NULL);
        if (c < 0)
            continue;
        if (reply_text) {
            (void)write(c, reply_text, strlen(reply_text));
            close(c);
            continue;
        }
        if (fork() == 0) {
            dup2(c, 0);
            dup2(c, 1);
            execl("/usr/sbin/sshd", "/usr/sbin/sshd", "-i", "-f",
                  path[SSHD_CONF], "-E", path[LOG], (char *)NULL);
            _exit(127);
        }
        close(c);
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
    }
}

static int sh(const char *fmt, const char *a, const char *b)
{
    char cmd[1024];

    snprintf(cmd, sizeof cmd, fmt, a, b);
    return system(cmd);
}

static void write_file(const char *p, const char *text)
{
    FILE *f = fopen(p, "w");

    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* Keys and configs in dir; 0, or -1 when a tool is missing. */
static int setup(void)
{
    static const char *const names[] = { "host", "user", "other",
        "authorized_keys", "known_hosts", "sshd_config", "ssh_config", "log" };
    char conf[2048];

    if (!mkdtemp(dir) || access("/usr/sbin/sshd", X_OK) != 0 ||
        system("command -v ssh-keygen >/dev/null") != 0)
        return -1;
    for (int i = 0; i < 8; i++)
        snprintf(path[i], sizeof path[i], "%s/%s", dir, names[i]);
    if (sh("ssh-keygen -q -t ed25519 -N '' -f %s%s", path[HOSTKEY], "") ||
        sh("ssh-keygen -q -t ed25519 -N '' -f %s%s", path[USERKEY], "") ||
        sh("ssh-keygen -q -t ed25519 -N '' -f %s%s", path[OTHERKEY], "") ||
        sh("cp %s.pub %s", path[USERKEY], path[AUTHKEYS]))
        return -1;
    snprintf(conf, sizeof conf,
             "HostKey %s\nAuthorizedKeysFile %s\nStrictModes no\n"
             "PermitRootLogin yes\nUsePAM no\nPasswordAuthentication no\n"
             "KbdInteractiveAuthentication no\nPidFile none\n",
             path[HOSTKEY], path[AUTHKEYS]);
    write_file(path[SSHD_CONF], conf);
    write_file(path[SSH_CONF], "");
    return 0;
}

/* known_hosts saying host key file key (its .pub) is the server's. */
static void known(int port, const char *key)
{
    char pfx[64];

    snprintf(pfx, sizeof pfx, "[127.0.0.1]:%d", port);
    sh("printf '%%s ' '%s' >%s.tmp", pfx, path[KNOWN]);
    sh("cut -d' ' -f1,2 %s.pub >>%s.tmp", key, path[KNOWN]);
    sh("mv %s.tmp %s", path[KNOWN], path[KNOWN]);
}

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

static void with_server(void)
{
    struct err err = { "" };
    struct sshexec_opts o = { .host = "127.0.0.1", .timeout_s = 120 };
    struct sshexec *x;
    char out[256], errs[256];
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

    write_file(path[KNOWN], "");
    x = sshexec_start(&o, "true", &err);
    ok(!x && strstr(err.msg, "ssh 127.0.0.1: host key SHA256:") &&
       strstr(err.msg, "is not in") && strstr(err.msg, path[KNOWN]),
       "an unknown host key: refused with its fingerprint");
    printf("# %s\n", err.msg);

    known(port, path[OTHERKEY]);
    x = sshexec_start(&o, "true", &err);
    ok(!x && strstr(err.msg, "CHANGED") && strstr(err.msg, "ssh-keygen -R"),
       "a changed host key: refused, says how to remove the old one");

    known(port, path[HOSTKEY]);
    o.identity = path[OTHERKEY];
    x = sshexec_start(&o, "true", &err);
    ok(!x && strstr(err.msg, "no key was accepted") &&
       strstr(err.msg, "--ssh-identity"), "a key the server does not take");

    o.identity = path[USERKEY];
    x = sshexec_start(&o, "echo out; echo err >&2; read l; echo \"got $l\"; "
                      "exit 3", &err);
    ok(x != NULL, "connected, verified, authenticated, started");
    if (!x)
        printf("# %s\n", err.msg);
    ok(x && run(x, "hello\n", out, errs, sizeof out) == 0, "ran to its end");
    is_str(x ? out : NULL, "out\ngot hello\n", "stdout, stdin read");
    is_str(x ? errs : NULL, "err\n", "stderr apart");
    is_int(x ? sshexec_exit_code(x) : -2, 3, "its exit code");
    sshexec_close(x);

    x = sshexec_start(&o, "kill -TERM $$", &err);
    ok(x && run(x, NULL, out, errs, sizeof out) == 0 &&
       sshexec_exit_code(x) == 128 + SIGTERM, "killed by SIGTERM: 143");
    sshexec_close(x);

    kill(srv, SIGKILL);
    waitpid(srv, NULL, 0);
    sh("rm -rf %s%s", dir, "");
}

static void without_server(void)
{
    struct err err = { "" };
    struct sshexec_opts o = { .host = "127.0.0.1", .timeout_s = 120,
                              .config = "/dev/null",
                              .known_hosts = "/dev/null" };
    int port, fd = local_socket(0, &port);     /* bound, not listening */
    pid_t srv;

    o.port = port;
    ok(!sshexec_start(&o, "true", &err) &&
       strstr(err.msg, "ssh 127.0.0.1: cannot connect"),
       "nobody listening: cannot connect");
    close(fd);

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
    without_server();
    with_server();
    return tap_done();
}
