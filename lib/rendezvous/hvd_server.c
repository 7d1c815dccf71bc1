/* hvd_server.c - see hvd_server.h.
 *
 * One thread: poll on the listening socket, an eventfd that says stop,
 * and each connection.  A connection reads one request (lib/rendezvous/http_req.c),
 * gets its answer from the store under the lock, writes it, shuts its
 * side down and reads what the client may still send until it closes:
 * closing with unread bytes would reset the connection and could lose
 * the answer (an early 413 before a body). */
#include "rendezvous/hvd_server.h"

#include <errno.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rendezvous/hvd_guard.h"
#include "util/clock.h"

enum { READING, WRITING, DRAINING };

struct conn {
    int fd, state;
    long start_ms, last_ms;
    struct hvd_source src;
    struct http_req req;
    char *out;
    size_t out_len, out_off;
    struct hvd_server *srv;
};

struct hvd_server {
    struct hvd_server_opts o;
    int lfd, wake, port, started;
    pthread_t thread;
    pthread_mutex_t lock;       /* the store, allow and logged */
    struct hvd_store *store;
    struct hvd_allow allow;     /* who may connect */
    struct conn *conns;
    int nconns;
    struct pollfd *pfds;
    unsigned logged;            /* LOG_* said this attempt */
};

/* The kinds of line said once per attempt: a store refusal, a connection
 * refused by hvd_verdict (bit 1 << verdict), one over its source's slots. */
enum { LOG_FULL = 1u << 8, LOG_SLOTS = 1u << 9 };

int hvd_answer(struct hvd_store *st, const struct http_request *r,
               const void **body, size_t *len, struct err *err)
{
    char *path = NULL, *key;
    int status = 400;

    *body = NULL;
    *len = 0;
    if (strcmp(r->method, "GET") && strcmp(r->method, "PUT") &&
        strcmp(r->method, "DELETE"))
        return 501;
    if (!(path = strdup(r->target + 1)))
        return 500;
    key = strchr(path, '/');
    if (!key || strchr(key + 1, '/'))
        goto out;   /* horovodrun's server takes exactly /scope/key */
    *key++ = '\0';
    if (r->method[0] == 'G') {
        *body = hvd_store_get(st, path, key, len);
        status = *body ? 200 : 404;
    } else if (r->method[0] == 'P') {
        status = !r->has_length ? 411 :
                 hvd_store_put(st, path, key, r->body, r->body_len, err) < 0 ?
                 507 : 200;
    } else {
        hvd_store_delete(st, path, key);
        status = 200;
    }
out:
    free(path);
    return status;
}

/* The whole answer into c->out; -1 when out of memory. */
static int set_answer(struct conn *c, int status, const void *body, size_t len)
{
    char head[160];
    int n = snprintf(head, sizeof head, "HTTP/1.0 %d %s\r\nContent-Length: %zu"
                     "\r\nConnection: close\r\n\r\n", status,
                     http_reason(status), len);

    free(c->out);
    c->out = malloc((size_t)n + len);
    if (!c->out)
        return -1;
    memcpy(c->out, head, (size_t)n);
    if (len)
        memcpy(c->out + n, body, len);
    c->out_len = (size_t)n + len;
    c->out_off = 0;
    c->state = WRITING;
    return 0;
}

/* http_req's callback: answer, and stop reading (one request each). */
static int on_request(void *ctx, const struct http_request *r)
{
    struct conn *c = ctx;
    struct hvd_server *s = c->srv;
    struct err err = { "" };
    const void *body;
    size_t len;
    int status, log;

    pthread_mutex_lock(&s->lock);
    status = hvd_answer(s->store, r, &body, &len, &err);
    if (set_answer(c, status, body, len) < 0)
        c->state = DRAINING;    /* no answer: the client retries */
    log = status == 507 && !(s->logged & LOG_FULL) && s->o.log;
    if (log)
        s->logged |= LOG_FULL;
    pthread_mutex_unlock(&s->lock);
    if (log)
        s->o.log(s->o.log_ctx, err.msg);
    return 1;
}

static void conn_close(struct hvd_server *s, int i)
{
    struct conn *c = &s->conns[i];

    close(c->fd);
    http_req_free(&c->req);
    free(c->out);
    s->conns[i] = s->conns[--s->nconns];
    s->conns[i].req.ctx = &s->conns[i];     /* the parser's callback's */
}

/* Say line (kind: a LOG_* bit) unless a line of its kind was said this
 * attempt. */
