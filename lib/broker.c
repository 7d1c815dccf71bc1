/* broker.c - see broker.h.
 *
 * One epoll set, level-triggered.  Each readiness event reads at most one
 * buffer from a peer, so a peer that floods cannot starve the others; the
 * answers produced go to per-peer queues that are written at the end of
 * the round.  Connections that must go are marked and closed at the end
 * of the round too, since later events of the same round and the store's
 * callbacks may still name them. */
#include "broker.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "broker_proto.h"
#include "broker_store.h"

#define DEFAULT_MAX_CONNS 65536
#define DEFAULT_MAX_OUT (4u << 20)
#define DEFAULT_AUTH_MS 5000
#define FD_RESERVE 32           /* fds kept for the rest of the process */
#define READ_CHUNK 65536        /* read per event: fairness between peers */
#define MAX_EVENTS 256
#define ACCEPT_BURST 256        /* accepts per event, then others' turn */
#define MAX_IOV 64

/* One answer waiting to be written: header, then the shared value. */
struct chunk {
    struct chunk *next;
    struct bs_value *val;           /* a reference, or NULL */
    size_t off;                     /* bytes of hdr + value already sent */
    uint8_t hdr[BP_HDR_LEN];
};

struct conn {
    int fd;
    struct broker *b;
    struct bp_conn pc;
    struct bs_peer peer;
    struct chunk *ohead, *otail;
    size_t queued;                  /* bytes not yet written */
    uint64_t auth_deadline;
    struct conn *prev, *next;       /* all connections */
    struct conn *aprev, *anext;     /* not yet authenticated, oldest first */
    struct conn *dirty_next, *dead_next;
    int authed, dead, dirty, pollout;
};

struct broker {
    int ep, lfd, spare_fd, port;
    char addr[80];                  /* numeric, maybe with %scope */
    uint8_t token[TOKEN_BYTES];
    struct broker_limits lim;
    struct bs_store *store;
    struct conn *all, *ahead, *atail, *dirty, *dead;
    struct broker_stats st;
    uint64_t now;
    void (*log)(void *ctx, const char *line);
    void *log_ctx;
    uint8_t *rbuf;                  /* READ_CHUNK bytes, owned; at the first
                                       read (a launch whose ranks never
                                       connect does not touch 64 KiB) */
};

/* The listening socket's tag in the epoll set (connections use their
 * struct conn). */
static char listen_tag;

static uint64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- dropping and closing ---- */

static void unauth_unlink(struct broker *b, struct conn *c)
{
    *(c->aprev ? &c->aprev->anext : &b->ahead) = c->anext;
    *(c->anext ? &c->anext->aprev : &b->atail) = c->aprev;
    c->aprev = c->anext = NULL;
}

static void log_drop(struct broker *b, const struct conn *c, const char *why)
{
    struct sockaddr_storage sa;
    socklen_t len = sizeof sa;
    char host[INET6_ADDRSTRLEN + 8] = "?", serv[16] = "?", line[256];

    if (!b->log)
        return;
    if (getpeername(c->fd, (struct sockaddr *)&sa, &len) == 0)
        getnameinfo((struct sockaddr *)&sa, len, host, sizeof host, serv,
                    sizeof serv, NI_NUMERICHOST | NI_NUMERICSERV);
    snprintf(line, sizeof line, "dropped %s:%s: %s", host, serv, why);
    b->log(b->log_ctx, line);
}

/* Mark c to be closed at the end of the round; *counter counts why (NULL:
 * an ordinary close).  Safe to call twice and from the store's callback. */
static void drop(struct conn *c, size_t *counter, const char *why)
{
    struct broker *b = c->b;

    if (c->dead)
        return;
    c->dead = 1;
    c->dead_next = b->dead;
    b->dead = c;
    if (!c->authed)
        unauth_unlink(b, c);
    if (!counter)
        return;
    (*counter)++;
    log_drop(b, c, why);
}

static void free_chunks(struct conn *c)
{
    struct chunk *k, *next;

    for (k = c->ohead; k; k = next) {
        next = k->next;
        bs_value_unref(k->val);
        free(k);
    }
    c->ohead = c->otail = NULL;
    c->queued = 0;
}

