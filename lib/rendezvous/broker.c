/* broker.c - see broker.h.
 *
 * One epoll set, level-triggered.  Each readiness event reads at most one
 * buffer from a peer, so a peer that floods cannot starve the others; the
 * answers produced go to per-peer queues that are written at the end of
 * the round.  Connections that must go are marked and closed at the end
 * of the round too, since later events of the same round and the store's
 * callbacks may still name them (an evicted one gives its fd back at once
 * but keeps its struct until then).
 *
 * Without the token, a peer can only hold connections that have not
 * authenticated: they are the first to go when the table is full, and one
 * address holds at most max_unauth_per_src of them.  With it, a peer that
 * asks and never reads is not read any more once its answers fill
 * max_out, and all such together are held to max_mem: memory is counted
 * as allocated (queue entries, shared values counted per answer, the
 * parser's buffers), not as bytes on the wire. */
#include "rendezvous/broker.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "rendezvous/broker_proto.h"
#include "rendezvous/broker_store.h"
#include "util/clock.h"
#include "util/privdirs.h"
#include "util/tmpdir.h"

#define DEFAULT_MAX_CONNS 65536
#define DEFAULT_UNAUTH_PER_SRC 1024
#define DEFAULT_MAX_OUT (1u << 20)
#define DEFAULT_MAX_MEM (256u << 20)
#define DEFAULT_AUTH_MS 5000
#define MALLOC_OVERHEAD 16      /* glibc's per-allocation header, rounded */
#define TRIM_STEP (16u << 20)   /* freed since the peak: give it back */
#define SRC_BUCKETS 1024
#define FD_RESERVE 32           /* fds kept for the rest of the process */
#define READ_CHUNK 65536        /* read per event: fairness between peers */
#define SLOW_PIECE 1024         /* read at a time from a peer with answers
                                   waiting (a GET is 25 bytes and more) */
#define MAX_EVENTS 256
#define ACCEPT_BURST 256        /* accepts per event, then others' turn */
#define MAX_IOV 64
#define PATH_MAX_ADDR 128       /* "unix:" + sun_path, or an address */

/* One answer waiting to be written: header, then the shared value. */
struct chunk {
    struct chunk *next;
    struct bs_value *val;           /* a reference, or NULL */
    size_t off;                     /* bytes of hdr + value already sent */
    uint8_t hdr[BP_HDR_LEN];
};

/* One source address's connections that have not authenticated yet. */
struct src {
    struct src *next;               /* in its hash bucket */
    struct conn *head, *tail;       /* oldest first */
    size_t n;
    uint8_t len, addr[16];
};

/* What a queued answer costs, as allocated. */
#define CHUNK_MEM (sizeof(struct chunk) + MALLOC_OVERHEAD)

struct conn {
    int fd;
    struct broker *b;
    struct bp_conn pc;
    struct bs_peer peer;
    struct chunk *ohead, *otail;
    size_t queued;                  /* bytes not yet written */
    size_t qmem;                    /* the queue's weight (chunk_weight) */
    size_t pcmem;                   /* the parser's buffer, as counted */
    uint64_t auth_deadline;
    struct conn *prev, *next;       /* all connections */
    struct conn *aprev, *anext;     /* not yet authenticated, oldest first */
    struct src *src;                /* its address's, while not authed */
    struct conn *sprev, *snext;     /* in src, oldest first */
    struct conn *dirty_next, *dead_next;
    uint32_t events;                /* what epoll watches */
    int authed, dead, dirty, paused;
};

struct broker {
    int ep, lfd, spare_fd, port;
    char addr[PATH_MAX_ADDR];       /* numeric, maybe with %scope, or
                                       unix:PATH */
    char *rmdir_path;               /* the private folder (owned) */
    uint8_t token[TOKEN_BYTES];
    struct broker_limits lim;
    struct bs_store *store;
    struct conn *all, *ahead, *atail, *dirty, *dead;
    struct src *srcs[SRC_BUCKETS];
    uint64_t seed;
    struct broker_stats st;
    size_t own;                     /* allocated here: connections, queue
                                       entries, parser buffers */
    size_t trim_mark;               /* st.mem's peak since the last trim */
    int pressure;                   /* st.mem went past max_mem */
    uint64_t now;
    void (*log)(void *ctx, const char *line);
    void *log_ctx;
    void (*on_auth)(void *ctx, const struct sockaddr *sa);
    void *on_auth_ctx;
    uint8_t *rbuf;                  /* READ_CHUNK bytes, owned; at the first
                                       read (a launch whose ranks never
                                       connect does not touch 64 KiB) */
};