static void log_once(struct hvd_server *s, unsigned kind, const char *line)
{
    int log;

    pthread_mutex_lock(&s->lock);
    log = !(s->logged & kind) && s->o.log;
    s->logged |= kind;
    pthread_mutex_unlock(&s->lock);
    if (log)
        s->o.log(s->o.log_ctx, line);
}

/* The connections now held from src. */
static int source_count(const struct hvd_server *s,
                        const struct hvd_source *src)
{
    int n = 0;

    for (int i = 0; i < s->nconns; i++)
        n += hvd_same_source(&s->conns[i].src, src);
    return n;
}

/* May the connection fd from sa talk?  Its source into src; 0, or -1
 * after saying why not (once per kind). */
static int admit(struct hvd_server *s, int fd, const struct sockaddr *sa,
                 struct hvd_source *src)
{
    char who[INET6_ADDRSTRLEN], line[300], uid[32] = "";
    enum hvd_verdict v;

    if (hvd_addr_of(sa, &src->addr, NULL) < 0)
        return -1;
    src->owner = hvd_peer_owner(fd);
    pthread_mutex_lock(&s->lock);
    v = hvd_verdict(&s->allow, &src->addr, src->owner);
    pthread_mutex_unlock(&s->lock);
    hvd_addr_text(&src->addr, who, sizeof who);
    if (src->owner >= 0)
        snprintf(uid, sizeof uid, " (uid %ld)", src->owner);
    if (v != HVD_ALLOW) {
        snprintf(line, sizeof line, "refused a connection from %s%s: %s "
                 "(more such are refused without a word)", who, uid,
                 hvd_verdict_why(v));
        log_once(s, 1u << v, line);
        return -1;
    }
    if (source_count(s, src) >= s->o.max_per_source) {
        snprintf(line, sizeof line, "refused a connection from %s%s: it "
                 "holds %d connections already, the most one source may "
                 "(more such are refused without a word)", who, uid,
                 s->o.max_per_source);
        log_once(s, LOG_SLOTS, line);
        return -1;
    }
    return 0;
}

/* Connections accepted (or refused) at one wake-up, then the served ones'
 * turn: a flood of refused ones must not keep the thread here. */
#define ACCEPT_BURST 256

