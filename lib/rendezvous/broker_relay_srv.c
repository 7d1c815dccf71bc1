/* broker_relay_srv.c - see broker_relay_srv.h. */
#include "rendezvous/broker_relay_srv.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "rendezvous/broker_relay.h"
#include "rendezvous/client.h"
#include "util/clock.h"
#include "util/privdirs.h"
#include "util/tmpdir.h"

#define MAX_OUT (64u << 20)     /* answers queued for one peer, requests
                                   for the parent */
#define UP_HIGH (8u << 20)      /* queued for the parent: no peer is read
                                   until it is down to UP_LOW, so no rank
                                   can fill the parent's queue (its
                                   overflow would end every rank's job) */
#define UP_LOW (UP_HIGH / 2)
#define CONNECT_MS 30000
#define MAX_PEERS 4096
#define FD_RESERVE 64           /* fds kept for the rest of the agent */

struct rconn {
    struct relay_srv *s;
    int fd, dead, engine_gone;
    int paused;                 /* out of the epoll set: UP_HIGH */
    struct br_peer *p;          /* NULL for the parent */
    uint8_t *out;
    size_t olen, ocap;
    struct rconn *next_dead, *next_paused;
};

struct relay_srv {
    struct br_relay *r;
    int ep, lfd, wake;
    struct rconn up;
    struct rconn *dead;         /* to close after the engine call */
    struct rconn *paused;       /* peers not read while the parent's
                                   queue drains */
    pthread_t th;
    int started;
    char dir[PATH_MAX], addr[PATH_MAX + 16];
};

static void mark_dead(struct rconn *c)
{
    if (c->dead)
        return;
    c->dead = 1;
    c->next_dead = c->s->dead;
    c->s->dead = c;
}

static void want_out(struct rconn *c, int on)
{
    struct epoll_event ev = { .events = EPOLLIN | (on ? EPOLLOUT : 0),
                              .data.ptr = c };

    if (!c->paused)
        epoll_ctl(c->s->ep, EPOLL_CTL_MOD, c->fd, &ev);
}

/* Stop reading peer c: out of the epoll set altogether, since a peer
 * that hung up would be reported again and again.  Its answers are
 * still sent as they come; what the socket does not take waits. */
static void pause_peer(struct rconn *c)
{
    if (c->paused)
        return;
    epoll_ctl(c->s->ep, EPOLL_CTL_DEL, c->fd, NULL);
    c->paused = 1;
    c->next_paused = c->s->paused;
    c->s->paused = c;
}

static void resume_peers(struct relay_srv *s)
{
    while (s->paused) {
        struct rconn *c = s->paused;
        struct epoll_event ev = { .events = EPOLLIN |
                                            (c->olen ? EPOLLOUT : 0),
                                  .data.ptr = c };

        s->paused = c->next_paused;
        c->paused = 0;
        if (epoll_ctl(s->ep, EPOLL_CTL_ADD, c->fd, &ev) < 0)
            mark_dead(c);
    }
}

static void unpause(struct rconn *c)
{
    struct rconn **pp = &c->s->paused;

    while (*pp && *pp != c)
        pp = &(*pp)->next_paused;
    if (*pp)
        *pp = c->next_paused;
    c->paused = 0;
}