/* The listening socket's tag in the epoll set (connections use their
 * struct conn). */
static char listen_tag;

/* ---- memory ---- */

/* Count add more and sub fewer bytes of ours against max_mem; values
 * the store let go of while answers hold them are counted by it. */
static void mem_add(struct broker *b, size_t add, size_t sub)
{
    b->own = b->own + add - sub;
    b->st.mem = b->own + bs_orphan_bytes(b->store);
    if (b->st.mem > b->st.mem_peak)
        b->st.mem_peak = b->st.mem;
    if (b->st.mem > b->trim_mark)
        b->trim_mark = b->st.mem;
    if (b->st.mem > b->lim.max_mem)
        b->pressure = 1;
    else if (b->st.mem < b->lim.max_mem / 4 * 3)
        b->pressure = 0;
}

/* The parser's buffer changed size: count it again. */
static void mem_parser(struct conn *c)
{
    size_t now = c->pc.cap ? c->pc.cap + MALLOC_OVERHEAD : 0;

    mem_add(c->b, now, c->pcmem);
    c->pcmem = now;
}

/* Give freed memory back to the system once a lot of it was freed (a
 * flood ended): glibc keeps it otherwise. */
static void maybe_trim(struct broker *b)
{
    if (b->trim_mark - b->st.mem < TRIM_STEP)
        return;
    malloc_trim(0);
    b->trim_mark = b->st.mem;
}

/* ---- connections not yet authenticated, by source address ---- */

/* The address bytes of sa (IPv4-mapped IPv6 as IPv4) into key; their
 * count, 0 for a Unix socket (no cap there: the folder is 0700). */
static size_t src_key(const struct sockaddr_storage *sa, uint8_t key[16])
{
    const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;

    if (sa->ss_family == AF_INET) {
        memcpy(key, &((const struct sockaddr_in *)sa)->sin_addr, 4);
        return 4;
    }
    if (sa->ss_family != AF_INET6)
        return 0;
    if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
        memcpy(key, s6->sin6_addr.s6_addr + 12, 4);
        return 4;
    }
    memcpy(key, s6->sin6_addr.s6_addr, 16);
    return 16;
}

static struct src **src_slot(struct broker *b, const uint8_t *key, size_t len)
{
    uint64_t h = b->seed ^ 14695981039346656037ull;
    struct src **at;

    for (size_t i = 0; i < len; i++)
        h = (h ^ key[i]) * 1099511628211ull;
    at = &b->srcs[h % SRC_BUCKETS];
    while (*at && ((*at)->len != len || memcmp((*at)->addr, key, len) != 0))
        at = &(*at)->next;
    return at;
}

/* The entry of sa's address, made if new; NULL for a Unix socket or out
 * of memory (the connection is then not capped). */
static struct src *src_get(struct broker *b, const struct sockaddr_storage *sa)
{
    uint8_t key[16];
    size_t len = src_key(sa, key);
    struct src **at;

    if (!len)
        return NULL;
    at = src_slot(b, key, len);
    if (!*at && (*at = calloc(1, sizeof **at))) {
        (*at)->len = (uint8_t)len;
        memcpy((*at)->addr, key, len);
    }
    return *at;
}

static void src_unlink(struct broker *b, struct conn *c)
{
    struct src *s = c->src, **at;

    if (!s)
        return;
    *(c->sprev ? &c->sprev->snext : &s->head) = c->snext;
    *(c->snext ? &c->snext->sprev : &s->tail) = c->sprev;
    c->sprev = c->snext = NULL;
    c->src = NULL;
    if (--s->n > 0)
        return;
    at = src_slot(b, s->addr, s->len);
    *at = s->next;
    free(s);
}

static void unauth_unlink(struct broker *b, struct conn *c)
{
    *(c->aprev ? &c->aprev->anext : &b->ahead) = c->anext;
    *(c->anext ? &c->anext->aprev : &b->atail) = c->aprev;
    c->aprev = c->anext = NULL;
    src_unlink(b, c);
}

/* ---- dropping and closing ---- */