static void accept_all(struct hvd_server *s)
{
    for (int n = 0; n < ACCEPT_BURST && s->nconns < s->o.max_conns; n++) {
        struct conn *c = &s->conns[s->nconns];
        struct sockaddr_storage sa;
        socklen_t sl = sizeof sa;
        struct hvd_source src;
        int fd = accept4(s->lfd, (struct sockaddr *)&sa, &sl,
                         SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        if (admit(s, fd, (struct sockaddr *)&sa, &src) < 0) {
            close(fd);
            continue;
        }
        memset(c, 0, sizeof *c);
        c->fd = fd;
        c->srv = s;
        c->src = src;
        c->start_ms = c->last_ms = clock_ms();
        if (http_req_init(&c->req, 8192, s->o.max_body, on_request, c,
                          NULL) < 0) {
            close(fd);
            return;
        }
        s->nconns++;
    }
}

/* Bytes came (or the peer closed): parse, or throw away after answering.
 * 0 to keep the connection, -1 to close it. */
static int conn_read(struct conn *c)
{
    char buf[65536];
    struct err err = { "" };
    ssize_t n = read(c->fd, buf, sizeof buf);

    if (n < 0)
        return errno == EAGAIN || errno == EINTR ? 0 : -1;
    if (n == 0)
        return -1;      /* closed: finished, or gave up mid-request */
    if (c->state != READING)
        return 0;
    if (http_req_feed(&c->req, buf, (size_t)n, &err) < 0 &&
        set_answer(c, http_req_status(&c->req), NULL, 0) < 0)
        return -1;
    return 0;
}

/* Write what is left of the answer; then half-close and drain. */
static int conn_write(struct conn *c)
{
    ssize_t n = write(c->fd, c->out + c->out_off, c->out_len - c->out_off);

    if (n < 0)
        return errno == EAGAIN || errno == EINTR ? 0 : -1;
    c->out_off += (size_t)n;
    if (c->out_off == c->out_len) {
        shutdown(c->fd, SHUT_WR);
        c->state = DRAINING;
    }
    return 0;
}

static void conn_event(struct hvd_server *s, int i, short revents, long now)
{
    struct conn *c = &s->conns[i];
    int rc = 0;

    if (revents)
        c->last_ms = now;
    if (revents & (POLLIN | POLLHUP | POLLERR))
        rc = conn_read(c);
    if (rc == 0 && c->state == WRITING && (revents & POLLOUT))
        rc = conn_write(c);
    if (rc < 0 || hvd_expired(c->start_ms, c->last_ms, now,
                              s->o.deadline_ms, s->o.idle_ms))
        conn_close(s, i);
}

static void *serve(void *arg)
{
    struct hvd_server *s = arg;

    for (;;) {
        int n = s->nconns;
        s->pfds[0] = (struct pollfd){ .fd = s->wake, .events = POLLIN };
        s->pfds[1] = (struct pollfd){ .fd = s->lfd, .events =
                                      n < s->o.max_conns ? POLLIN : 0 };
        for (int i = 0; i < n; i++)
            s->pfds[2 + i] = (struct pollfd){ .fd = s->conns[i].fd,
                .events = s->conns[i].state == WRITING ? POLLOUT : POLLIN };
        if (poll(s->pfds, (nfds_t)n + 2, 1000) < 0 && errno != EINTR)
            break;
        if (s->pfds[0].revents)
            break;
        if (s->pfds[1].revents & POLLIN)
            accept_all(s);
        /* backwards: closing i moves the last one (done or new) into i */
        for (int i = n - 1; i >= 0; i--)
            conn_event(s, i, s->pfds[2 + i].revents, clock_ms());
    }
    return NULL;
}

/* Bind and listen on ip:port (numeric); the port the kernel gave. */
static int listen_on(struct hvd_server *s, struct err *err)
{
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
                              .ai_flags = AI_NUMERICHOST | AI_PASSIVE }, *res;
    struct sockaddr_storage sa;
    socklen_t sl = sizeof sa;
    char serv[16];
    int one = 1, rc;

    snprintf(serv, sizeof serv, "%d", s->o.port);
    if ((rc = getaddrinfo(s->o.ip, serv, &hints, &res)) != 0)
        return err_set(err, "Gloo rendezvous: cannot listen on %s: %s",
                       s->o.ip, gai_strerror(rc));
    s->lfd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s->lfd >= 0)
        setsockopt(s->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    rc = s->lfd >= 0 && bind(s->lfd, res->ai_addr, res->ai_addrlen) == 0 &&
         listen(s->lfd, 4096) == 0 &&
         getsockname(s->lfd, (struct sockaddr *)&sa, &sl) == 0 ? 0 : -1;
    freeaddrinfo(res);
    if (rc < 0)
        return err_set(err, "Gloo rendezvous: cannot listen on %s port %d: %s",
                       s->o.ip, s->o.port, strerror(errno));
    s->port = ntohs(sa.ss_family == AF_INET6 ?
                    ((struct sockaddr_in6 *)&sa)->sin6_port :
                    ((struct sockaddr_in *)&sa)->sin_port);
    return 0;
}

/* The thread takes no signal: dlrun's supervisor reads them. */
static int start_thread(struct hvd_server *s)
{
    sigset_t all, old;
    int rc;

    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    rc = pthread_create(&s->thread, NULL, serve, s);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    s->started = rc == 0;
    return rc == 0 ? 0 : -1;
}

struct hvd_server *hvd_server_start(const struct hvd_server_opts *o,
                                    struct err *err)
{
    struct hvd_server *s = calloc(1, sizeof *s);

    if (!s) {
        err_set(err, "out of memory");
        return NULL;
    }
    s->o = *o;
    s->lfd = s->wake = -1;
    if (s->o.max_conns < 1)
        s->o.max_conns = 1;
    if (s->o.max_per_source < 1 || s->o.max_per_source > s->o.max_conns)
        s->o.max_per_source = s->o.max_conns;
    if (s->o.deadline_ms < 1)
        s->o.deadline_ms = s->o.idle_ms;
    if (!s->o.other_uid)
        s->o.uid = geteuid();
    pthread_mutex_init(&s->lock, NULL);
    s->conns = calloc((size_t)s->o.max_conns, sizeof *s->conns);
    s->pfds = calloc((size_t)s->o.max_conns + 2, sizeof *s->pfds);
    s->wake = eventfd(0, EFD_CLOEXEC);
    if (!s->conns || !s->pfds || s->wake < 0 ||
        !(s->store = hvd_store_create(o->max_bytes, err)) ||
        hvd_allow_build(&s->allow, s->o.uid, NULL, 0, err) < 0) {
        err_set(err, "Gloo rendezvous: out of resources");
        goto fail;
    }
    if (listen_on(s, err) < 0)
        goto fail;
    if (start_thread(s) < 0) {
        err_set(err, "Gloo rendezvous: cannot start the server's thread");
        goto fail;
    }
    return s;
fail:
    hvd_server_stop(s);
    return NULL;
}