/* Close and free c for good (the end of a round, or destroy). */
static void conn_free(struct broker *b, struct conn *c)
{
    if (!c->authed && !c->dead)
        unauth_unlink(b, c);
    bs_peer_drop(b->store, &c->peer);
    free_chunks(c);
    bp_conn_free(&c->pc);
    /* epoll watches the open file, not the fd: a child forked meanwhile
     * (the head starts ranks) may hold it open after our close, and its
     * events would still name this freed conn; shutdown ends the TCP
     * connection now rather than when that child execs */
    epoll_ctl(b->ep, EPOLL_CTL_DEL, c->fd, NULL);
    shutdown(c->fd, SHUT_RDWR);
    close(c->fd);
    *(c->prev ? &c->prev->next : &b->all) = c->next;
    if (c->next)
        c->next->prev = c->prev;
    b->st.conns--;
    free(c);
}

static void close_dead(struct broker *b)
{
    while (b->dead) {
        struct conn *c = b->dead;

        b->dead = c->dead_next;
        conn_free(b, c);
    }
}

/* ---- answers out ---- */

/* The store's callback: queue r for its peer, or drop a peer that let
 * more than max_out pile up (it is not reading). */
static void on_reply(void *ctx, struct bs_peer *peer, const struct bs_reply *r)
{
    struct broker *b = ctx;
    struct conn *c = peer->user;
    struct chunk *k;
    struct bp_msg m = { .op = r->op, .status = r->status, .id = r->id,
                        .arg = r->arg, .vlen = r->val ? r->val->len : 0 };

    if (c->dead)
        return;
    if (c->queued + BP_HDR_LEN + m.vlen > b->lim.max_out) {
        drop(c, &b->st.slow_dropped, "not reading its answers (output "
             "queue full)");
        return;
    }
    k = calloc(1, sizeof *k);
    if (!k) {
        drop(c, &b->st.slow_dropped, "out of memory for its answers");
        return;
    }
    bp_encode_hdr(k->hdr, &m);
    k->val = r->val;
    bs_value_ref(k->val);
    *(c->otail ? &c->otail->next : &c->ohead) = k;
    c->otail = k;
    c->queued += BP_HDR_LEN + m.vlen;
    if (!c->dirty) {
        c->dirty = 1;
        c->dirty_next = b->dirty;
        b->dirty = c;
    }
}

/* Fill iov from c's queue; returns the count. */
static int gather(const struct conn *c, struct iovec *iov)
{
    int n = 0;

    for (const struct chunk *k = c->ohead; k && n + 2 <= MAX_IOV; k = k->next) {
        size_t off = k->off;

        if (off < BP_HDR_LEN) {
            iov[n].iov_base = (void *)(k->hdr + off);
            iov[n++].iov_len = BP_HDR_LEN - off;
            off = BP_HDR_LEN;
        }
        if (k->val && off - BP_HDR_LEN < k->val->len) {
            iov[n].iov_base = k->val->data + (off - BP_HDR_LEN);
            iov[n++].iov_len = k->val->len - (off - BP_HDR_LEN);
        }
    }
    return n;
}

/* Forget the first sent bytes of c's queue. */
static void consume(struct conn *c, size_t sent)
{
    c->queued -= sent;
    while (sent > 0 && c->ohead) {
        struct chunk *k = c->ohead;
        size_t size = BP_HDR_LEN + (k->val ? k->val->len : 0);
        size_t take = size - k->off < sent ? size - k->off : sent;

        k->off += take;
        sent -= take;
        if (k->off < size)
            break;
        c->ohead = k->next;
        if (!c->ohead)
            c->otail = NULL;
        bs_value_unref(k->val);
        free(k);
    }
}

/* Ask for EPOLLOUT only while something is left to write. */
static void want_out(struct conn *c, int on)
{
    struct epoll_event ev = { .events = EPOLLIN | (on ? EPOLLOUT : 0),
                              .data.ptr = c };

    if (c->pollout == on)
        return;
    if (epoll_ctl(c->b->ep, EPOLL_CTL_MOD, c->fd, &ev) < 0)
        drop(c, NULL, "");
    c->pollout = on;
}