static void log_drop(struct broker *b, const struct conn *c, const char *why)
{
    struct sockaddr_storage sa;
    socklen_t len = sizeof sa;
    char host[INET6_ADDRSTRLEN + 8] = "?", serv[16] = "?", line[256];
    struct ucred cred;
    socklen_t clen = sizeof cred;

    if (!b->log)
        return;
    if (getpeername(c->fd, (struct sockaddr *)&sa, &len) == 0 &&
        sa.ss_family == AF_UNIX &&
        getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) == 0)
        snprintf(serv, sizeof serv, "pid %d", (int)cred.pid);
    else if (len <= sizeof sa)
        getnameinfo((struct sockaddr *)&sa, len, host, sizeof host, serv,
                    sizeof serv, NI_NUMERICHOST | NI_NUMERICSERV);
    if (sa.ss_family == AF_UNIX)
        snprintf(line, sizeof line, "dropped %s (unix socket): %s", serv, why);
    else
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
    b->st.conns--;
    if (!c->authed)
        unauth_unlink(b, c);
    if (!counter)
        return;
    (*counter)++;
    log_drop(b, c, why);
}

/* Tell a peer that is about to be closed why, in a frame it can tell from
 * any answer (id 0, op AUTH; clients never use id 0): BP_INVALID its
 * token or version, BP_LIMIT no room now, BP_TIMEOUT no AUTH in time.
 * Clients retry on all but BP_INVALID.  Best effort: never waits. */