int hvd_server_port(const struct hvd_server *s)
{
    return s->port;
}

/* horovodrun's scope sizes for p into st. */
static int declare_scopes(struct hvd_store *st, const struct plan *p,
                          struct err *err)
{
    char name[300];
    int maxlocal = 0;

    if (hvd_store_scope_size(st, "global", p->nranks, err) < 0)
        return -1;
    for (int i = 0; i < p->nnodes; i++) {
        snprintf(name, sizeof name, "local_%s",
                 p->nodes[i].host ? p->nodes[i].host : "");
        if (hvd_store_scope_size(st, name, p->nodes[i].nranks, err) < 0)
            return -1;
        if (p->nodes[i].nranks > maxlocal)
            maxlocal = p->nodes[i].nranks;
    }
    for (int l = 0; l < maxlocal; l++) {
        int nodes = 0;
        for (int i = 0; i < p->nnodes; i++)
            nodes += p->nodes[i].nranks > l;
        snprintf(name, sizeof name, "cross_%d", l);
        if (hvd_store_scope_size(st, name, nodes, err) < 0)
            return -1;
    }
    return 0;
}

/* Who may connect for plan p: the job's user here, and p's nodes unless
 * the server listens on loopback (no other host reaches it). */
static int allow_plan(const struct hvd_server *s, const struct plan *p,
                      struct hvd_allow *a, struct err *err)
{
    struct hvd_addr ip;
    const char **names = NULL;
    int n = 0, rc;

    if (hvd_addr_parse(s->o.ip, &ip) < 0 || !hvd_addr_loopback(&ip)) {
        if (!(names = calloc((size_t)p->nnodes + 1, sizeof *names)))
            return err_set(err, "out of memory");
        for (n = 0; n < p->nnodes; n++)
            names[n] = plan_addr_name(p, n);
    }
    rc = hvd_allow_build(a, s->o.uid, names, n, err);
    free(names);
    return rc;
}

int hvd_server_begin(struct hvd_server *s, const struct plan *p,
                     struct err *err)
{
    struct hvd_allow a, old;
    int rc;

    if (allow_plan(s, p, &a, err) < 0)
        return -1;
    pthread_mutex_lock(&s->lock);
    old = s->allow;
    s->allow = a;
    hvd_store_clear(s->store);
    s->logged = 0;
    rc = declare_scopes(s->store, p, err);
    pthread_mutex_unlock(&s->lock);
    hvd_allow_free(&old);
    return rc;
}

void hvd_server_allow(struct hvd_server *s, const struct sockaddr *sa)
{
    struct hvd_addr x;

    if (hvd_addr_of(sa, &x, NULL) < 0)
        return;
    pthread_mutex_lock(&s->lock);
    hvd_allow_add(&s->allow, &x);
    pthread_mutex_unlock(&s->lock);
}

void hvd_server_stop(struct hvd_server *s)
{
    if (!s)
        return;
    if (s->started && eventfd_write(s->wake, 1) == 0)
        pthread_join(s->thread, NULL);
    while (s->nconns > 0)
        conn_close(s, s->nconns - 1);
    if (s->lfd >= 0)
        close(s->lfd);
    if (s->wake >= 0)
        close(s->wake);
    hvd_store_destroy(s->store);
    hvd_allow_free(&s->allow);
    pthread_mutex_destroy(&s->lock);
    free(s->conns);
    free(s->pfds);
    free(s);
}

int hvd_iface_of(const char *ip, char *out, size_t len, struct err *err)
{
    struct ifaddrs *all = NULL;
    char host[NI_MAXHOST];
    int rc = -1;

    if (getifaddrs(&all) < 0)
        return err_set(err, "cannot list the network interfaces: %s",
                       strerror(errno));
    for (struct ifaddrs *i = all; i && rc < 0; i = i->ifa_next) {
        int fam = i->ifa_addr ? i->ifa_addr->sa_family : -1;
        if ((fam != AF_INET && fam != AF_INET6) ||
            getnameinfo(i->ifa_addr, fam == AF_INET ? sizeof(struct sockaddr_in)
                        : sizeof(struct sockaddr_in6), host, sizeof host,
                        NULL, 0, NI_NUMERICHOST) != 0)
            continue;
        host[strcspn(host, "%")] = '\0';    /* fe80::1%eth0 */
        if (strcmp(host, ip) == 0) {
            snprintf(out, len, "%s", i->ifa_name);
            rc = 0;
        }
    }
    freeifaddrs(all);
    return rc == 0 ? 0 : err_set(err, "no interface of this host has address "
                                 "%s (name one with --iface)", ip);
}
