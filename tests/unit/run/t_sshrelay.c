/* t_sshrelay.c - `dlrun relay`'s work against a real OpenSSH server
 * (tests/unit/sshd.h; skipped without sshd): in a child whose stdout and
 * stderr are pipes, the input reaches the command's stdin first, its
 * output comes back in whole lines on the right stream, its exit code is
 * the result; EOF on the lifeline, or SIGTERM, closes the command's stdin
 * (and nothing else: the command ends by itself); a connection that fails
 * is -1 with the host named. */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sshd.h"
#include "run/sshrelay.h"
#include "tap.h"

struct child {
    pid_t pid;
    int out, err;               /* the relay's stdout and stderr */
    int life;                   /* the lifeline's write end */
    char o[4096], e[4096];
    int code;                   /* exit status of the child */
};

/* Start sshrelay_run in a child (it blocks signals, writes to fds 1, 2). */
static void start(struct child *c, const struct sshexec_opts *o,
                  const char *command, const char *input)
{
    int po[2], pe[2], pl[2];
    struct err err = { "" };

    if (pipe(po) < 0 || pipe(pe) < 0 || pipe(pl) < 0)
        return;
    c->pid = fork();
    if (c->pid == 0) {
        int rc;
        dup2(po[1], 1);
        dup2(pe[1], 2);
        close(pl[1]);
        rc = sshrelay_run(o, command, input, strlen(input), pl[0], &err);
        if (rc < 0)
            fprintf(stderr, "relay failed: %s\n", err.msg);
        _exit(rc < 0 ? 255 : rc);
    }
    close(po[1]), close(pe[1]), close(pl[0]);
    c->out = po[0], c->err = pe[0], c->life = pl[1];
}

/* Read both streams to their end (the child exits), then reap it. */
static void finish(struct child *c)
{
    size_t no = 0, ne = 0;
    struct pollfd p[2] = { { .fd = c->out, .events = POLLIN },
                           { .fd = c->err, .events = POLLIN } };
    int st = 0;

    while (p[0].fd >= 0 || p[1].fd >= 0) {
        if (poll(p, 2, -1) < 0)
            break;
        for (int i = 0; i < 2; i++) {
            char *b = i ? c->e : c->o;
            size_t *n = i ? &ne : &no;
            ssize_t r;
            if (!p[i].revents)
                continue;
            r = read(p[i].fd, b + *n, sizeof c->o - 1 - *n);
            if (r <= 0)
                p[i].fd = -1;
            else
                *n += (size_t)r;
        }
    }
    c->o[no] = c->e[ne] = '\0';
    close(c->out), close(c->err);
    if (c->life >= 0)
        close(c->life);
    waitpid(c->pid, &st, 0);
    c->code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Wait until the command runs (it printed its first line), so that what
 * the test does next reaches a running relay. */
static void wait_line(struct child *c)
{
    struct pollfd p = { .fd = c->out, .events = POLLIN };
    ssize_t r;

    if (poll(&p, 1, 60000) > 0 && (r = read(c->out, c->o, sizeof c->o - 1)) > 0)
        c->o[r] = '\0';
}

static void relayed(const struct sshexec_opts *o)
{
    struct child c = { 0 };

    start(&c, o, "read l; echo \"got $l\"; echo err >&2; cat; echo end; exit 3",
          "hello\n");
    close(c.life);                  /* the spawner is gone: stdin ends */
    c.life = -1;
    finish(&c);
    is_str(c.o, "got hello\nend\n", "input first, then the lifeline's EOF "
           "ended the command's stdin");
    is_str(c.e, "err\n", "stderr apart");
    is_int(c.code, 3, "the command's exit code");

    c = (struct child){ 0 };
    start(&c, o, "echo up; cat; echo bye", "");
    wait_line(&c);
    is_str(c.o, "up\n", "started");
    kill(c.pid, SIGTERM);           /* the lifeline stays open */
    finish(&c);
    is_str(c.o, "bye\n", "SIGTERM: stdin closed, the command ended by itself");
    is_int(c.code, 0, "  with its own code, not the signal's");
}

static void failed(void)
{
    struct sshexec_opts o = { .host = "127.0.0.1", .timeout_s = 120,
                              .config = "/dev/null", .known_hosts = "/dev/null" };
    struct child c = { 0 };
    int port, fd = local_socket(0, &port);     /* bound, not listening */

    o.port = port;
    start(&c, &o, "true", "");
    finish(&c);
    close(fd);
    is_int(c.code, 255, "no server: -1");
    ok(strstr(c.e, "relay failed: ssh 127.0.0.1: cannot connect") != NULL,
       "  the host named");
}

int main(void)
{
    struct sshexec_opts o = { .host = "127.0.0.1", .timeout_s = 120 };
    int port, lfd;
    pid_t srv;

    alarm(600);     /* hang guard */
    signal(SIGPIPE, SIG_IGN);
    failed();
    lfd = local_socket(16, &port);
    if (lfd < 0 || setup() < 0) {
        ok(1, "# skip: no sshd or ssh-keygen");
        return tap_done();
    }
    srv = serve(lfd, NULL);
    close(lfd);
    known(port, path[HOSTKEY]);
    o.port = port;
    o.identity = path[USERKEY];
    o.known_hosts = path[KNOWN];
    o.config = path[SSH_CONF];
    relayed(&o);
    kill(srv, SIGKILL);
    waitpid(srv, NULL, 0);
    sh("rm -rf %s%s", dir, "");
    return tap_done();
}