static void send_notice(int fd, uint8_t status)
{
    struct bp_msg m = { .op = BP_AUTH, .status = status };
    uint8_t f[BP_HDR_LEN];

    bp_encode_hdr(f, &m);
    if (send(fd, f, sizeof f, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
        return;     /* the peer is gone or not reading: nothing to tell */
}

static void notice(struct conn *c, uint8_t status)
{
    send_notice(c->fd, status);
}

/* Close fd after reading what the peer sent: a close with unread bytes
 * resets the connection, and the peer would lose the notice. */
static void drain_close(int fd)
{
    uint8_t sink[256];

    while (recv(fd, sink, sizeof sink, MSG_DONTWAIT) > 0)
        continue;
    close(fd);
}

/* Give c's fd back now (it was dropped; its struct goes at the end of
 * the round). */
static void close_now(struct conn *c)
{
    if (c->fd < 0)
        return;
    epoll_ctl(c->b->ep, EPOLL_CTL_DEL, c->fd, NULL);
    drain_close(c->fd);
    c->fd = -1;
}

/* Make room: close c, which has not authenticated, at once. */
static void evict(struct conn *c, const char *why)
{
    notice(c, BP_LIMIT);
    drop(c, &c->b->st.evicted, why);
    close_now(c);
}

static void free_chunks(struct conn *c)
{
    struct chunk *k, *next;

    for (k = c->ohead; k; k = next) {
        next = k->next;
        bs_value_unref(k->val);
        free(k);
        mem_add(c->b, 0, CHUNK_MEM);
    }
    c->ohead = c->otail = NULL;
    c->queued = 0;
    c->qmem = 0;
}

/* Close and free c for good (the end of a round, or destroy). */
static void conn_free(struct broker *b, struct conn *c)
{
    if (!c->dead) {
        b->st.conns--;
        if (!c->authed)
            unauth_unlink(b, c);
    }
    bs_peer_drop(b->store, &c->peer);
    free_chunks(c);
    bp_conn_free(&c->pc);
    mem_parser(c);
    mem_add(b, 0, sizeof *c + MALLOC_OVERHEAD);
    /* epoll watches the open file, not the fd: a child forked meanwhile
     * (the head starts ranks) may hold it open after our close, and its
     * events would still name this freed conn; shutdown ends the TCP
     * connection now rather than when that child execs */
    if (c->fd >= 0) {
        epoll_ctl(b->ep, EPOLL_CTL_DEL, c->fd, NULL);
        shutdown(c->fd, SHUT_RDWR);
        close(c->fd);
    }
    *(c->prev ? &c->prev->next : &b->all) = c->next;
    if (c->next)
        c->next->prev = c->prev;
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

/* What it weighs in its peer's queue: its value counted too, though the
 * value is shared (with the store, other queues), so that a peer cannot
 * pin many values the store has since replaced. */
static size_t chunk_weight(const struct chunk *k)
{
    return CHUNK_MEM + (k->val ? k->val->len : 0);
}

/* The store's callback: queue r for its peer.  A peer whose queue is
 * full is not dropped: it is no longer read (update_events), and what
 * its parked requests still produce is bounded by max_parked. */
static void on_reply(void *ctx, struct bs_peer *peer, const struct bs_reply *r)
{
    struct broker *b = ctx;
    struct conn *c = peer->user;
    struct chunk *k;
    struct bp_msg m = { .op = r->op, .status = r->status, .id = r->id,
                        .arg = r->arg, .vlen = r->val ? r->val->len : 0 };

    if (c->dead)
        return;
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
    c->qmem += chunk_weight(k);
    mem_add(b, CHUNK_MEM, 0);
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
        c->qmem -= chunk_weight(k);
        bs_value_unref(k->val);
        free(k);
        mem_add(c->b, 0, CHUNK_MEM);
    }
}

/* Should c not be read now?  Its own queue is full (until half of it is
 * written), or all queues together passed max_mem and c has answers
 * waiting (a peer that reads is never held: its queue empties). */
static int should_pause(const struct conn *c)
{
    const struct broker *b = c->b;
    size_t lim = c->paused ? b->lim.max_out / 2 : b->lim.max_out;

    return c->qmem > lim || (b->pressure && c->ohead);
}

/* Watch c for what it needs now: input unless paused, output while
 * something is left to write. */
static void update_events(struct conn *c)
{
    struct broker *b = c->b;
    int pause = should_pause(c);
    struct epoll_event ev = { .events = (pause ? 0 : EPOLLIN) |
                                        (c->ohead ? EPOLLOUT : 0),
                              .data.ptr = c };

    b->st.paused += pause && !c->paused;
    c->paused = pause;
    if (ev.events == c->events)
        return;
    if (epoll_ctl(b->ep, EPOLL_CTL_MOD, c->fd, &ev) < 0)
        drop(c, NULL, "");
    c->events = ev.events;
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
        update_events(c);
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

/* max_mem's pressure came or went: every peer is read, or not, anew
 * (a peer that does not read gets no event that would do it). */
static void reconsider_all(struct broker *b)
{
    for (struct conn *c = b->all; c; c = c->next)
        if (!c->dead)
            update_events(c);
}

/* ---- requests in ---- */

/* c presented the token: its address to the on_auth hook (TCP only). */
static void tell_auth(struct broker *b, const struct conn *c)
{
    struct sockaddr_storage sa;
    socklen_t len = sizeof sa;

    if (getpeername(c->fd, (struct sockaddr *)&sa, &len) == 0 &&
        (sa.ss_family == AF_INET || sa.ss_family == AF_INET6))
        b->on_auth(b->on_auth_ctx, (struct sockaddr *)&sa);
}

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
    if (b->on_auth)
        tell_auth(b, c);
    ok.arg = (int64_t)b->lim.max_value;
    on_reply(b, &c->peer, &ok);
    return 0;
}

/* Reads from c, handed to the engine: up to READ_CHUNK bytes, in small
 * pieces while c has answers waiting, so that it stops as soon as they
 * fill max_out (or max_mem is passed): what it sent beyond stays in the
 * kernel's socket buffer, not in ours. */
static void conn_read(struct conn *c)
{
    struct broker *b = c->b;
    struct err err = { "" };
    size_t got = 0, want = 0;
    ssize_t n = 0;

    if (!b->rbuf && !(b->rbuf = malloc(READ_CHUNK))) {
        drop(c, NULL, "out of memory");
        return;
    }
    while (!c->dead && got < READ_CHUNK && (size_t)n == want &&
           !(got && should_pause(c))) {
        want = c->qmem ? SLOW_PIECE : READ_CHUNK - got;
        n = recv(c->fd, b->rbuf, want, 0);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK ||
                      errno == EINTR))
            break;
        if (n <= 0) {
            /* EOF or reset: a peer leaving is not an error, unless it had
             * not even authenticated */
            drop(c, c->authed ? NULL : &b->st.auth_failed,
                 "closed before AUTH");
            break;
        }
        got += (size_t)n;
        if (bp_feed(&c->pc, b->rbuf, (size_t)n, &err) < 0 && !c->dead) {
            /* a client told "wrong token" does not retry; garbage is not
             * answered at all */
            if (c->pc.auth_refused)
                notice(c, BP_INVALID);
            drop(c, c->authed ? &b->st.proto_failed : &b->st.auth_failed,
                 err.msg);
        }
    }
    mem_parser(c);
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

/* Link c, not yet authenticated, at the tail of the lists of its kind:
 * all such, and its address's (whose oldest goes when it has too many). */
static void unauth_link(struct broker *b, struct conn *c,
                        const struct sockaddr_storage *sa)
{
    struct src *s = src_get(b, sa);

    if (s && s->n >= b->lim.max_unauth_per_src)
        evict(s->head, "too many connections from its address have not "
              "authenticated (max_unauth_per_src)");
    /* the eviction may have freed the entry it emptied */
    s = s ? src_get(b, sa) : NULL;
    c->aprev = b->atail;
    *(b->atail ? &b->atail->anext : &b->ahead) = c;
    b->atail = c;
    if (!s)
        return;
    c->src = s;
    c->sprev = s->tail;
    *(s->tail ? &s->tail->snext : &s->head) = c;
    s->tail = c;
    s->n++;
}

static void conn_new(struct broker *b, int fd,
                     const struct sockaddr_storage *sa)
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
    c->events = EPOLLIN;
    bp_conn_init(&c->pc, BP_SERVER, b->token, b->lim.max_value, on_msg, c);
    bs_peer_init(&c->peer, c);
    c->auth_deadline = b->now + (uint64_t)b->lim.auth_timeout_ms;
    unauth_link(b, c, sa);
    c->next = b->all;
    if (b->all)
        b->all->prev = c;
    b->all = c;
    b->st.conns++;
    b->st.accepted++;
    mem_add(b, sizeof *c + MALLOC_OVERHEAD, 0);
    /* its AUTH is most likely in already: read it now, so that a burst
     * of ranks connecting is not mistaken for connections that never
     * authenticate */
    conn_read(c);
}