/* Write what c holds; 0, or -1 when the peer is gone. */
static int flush_out(struct rconn *c)
{
    while (c->olen) {
        ssize_t w = send(c->fd, c->out, c->olen, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (w <= 0)
            return -1;
        memmove(c->out, c->out + w, c->olen - (size_t)w);
        c->olen -= (size_t)w;
    }
    want_out(c, c->olen > 0);
    if (c == &c->s->up && c->olen <= UP_LOW)
        resume_peers(c->s);
    return 0;
}

/* Queue n bytes for c and write what the socket takes now.  A peer that
 * lets more than MAX_OUT pile up, or is gone, is dropped. */
static void conn_send(struct rconn *c, const uint8_t *p, size_t n)
{
    if (c->dead)
        return;
    if (c->olen + n > c->ocap) {
        size_t cap = c->ocap ? c->ocap : 4096;
        uint8_t *o;
        while (cap < c->olen + n)
            cap *= 2;
        if (cap > MAX_OUT || !(o = realloc(c->out, cap))) {
            mark_dead(c);
            return;
        }
        c->out = o;
        c->ocap = cap;
    }
    memcpy(c->out + c->olen, p, n);
    c->olen += n;
    if (flush_out(c) < 0)
        mark_dead(c);
}

static void to_peer(void *ctx, void *user, const uint8_t *p, size_t n)
{
    (void)ctx;
    conn_send(user, p, n);
}

static void to_parent(void *ctx, const uint8_t *p, size_t n)
{
    conn_send(&((struct relay_srv *)ctx)->up, p, n);
}

/* The engine let go of this peer (parent lost): close it. */
static void engine_closed(void *ctx, void *user)
{
    struct rconn *c = user;

    (void)ctx;
    c->engine_gone = 1;
    mark_dead(c);
}

/* Out of the epoll set before close: a child between fork and exec may
 * still hold the file, and epoll would go on reporting it. */
static void forget_fd(struct relay_srv *s, int fd)
{
    epoll_ctl(s->ep, EPOLL_CTL_DEL, fd, NULL);
    close(fd);
}

static void parent_gone(struct relay_srv *s)
{
    br_relay_parent_lost(s->r);     /* closes every peer: ranks see EOF */
    if (s->lfd >= 0) {
        forget_fd(s, s->lfd);       /* and new ones are refused */
        s->lfd = -1;
    }
    forget_fd(s, s->up.fd);
    s->up.fd = -1;
}

/* Close what died during the last engine call. */
static void sweep(struct relay_srv *s)
{
    while (s->dead) {
        struct rconn *c = s->dead;

        s->dead = c->next_dead;
        if (c == &s->up) {
            parent_gone(s);
            continue;
        }
        if (!c->engine_gone)
            br_relay_peer_gone(s->r, c->p);
        if (c->paused)
            unpause(c);
        forget_fd(s, c->fd);
        free(c->out);
        free(c);
    }
}

static void on_accept(struct relay_srv *s)
{
    struct err err = { "" };
    int fd;

    while (s->lfd >= 0 &&
           (fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
        struct rconn *c = calloc(1, sizeof *c);
        struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };

        if (!c || !(c->p = br_relay_accept(s->r, c, clock_ms(), &err)) ||
            epoll_ctl(s->ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
            if (c && c->p)
                br_relay_peer_gone(s->r, c->p);
            free(c);
            close(fd);
            continue;
        }
        c->s = s;
        c->fd = fd;
    }
}

static void on_readable(struct relay_srv *s, struct rconn *c)
{
    uint8_t buf[65536];
    struct err err = { "" };
    ssize_t n;

    while (!c->dead) {
        if (c != &s->up && s->up.olen > UP_HIGH) {
            pause_peer(c);
            return;
        }
        if ((n = recv(c->fd, buf, sizeof buf, 0)) == 0)
            break;
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                mark_dead(c);
            return;
        }
        if ((c == &s->up ? br_relay_from_parent(s->r, buf, (size_t)n,
                                                clock_ms(), &err)
                         : br_relay_from_peer(s->r, c->p, buf, (size_t)n,
                                              clock_ms(), &err)) < 0)
            mark_dead(c);
    }
    if (!c->dead)
        mark_dead(c);   /* EOF */
}

static void on_event(struct relay_srv *s, const struct epoll_event *ev)
{
    struct rconn *c = ev->data.ptr;

    if (c == NULL) {
        on_accept(s);
        return;
    }
    if (ev->events & EPOLLOUT && !c->dead && flush_out(c) < 0)
        mark_dead(c);
    if (ev->events & (EPOLLIN | EPOLLHUP | EPOLLERR) && !c->dead)
        on_readable(s, c);
}

static void *serve(void *arg)
{
    struct relay_srv *s = arg;
    struct epoll_event ev[64];

    for (;;) {
        uint64_t dl = br_relay_next_deadline(s->r), now = clock_ms();
        int tmo = dl == UINT64_MAX ? -1 : dl <= now ? 0 : (int)(dl - now);
        int i, n = epoll_wait(s->ep, ev, 64, tmo);

        for (i = 0; i < n; i++) {
            if (ev[i].data.ptr == &s->wake)
                return NULL;
            on_event(s, &ev[i]);
        }
        sweep(s);   /* after the batch: later events may name the dead */
        br_relay_tick(s->r, clock_ms());
        sweep(s);
    }
}

static int add_fd(struct relay_srv *s, int fd, void *ptr)
{
    struct epoll_event ev = { .events = EPOLLIN, .data.ptr = ptr };

    return epoll_ctl(s->ep, EPOLL_CTL_ADD, fd, &ev);
}

/* A new 0700 folder of the relay's own for the socket, its path into un. */
static int own_folder(struct relay_srv *s, struct sockaddr_un *un,
                      struct err *err)
{
    char tmp[sizeof un->sun_path];

    if (tmpdir_pick(tmp, sizeof tmp, sizeof tmp - 1, err) < 0)
        return err_prefix(err, "relay");
    snprintf(s->dir, sizeof s->dir, "%s/dlrun-relay.XXXXXX", tmp);
    if (!privdirs_mkdtemp(s->dir)) {
        s->dir[0] = '\0';
        return err_set(err, "relay: cannot make a folder in %s: %s (set "
                       "TMPDIR)", tmp, strerror(errno));
    }
    if (snprintf(un->sun_path, sizeof un->sun_path, "%s/relay.sock",
                 s->dir) >= (int)sizeof un->sun_path)
        return err_set(err, "relay: socket path %s/relay.sock too long (set "
                       "TMPDIR to a shorter folder)", s->dir);
    return 0;
}

/* The Unix socket, in the job's 0700 folder or one of its own (only this
 * user's ranks reach it). */
static int listen_unix(struct relay_srv *s, const char *dir, struct err *err)
{
    struct sockaddr_un un = { .sun_family = AF_UNIX };

    if ((!dir || snprintf(un.sun_path, sizeof un.sun_path, "%s/relay.sock",
                          dir) >= (int)sizeof un.sun_path) &&
        own_folder(s, &un, err) < 0)
        return -1;
    snprintf(s->addr, sizeof s->addr, "unix:%s", un.sun_path);
    s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s->lfd < 0 || bind(s->lfd, (struct sockaddr *)&un, sizeof un) < 0 ||
        listen(s->lfd, 4096) < 0)
        return err_set(err, "relay: cannot listen on %s: %s", un.sun_path,
                       strerror(errno));
    return 0;
}