/* Write as much of c's queue as the socket takes now. */
static void flush(struct conn *c)
{
    struct iovec iov[MAX_IOV];
    struct msghdr mh = { .msg_iov = iov };
    ssize_t n;

    while (c->ohead && !c->dead) {
        mh.msg_iovlen = (size_t)gather(c, iov);
        /* sendmsg, not writev: MSG_NOSIGNAL spares the head a SIGPIPE */
        n = sendmsg(c->fd, &mh, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (n < 0) {
            drop(c, NULL, "");
            return;
        }
        consume(c, (size_t)n);
    }
    if (!c->dead)
        want_out(c, c->ohead != NULL);
}

static void flush_dirty(struct broker *b)
{
    while (b->dirty) {
        struct conn *c = b->dirty;

        b->dirty = c->dirty_next;
        c->dirty = 0;
        if (!c->dead)
            flush(c);
    }
}

/* ---- requests in ---- */

/* The engine's callback: one valid frame from c. */
static int on_msg(void *ctx, const struct bp_msg *m)
{
    struct conn *c = ctx;
    struct broker *b = c->b;
    struct bs_reply ok = { BP_AUTH, BP_OK, m->id, 0, NULL };

    if (c->dead)
        return -1;      /* dropped while answering an earlier frame */
    if (m->op != BP_AUTH) {
        b->st.requests++;
        bs_request(b->store, &c->peer, m, b->now);
        return 0;
    }
    /* the engine checked the token: tell the peer the value limit */
    unauth_unlink(b, c);
    c->authed = 1;
    ok.arg = (int64_t)b->lim.max_value;
    on_reply(b, &c->peer, &ok);
    return 0;
}

/* One read from c, handed to the engine. */
static void conn_read(struct conn *c)
{
    struct broker *b = c->b;
    struct err err = { "" };
    ssize_t n;

    if (!b->rbuf && !(b->rbuf = malloc(READ_CHUNK))) {
        drop(c, NULL, "out of memory");
        return;
    }
    n = recv(c->fd, b->rbuf, READ_CHUNK, 0);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
    if (n <= 0) {
        /* EOF or reset: a peer leaving is not an error, unless it had not
         * even authenticated */
        drop(c, c->authed ? NULL : &b->st.auth_failed,
             "closed before AUTH");
        return;
    }
    if (bp_feed(&c->pc, b->rbuf, (size_t)n, &err) < 0 && !c->dead)
        drop(c, c->authed ? &b->st.proto_failed : &b->st.auth_failed,
             err.msg);
}

/* ---- accepting ---- */

/* Out of fds: free the spare, accept and close at once so the peer sees a
 * refusal instead of the listening socket staying readable forever. */
static void shed_one(struct broker *b)
{
    int fd;

    if (b->spare_fd >= 0)
        close(b->spare_fd);
    fd = accept(b->lfd, NULL, NULL);
    if (fd >= 0)
        close(fd);
    b->st.refused += fd >= 0;
    b->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

static void conn_new(struct broker *b, int fd)
{
    struct conn *c = calloc(1, sizeof *c);
    struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };

    if (!c || epoll_ctl(b->ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
        free(c);
        close(fd);
        b->st.refused++;
        return;
    }
    c->fd = fd;
    c->b = b;
    bp_conn_init(&c->pc, BP_SERVER, b->token, b->lim.max_value, on_msg, c);
    bs_peer_init(&c->peer, c);
    c->auth_deadline = b->now + (uint64_t)b->lim.auth_timeout_ms;
    c->aprev = b->atail;
    *(b->atail ? &b->atail->anext : &b->ahead) = c;
    b->atail = c;
    c->next = b->all;
    if (b->all)
        b->all->prev = c;
    b->all = c;
    b->st.conns++;
    b->st.accepted++;
}

static void accept_some(struct broker *b)
{
    for (int i = 0; i < ACCEPT_BURST; i++) {
        int fd = accept4(b->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

        if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
            shed_one(b);
            continue;
        }
        if (fd < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (fd < 0)
            continue;   /* ECONNABORTED, EINTR...: the next one */
        if (b->st.conns >= b->lim.max_conns) {
            close(fd);
            b->st.refused++;
            continue;
        }
        conn_new(b, fd);
    }
}

/* ---- the loop ---- */

static void expire_auth(struct broker *b)
{
    while (b->ahead && b->ahead->auth_deadline <= b->now)
        drop(b->ahead, &b->st.auth_failed, "no AUTH in time");
}

int broker_timeout_ms(const struct broker *b)
{
    uint64_t next = bs_next_deadline(b->store), now = now_ms();

    if (b->ahead && b->ahead->auth_deadline < next)
        next = b->ahead->auth_deadline;
    if (next == UINT64_MAX)
        return -1;
    if (next <= now)
        return 0;
    return next - now > 1000000000u ? 1000000000 : (int)(next - now);
}

static void handle(struct broker *b, const struct epoll_event *ev)
{
    struct conn *c = ev->data.ptr;

    if (ev->data.ptr == &listen_tag) {
        accept_some(b);
        return;
    }
    if (!c->dead && (ev->events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
        conn_read(c);
    if (!c->dead && (ev->events & EPOLLOUT))
        flush(c);
}

int broker_run_once(struct broker *b, int timeout_ms, struct err *err)
{
    struct epoll_event ev[MAX_EVENTS];
    int due = broker_timeout_ms(b), n;

    if (due >= 0 && (timeout_ms < 0 || due < timeout_ms))
        timeout_ms = due;
    n = epoll_wait(b->ep, ev, MAX_EVENTS, timeout_ms);
    if (n < 0 && errno != EINTR)
        return err_set(err, "broker: epoll_wait: %s", strerror(errno));
    if (n < 0)
        n = 0;
    b->now = now_ms();
    for (int i = 0; i < n; i++)
        handle(b, &ev[i]);
    bs_expire(b->store, b->now);
    expire_auth(b);
    flush_dirty(b);
    close_dead(b);
    return n;
}

/* ---- setting up ---- */

static void apply_defaults(struct broker_limits *l)
{
    struct rlimit rl;

    if (!l->max_value || l->max_value > BP_MAX_VALUE_CEILING)
        l->max_value = l->max_value ? BP_MAX_VALUE_CEILING
                                    : BP_DEFAULT_MAX_VALUE;
    if (!l->max_conns)
        l->max_conns = DEFAULT_MAX_CONNS;
    /* every connection is an fd: stay inside the process's limit, so that
     * the head (which has other files to open) never runs out */
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        size_t room = rl.rlim_cur > 2 * FD_RESERVE ? rl.rlim_cur - FD_RESERVE
                                                   : FD_RESERVE;
        if (l->max_conns > room)
            l->max_conns = room;
    }
    if (!l->max_out)
        l->max_out = DEFAULT_MAX_OUT + BP_HDR_LEN + BP_MAX_KEY + l->max_value;
    if (l->max_out < BP_HDR_LEN + l->max_value)
        l->max_out = BP_HDR_LEN + l->max_value;     /* one answer must fit */
    if (!l->auth_timeout_ms)
        l->auth_timeout_ms = DEFAULT_AUTH_MS;
}

/* Bind and listen on the first address of host:port that works. */
static int listen_on(struct broker *b, const char *host, int port,
                     struct err *err)
{
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
                              .ai_flags = AI_PASSIVE }, *res = NULL, *r;
    char serv[16];
    int rc, one = 1, saved = 0;

    snprintf(serv, sizeof serv, "%d", port);
    rc = getaddrinfo(host, serv, &hints, &res);
    if (rc != 0)
        return err_set(err, "cannot listen on %s:%d: %s", host ? host : "*",
                       port, gai_strerror(rc));
    for (r = res; r && b->lfd < 0; r = r->ai_next) {
        b->lfd = socket(r->ai_family, r->ai_socktype | SOCK_NONBLOCK |
                        SOCK_CLOEXEC, r->ai_protocol);
        /* TCP_NODELAY: answers are small and each one is awaited, so
         * they go at once; Linux copies it to every accepted socket,
         * which saves a system call per connection */
        if (b->lfd >= 0) {
            setsockopt(b->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
            setsockopt(b->lfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        }
        if (b->lfd >= 0 && bind(b->lfd, r->ai_addr, r->ai_addrlen) == 0 &&
            listen(b->lfd, 65535) == 0)
            break;
        saved = errno;
        if (b->lfd >= 0)
            close(b->lfd);
        b->lfd = -1;
    }
    freeaddrinfo(res);
    if (b->lfd < 0)
        return err_set(err, "cannot listen on %s:%d: %s", host ? host : "*",
                       port, strerror(saved));
    return 0;
}

/* Record the address and port the kernel gave. */
static int read_back_addr(struct broker *b, struct err *err)
{
    struct sockaddr_storage sa;
    socklen_t len = sizeof sa;
    char serv[16];

    if (getsockname(b->lfd, (struct sockaddr *)&sa, &len) < 0 ||
        getnameinfo((struct sockaddr *)&sa, len, b->addr, sizeof b->addr,
                    serv, sizeof serv, NI_NUMERICHOST | NI_NUMERICSERV) != 0)
        return err_set(err, "broker: cannot read back the bound address: %s",
                       strerror(errno));
    b->port = atoi(serv);
    return 0;
}

static int add_listener(struct broker *b, struct err *err)
{
    struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &listen_tag };

    b->ep = epoll_create1(EPOLL_CLOEXEC);
    if (b->ep < 0 || epoll_ctl(b->ep, EPOLL_CTL_ADD, b->lfd, &ev) < 0)
        return err_set(err, "broker: epoll: %s", strerror(errno));
    return 0;
}

struct broker *broker_create(const char *bind_addr, int port,
                             const uint8_t token[TOKEN_BYTES],
                             const struct broker_limits *lim,
                             struct err *err)
{
    struct broker *b = calloc(1, sizeof *b);
    struct bs_limits sl = { 0 };
    uint8_t seed[TOKEN_BYTES];
    uint64_t s64;

    if (!b) {
        err_set(err, "out of memory for the broker");
        return NULL;
    }
    b->ep = b->lfd = b->spare_fd = -1;
    memcpy(b->token, token, TOKEN_BYTES);
    if (lim)
        b->lim = *lim;
    apply_defaults(&b->lim);
    sl.max_value = b->lim.max_value;
    sl.max_bytes = b->lim.max_bytes;
    sl.max_parked = b->lim.max_parked;
    /* a random hash seed, so chains cannot be predicted from outside */
    if (token_new(seed, err) < 0)
        goto fail;
    memcpy(&s64, seed, sizeof s64);
    b->store = bs_create(&sl, s64, on_reply, b, err);
    if (!b->store || listen_on(b, bind_addr, port, err) < 0 ||
        read_back_addr(b, err) < 0 || add_listener(b, err) < 0)
        goto fail;
    b->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    b->now = now_ms();
    return b;
fail:
    broker_destroy(b);
    return NULL;
}

void broker_destroy(struct broker *b)
{
    if (!b)
        return;
    close_dead(b);
    b->dirty = NULL;
    while (b->all)
        conn_free(b, b->all);
    bs_destroy(b->store);
    if (b->lfd >= 0)
        close(b->lfd);
    if (b->ep >= 0)
        close(b->ep);
    if (b->spare_fd >= 0)
        close(b->spare_fd);
    free(b->rbuf);
    free(b);
}

int broker_fd(const struct broker *b)
{
    return b->ep;
}

int broker_port(const struct broker *b)
{
    return b->port;
}

const char *broker_addr(const struct broker *b)
{
    return b->addr;
}

void broker_get_stats(const struct broker *b, struct broker_stats *out)
{
    *out = b->st;
}

void broker_set_log(struct broker *b, void (*log)(void *ctx, const char *line),
                    void *ctx)
{
    b->log = log;
    b->log_ctx = ctx;
}

int broker_peek(const struct broker *b, const char *key, char *buf,
                size_t len)
{
    const struct bs_value *v = bs_peek(b->store, key);
    size_t n;

    if (!v || len == 0)
        return -1;
    n = v->len < len - 1 ? v->len : len - 1;
    memcpy(buf, v->data, n);
    buf[n] = '\0';
    return 0;
}