/* A new connection when the table is full: it takes the place of the
 * oldest one that has not authenticated, if any.  1 when there is room. */
static int make_room(struct broker *b)
{
    if (b->st.conns < b->lim.max_conns)
        return 1;
    if (!b->ahead)
        return 0;
    evict(b->ahead, "the connection table is full (max_conns) and this "
          "one has not authenticated");
    return 1;
}

/* No room, and nobody to make room: tell the peer, close. */
static void refuse(struct broker *b, int fd)
{
    send_notice(fd, BP_LIMIT);
    drain_close(fd);
    b->st.refused++;
}

static void accept_some(struct broker *b)
{
    for (int i = 0; i < ACCEPT_BURST; i++) {
        struct sockaddr_storage sa = { 0 };
        socklen_t len = sizeof sa;
        int fd = accept4(b->lfd, (struct sockaddr *)&sa, &len,
                         SOCK_NONBLOCK | SOCK_CLOEXEC);

        if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
            /* an fd held by a connection without the token comes first */
            if (b->ahead)
                evict(b->ahead, "out of file descriptors and this one has "
                      "not authenticated");
            else
                shed_one(b);
            continue;
        }
        if (fd < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (fd < 0)
            continue;   /* ECONNABORTED, EINTR...: the next one */
        if (!make_room(b)) {
            refuse(b, fd);
            continue;
        }
        conn_new(b, fd, &sa);
    }
}

/* ---- the loop ---- */

static void expire_auth(struct broker *b)
{
    while (b->ahead && b->ahead->auth_deadline <= b->now) {
        notice(b->ahead, BP_TIMEOUT);
        drop(b->ahead, &b->st.auth_failed, "no AUTH in time");
    }
}

