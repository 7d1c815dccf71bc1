/* sshd.h - a real OpenSSH server for the tests of the ssh code (sshexec,
 * sshrelay): keys and configs made in a private folder, and a child that
 * accepts on a local port and runs `sshd -i` for each connection.  setup()
 * is -1 where sshd or ssh-keygen is missing: the test skips.  Header only. */
#ifndef DLRUN_SSHD_H
#define DLRUN_SSHD_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[] = "/tmp/t_sshd.XXXXXX";
static char path[8][300];       /* files in dir, by index below */
enum { HOSTKEY, USERKEY, OTHERKEY, AUTHKEYS, KNOWN, SSHD_CONF, SSH_CONF, LOG };

/* A TCP socket on 127.0.0.1, any port (listening when backlog > 0). */
static inline int local_socket(int backlog, int *port)
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
static inline pid_t serve(int lfd, const char *reply_text)
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

static inline int sh(const char *fmt, const char *a, const char *b)
{
    char cmd[1024];

    snprintf(cmd, sizeof cmd, fmt, a, b);
    return system(cmd);
}

static inline void write_file(const char *p, const char *text)
{
    FILE *f = fopen(p, "w");

    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* Keys and configs in dir; 0, or -1 when a tool is missing. */
static inline int setup(void)
{
    static const char *const names[] = { "host", "user", "other",
        "authorized_keys", "known_hosts", "sshd_config", "ssh_config", "log" };
    char conf[2048];

    if (!mkdtemp(dir) || access("/usr/sbin/sshd", X_OK) != 0 ||
        system("command -v ssh-keygen >/dev/null") != 0)
        return -1;
    /* sshd run by root refuses to start without its privilege separation
     * folder, which only Debian's init script or systemd makes: a machine
     * that just installed openssh-server without starting it has none. */
    if (geteuid() == 0 && mkdir("/run/sshd", 0755) != 0 && errno != EEXIST)
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
static inline void known(int port, const char *key)
{
    char pfx[64];

    snprintf(pfx, sizeof pfx, "[127.0.0.1]:%d", port);
    sh("printf '%%s ' '%s' >%s.tmp", pfx, path[KNOWN]);
    sh("cut -d' ' -f1,2 %s.pub >>%s.tmp", key, path[KNOWN]);
    sh("mv %s.tmp %s", path[KNOWN], path[KNOWN]);
}

#endif