/* Peers at most: MAX_PEERS, fewer when the open-file limit leaves less
 * room (an accept that fails for want of a file would leave the
 * listening socket readable forever). */
static size_t max_peers(void)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY ||
        rl.rlim_cur >= MAX_PEERS + FD_RESERVE)
        return MAX_PEERS;
    return rl.rlim_cur > 2 * FD_RESERVE ? (size_t)rl.rlim_cur - FD_RESERVE
                                        : FD_RESERVE;
}

static int connect_parent(struct relay_srv *s, const char *parent,
                          struct err *err)
{
    s->up.s = s;
    s->up.fd = client_dial(parent, CONNECT_MS, err);
    if (s->up.fd < 0)
        return err_prefix(err, "relay");
    if (fcntl(s->up.fd, F_SETFL, fcntl(s->up.fd, F_GETFL) | O_NONBLOCK) < 0 ||
        add_fd(s, s->up.fd, &s->up) < 0)
        return err_set(err, "relay: %s", strerror(errno));
    return 0;
}

struct relay_srv *relay_srv_start(const char *parent,
                                  const uint8_t token[TOKEN_BYTES],
                                  uint32_t expect, const char *dir,
                                  struct err *err)
{
    static const struct br_relay_ops ops = { to_peer, to_parent,
                                             engine_closed };
    struct br_relay_conf conf = { .token = token, .expect = expect,
                                  .max_peers = max_peers() };
    struct relay_srv *s = calloc(1, sizeof *s);
    sigset_t all, old;
    int rc;

    if (!s) {
        err_set(err, "relay: out of memory");
        return NULL;
    }
    s->lfd = s->wake = s->up.fd = -1;
    s->ep = epoll_create1(EPOLL_CLOEXEC);
    s->wake = eventfd(0, EFD_CLOEXEC);
    if (s->ep < 0 || s->wake < 0 || add_fd(s, s->wake, &s->wake) < 0) {
        err_set(err, "relay: %s", strerror(errno));
        goto fail;
    }
    if (listen_unix(s, dir, err) < 0 || add_fd(s, s->lfd, NULL) < 0 ||
        connect_parent(s, parent, err) < 0)
        goto fail;
    s->r = br_relay_create(&conf, &ops, s, err);     /* sends its AUTH */
    if (!s->r)
        goto fail;
    sigfillset(&all);       /* signals stay the agent's main thread's */
    pthread_sigmask(SIG_BLOCK, &all, &old);
    rc = pthread_create(&s->th, NULL, serve, s);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    s->started = rc == 0;
    if (rc == 0)
        return s;
    err_set(err, "relay: cannot start its thread");
fail:
    relay_srv_stop(s);
    return NULL;
}

const char *relay_srv_addr(const struct relay_srv *s)
{
    return s->addr;
}

static void close_all(struct relay_srv *s)
{
    struct br_relay *r = s->r;

    /* the engine closes every peer through engine_closed */
    if (r && s->up.fd >= 0) {
        mark_dead(&s->up);
        sweep(s);
    }
    br_relay_destroy(r);
    free(s->up.out);
    if (s->up.fd >= 0)
        close(s->up.fd);
    if (s->lfd >= 0)
        close(s->lfd);
}

void relay_srv_stop(struct relay_srv *s)
{
    if (!s)
        return;
    if (s->started && eventfd_write(s->wake, 1) == 0)
        pthread_join(s->th, NULL);
    close_all(s);
    if (s->addr[0])
        unlink(s->addr + 5);
    if (s->dir[0]) {
        privdirs_forget(s->dir);
        rmdir(s->dir);
    }
    if (s->ep >= 0)
        close(s->ep);
    if (s->wake >= 0)
        close(s->wake);
    free(s);
}