int broker_timeout_ms(const struct broker *b)
{
    uint64_t next = bs_next_deadline(b->store), now = clock_ms();

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
    /* a paused peer that hung up is not read: it is gone */
    if (!c->dead && c->paused && (ev->events & (EPOLLHUP | EPOLLERR)))
        drop(c, NULL, "");
    if (!c->dead && (ev->events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
        conn_read(c);
    if (!c->dead && (ev->events & EPOLLOUT))
        flush(c);
}

int broker_run_once(struct broker *b, int timeout_ms, struct err *err)
{
    struct epoll_event ev[MAX_EVENTS];
    int due = broker_timeout_ms(b), n, was;

    if (due >= 0 && (timeout_ms < 0 || due < timeout_ms))
        timeout_ms = due;
    n = epoll_wait(b->ep, ev, MAX_EVENTS, timeout_ms);
    if (n < 0 && errno != EINTR)
        return err_set(err, "broker: epoll_wait: %s", strerror(errno));
    if (n < 0)
        n = 0;
    b->now = clock_ms();
    was = b->pressure;
    for (int i = 0; i < n; i++)
        handle(b, &ev[i]);
    bs_expire(b->store, b->now);
    expire_auth(b);
    flush_dirty(b);
    if (b->pressure != was)
        reconsider_all(b);
    close_dead(b);
    maybe_trim(b);
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
    if (!l->max_unauth_per_src)
        l->max_unauth_per_src = DEFAULT_UNAUTH_PER_SRC;
    if (!l->max_out)
        l->max_out = DEFAULT_MAX_OUT;
    if (!l->max_mem)
        l->max_mem = DEFAULT_MAX_MEM;
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

/* A private folder for the socket: 0700 (mkdtemp), so that only this
 * user reaches it; its path into dir (len bytes).  0 / -1 with err. */
static int private_dir(char *dir, size_t len, struct err *err)
{
    struct sockaddr_un un;
    char tmp[sizeof un.sun_path - 30];

    /* the socket's path must fit sun_path, with "/broker.sock" */
    if (tmpdir_pick(tmp, sizeof tmp, sizeof tmp - 1, err) < 0)
        return -1;
    snprintf(dir, len, "%s/dlrun-broker.XXXXXX", tmp);
    if (!privdirs_mkdtemp(dir))
        return err_set(err, "cannot make a private folder in %s for the "
                       "broker's socket: %s (set TMPDIR)", tmp,
                       strerror(errno));
    return 0;
}

/* Listen on a Unix socket at path ("": in a private folder). */
static int listen_unix(struct broker *b, const char *path, struct err *err)
{
    struct sockaddr_un un = { .sun_family = AF_UNIX };
    char dir[sizeof un.sun_path];

    if (!*path) {
        if (private_dir(dir, sizeof dir, err) < 0)
            return -1;
        if (!(b->rmdir_path = strdup(dir)))
            return err_set(err, "out of memory");
        if (snprintf(un.sun_path, sizeof un.sun_path, "%s/broker.sock",
                     dir) >= (int)sizeof un.sun_path)
            return err_set(err, "%s: too long a path for a socket", dir);
    } else if (strlen(path) >= sizeof un.sun_path) {
        return err_set(err, "cannot listen on unix:%s: the path is longer "
                       "than %zu bytes", path, sizeof un.sun_path - 1);
    } else {
        snprintf(un.sun_path, sizeof un.sun_path, "%s", path);
    }
    b->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (b->lfd < 0 || bind(b->lfd, (struct sockaddr *)&un, sizeof un) < 0 ||
        listen(b->lfd, 65535) < 0)
        return err_set(err, "cannot listen on unix:%s: %s", un.sun_path,
                       strerror(errno));
    snprintf(b->addr, sizeof b->addr, "unix:%s", un.sun_path);
    b->port = 0;
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
    b->seed = s64 ^ 0x9e3779b97f4a7c15ull;
    b->store = bs_create(&sl, s64, on_reply, b, err);
    if (!b->store)
        goto fail;
    if (bind_addr && strncmp(bind_addr, "unix:", 5) == 0) {
        if (listen_unix(b, bind_addr + 5, err) < 0)
            goto fail;
    } else if (listen_on(b, bind_addr, port, err) < 0 ||
               read_back_addr(b, err) < 0) {
        goto fail;
    }
    if (add_listener(b, err) < 0)
        goto fail;
    b->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    b->now = clock_ms();
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
    if (b->lfd >= 0 && strncmp(b->addr, "unix:", 5) == 0)
        unlink(b->addr + 5);
    if (b->rmdir_path) {
        privdirs_forget(b->rmdir_path);
        rmdir(b->rmdir_path);
    }
    free(b->rmdir_path);
    for (int i = 0; i < SRC_BUCKETS; i++)
        while (b->srcs[i]) {
            struct src *next = b->srcs[i]->next;
            free(b->srcs[i]);
            b->srcs[i] = next;
        }
    if (b->ep >= 0)
        close(b->ep);
    if (b->spare_fd >= 0)
        close(b->spare_fd);
    free(b->rbuf);
    free(b);
}

void broker_raise_nofile(void)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
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
    out->mem = b->own + bs_orphan_bytes(b->store);
}

void broker_set_log(struct broker *b, void (*log)(void *ctx, const char *line),
                    void *ctx)
{
    b->log = log;
    b->log_ctx = ctx;
}

void broker_on_auth(struct broker *b,
                    void (*fn)(void *ctx, const struct sockaddr *sa),
                    void *ctx)
{
    b->on_auth = fn;
    b->on_auth_ctx = ctx;
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
