/* sshrelay.c - see sshrelay.h. */
#include "run/sshrelay.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/evloop.h"
#include "run/lineout.h"

struct relay {
    struct sshexec *x;
    struct evloop *l;
    int lifeline, eof_sent;
    struct err why;             /* what ended the connection early */
    struct lineout out[2];      /* the command's stdout, stderr */
};

/* Pass on what arrived; stop the loop once the command ended. */
static int pump(struct relay *r, struct err *err)
{
    for (int i = 0; i < 2; i++) {
        int n;
        do {
            size_t room;
            char *p = lineout_space(&r->out[i], &room);
            if ((n = sshexec_read(r->x, i + 1, p, room, err)) < 0)
                return -1;
            r->out[i].len += (size_t)n;
            lineout_flush(&r->out[i], 0);
        } while (n > 0);
    }
    if (sshexec_done(r->x))
        evloop_stop(r->l, 0);
    return 0;
}

static int on_ssh(void *ctx, int fd, short revents, struct err *err)
{
    (void)fd, (void)revents;
    return pump(ctx, err);
}

/* Also once a second: libssh may hold what it read already. */
static int on_tick(void *ctx, struct err *err)
{
    return pump(ctx, err);
}

/* The command's stdin ends once: its signal to end its ranks. */
static void send_eof(struct relay *r)
{
    if (!r->eof_sent) {
        r->eof_sent = 1;
        sshexec_send_eof(r->x, &r->why);
        evloop_del_fd(r->l, r->lifeline);
    }
}

static int on_signal(void *ctx, int sig, struct err *err)
{
    (void)sig, (void)err;
    send_eof(ctx);
    return 0;
}

static int on_lifeline(void *ctx, int fd, short revents, struct err *err)
{
    char junk[256];

    (void)revents, (void)err;
    if (read(fd, junk, sizeof junk) <= 0)
        send_eof(ctx);
    return 0;
}

/* The loop's watches: the ssh socket, a tick, signals, the lifeline. */
static int watch(struct relay *r, struct err *err)
{
    static const int stop[] = { SIGTERM, SIGINT, SIGHUP, 0 };

    if (!(r->l = evloop_create(err)) ||
        evloop_add_signals(r->l, stop, on_signal, r, err) < 0 ||
        !evloop_add_timer(r->l, 0, 1000, on_tick, r, err))
        return -1;
    return 0;
}

/* Relay until the command ended; its exit code, or -1 with err. */
static int relay(struct relay *r, const char *host, struct err *err)
{
    int code;

    if (evloop_add_fd(r->l, sshexec_fd(r->x), on_ssh, r, err) < 0 ||
        (r->lifeline >= 0 &&
         evloop_add_fd(r->l, r->lifeline, on_lifeline, r, err) < 0))
        return -1;
    evloop_run(r->l, &r->why);
    lineout_flush(&r->out[0], 1);
    lineout_flush(&r->out[1], 1);
    if ((code = sshexec_exit_code(r->x)) >= 0)
        return code;
    return err_set(err, "ssh %s: the connection ended before the agent did%s%s",
                   host, r->why.msg[0] ? ": " : "", r->why.msg);
}

int sshrelay_run(const struct sshexec_opts *o, const char *command,
                 const char *input, size_t len, int lifeline, struct err *err)
{
    struct relay *r = calloc(1, sizeof *r);
    int rc = -1;

    if (!r)
        return err_set(err, "out of memory");
    r->lifeline = lifeline;
    r->out[0].fd = 1;
    r->out[1].fd = 2;
    signal(SIGPIPE, SIG_IGN);
    if (watch(r, err) < 0)
        goto out;
    if (!(r->x = sshexec_start(o, command, err)) ||
        sshexec_write(r->x, input, len, err) < 0)
        goto out;
    rc = relay(r, o->host, err);
out:
    sshexec_close(r->x);
    evloop_destroy(r->l);
    lineout_free(&r->out[0]);
    lineout_free(&r->out[1]);
    free(r);
    return rc;
}
