/* client.c - see client.h; also the stable wrappers of dlrun.h. */
#include "rendezvous/client.h"

#include <dlfcn.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* libdlrun.so is built with -fvisibility=hidden: what dlrun.h declares is
 * its whole exported API. */
#pragma GCC visibility push(default)
#include "../../contrib/include/dlrun.h"
#pragma GCC visibility pop
#include "rendezvous/broker_proto.h"
#include "rendezvous/token.h"
#include "util/clock.h"

/* How long to wait for an answer beyond the request's own timeout: the
 * broker answers at the deadline, this only catches a hung broker. */
#define ANSWER_GRACE_MS 30000
#define NCCL_KEY_PREFIX "dlrun.nccl/"

struct client {
    int fd;
    struct bp_conn pc;
    uint32_t next_id;
    size_t max_value;
    int grace_ms;                   /* ANSWER_GRACE_MS unless set */
    char broken[ERR_MSG_MAX];       /* why the connection is unusable */
    uint8_t notice;                 /* 1 + the status of the broker's
                                       notice (id 0) before it closed */
    /* the answer being waited for */
    uint32_t want_id;
    uint8_t want_op;
    int got;
    uint8_t status;
    int64_t arg;
    uint8_t *val;                   /* owned until handed to the caller */
    size_t vlen;
    uint8_t rbuf[65536];
};

/* ms left until deadline (-1: none), at least 0. */
static int left_ms(int64_t deadline)
{
    int64_t left;

    if (deadline < 0)
        return -1;
    left = deadline - clock_ms();
    return left < 0 ? 0 : left > 1000000000 ? 1000000000 : (int)left;
}

int client_parse_addr(const char *broker, char *host, size_t len, int *port,
                      struct err *err)
{
    const char *colon, *h = broker, *h_end;
    char *end = NULL;
    long p;

    if (!broker || !*broker)
        return err_set(err, "empty broker address (want HOST:PORT)");
    if (*broker == '[') {
        h = broker + 1;
        h_end = strchr(h, ']');
        colon = h_end && h_end[1] == ':' ? h_end + 1 : NULL;
    } else {
        colon = strrchr(broker, ':');
        h_end = colon;
        if (colon && memchr(broker, ':', (size_t)(colon - broker)))
            colon = NULL;   /* a bare IPv6 address: brackets are needed */
    }
    if (!colon || h_end == h || (size_t)(h_end - h) >= len)
        return err_set(err, "broker address '%s' is not HOST:PORT, "
                       "[IPV6]:PORT or unix:PATH", broker);
    errno = 0;
    p = strtol(colon + 1, &end, 10);
    if (errno || end == colon + 1 || *end || p < 1 || p > 65535)
        return err_set(err, "broker address '%s': bad port", broker);
    memcpy(host, h, (size_t)(h_end - h));
    host[h_end - h] = '\0';
    *port = (int)p;
    return 0;
}

/* ---- connecting ---- */

/* One non-blocking connect to r, waited for until deadline.  The fd, or -1
 * with errno. */
static int connect_one(const struct addrinfo *r, int64_t deadline)
{
    int fd = socket(r->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
                    0);
    struct pollfd pfd = { .fd = fd, .events = POLLOUT };
    int soerr = 0, rc, saved;
    socklen_t sl = sizeof soerr;

    if (fd < 0)
        return -1;
    if (connect(fd, r->ai_addr, r->ai_addrlen) == 0)
        return fd;
    if (errno != EINPROGRESS)
        goto fail;
    do
        rc = poll(&pfd, 1, left_ms(deadline));
    while (rc < 0 && errno == EINTR);
    if (rc == 0)
        errno = ETIMEDOUT;
    if (rc <= 0)
        goto fail;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 && !soerr)
        return fd;
    errno = soerr ? soerr : errno;
fail:
    saved = errno;
    close(fd);
    errno = saved;
    return -1;
}

/* Sleep before attempt number `tries` (from 1): 20 ms doubling to 1 s,
 * with jitter so that ranks turned away together do not come back
 * together; never past deadline. */
static void backoff(int tries, int64_t deadline)
{
    int ms = tries < 6 ? 20 << (tries - 1) : 1000;

    ms = ms / 2 + (int)((unsigned)(clock_ms() ^ getpid()) % (unsigned)(ms / 2 + 1));
    ms = ms < left_ms(deadline) ? ms : left_ms(deadline);
    nanosleep(&(struct timespec){ ms / 1000, ms % 1000 * 1000000L }, NULL);
}

/* Connect to host:port, trying again while it refuses (the broker may not
 * be listening yet) until deadline.  The fd, or -1 with err. */
static int dial(const char *host, int port, int64_t deadline, struct err *err)
{
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL, *r;
    char serv[16];
    int fd = -1, saved = ECONNREFUSED, rc;

    snprintf(serv, sizeof serv, "%d", port);
    rc = getaddrinfo(host, serv, &hints, &res);
    if (rc != 0)
        return err_set(err, "cannot resolve broker host %s: %s", host,
                       gai_strerror(rc));
    for (int tries = 1;; tries++) {
        for (r = res; r && fd < 0; r = r->ai_next)
            if ((fd = connect_one(r, deadline)) < 0)
                saved = errno;
        if (fd >= 0 || saved != ECONNREFUSED || left_ms(deadline) == 0)
            break;
        backoff(tries, deadline);
    }
    freeaddrinfo(res);
    if (fd < 0)
        return err_set(err, "cannot connect to the broker at %s:%d: %s",
                       host, port, strerror(saved));
    return fd;
}

/* Connect to the Unix socket at path, trying again while it is not there
 * yet, refuses, or its backlog is full, until deadline.  The fd (non-
 * blocking), or -1 with err. */
static int dial_unix(const char *path, int64_t deadline, struct err *err)
{
    struct sockaddr_un un = { .sun_family = AF_UNIX };
    int fd = -1, saved = 0;

    if (strlen(path) >= sizeof un.sun_path)
        return err_set(err, "broker address 'unix:%s': the path is longer "
                       "than %zu bytes", path, sizeof un.sun_path - 1);
    memcpy(un.sun_path, path, strlen(path) + 1);
    for (int tries = 1;; tries++) {
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd >= 0 && connect(fd, (struct sockaddr *)&un, sizeof un) == 0)
            return fd;
        saved = errno;
        if (fd >= 0)
            close(fd);
        if ((saved != ENOENT && saved != ECONNREFUSED && saved != EAGAIN) ||
            left_ms(deadline) == 0)
            break;
        backoff(tries, deadline);
    }
    return err_set(err, "cannot connect to the broker at unix:%s: %s", path,
                   strerror(saved));
}

/* dial or dial_unix, by the form of broker. */
static int dial_any(const char *broker, int64_t deadline, struct err *err)
{
    char host[256];
    int port;

    if (strncmp(broker, "unix:", 5) == 0)
        return dial_unix(broker + 5, deadline, err);
    if (client_parse_addr(broker, host, sizeof host, &port, err) < 0)
        return -1;
    return dial(host, port, deadline, err);
}

int client_dial(const char *broker, int timeout_ms, struct err *err)
{
    return dial_any(broker, clock_ms() + timeout_ms, err);
}

/* ---- one request, one answer ---- */

/* The connection is unusable from now on; c->broken says why. */
static int conn_lost(struct client *c, struct err *err)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    return err_set(err, "%s", c->broken);
}

static int on_answer(void *ctx, const struct bp_msg *m)
{
    struct client *c = ctx;

    /* the broker's notice before it closes (see broker.c's notice()) */
    if (m->id == 0 && m->op == BP_AUTH) {
        c->notice = (uint8_t)(1 + m->status);
        return -1;
    }
    if (c->got || m->id != c->want_id || m->op != c->want_op)
        return -1;
    if (m->vlen && !(c->val = malloc(m->vlen + 1)))
        return -1;
    if (m->vlen) {
        memcpy(c->val, m->val, m->vlen);
        c->val[m->vlen] = '\0';
    }
    c->vlen = m->vlen;
    c->status = m->status;
    c->arg = m->arg;
    c->got = 1;
    return 0;
}

/* Skip n sent bytes in the iovec array *iov of *cnt entries. */
static void iov_advance(struct iovec **iov, size_t *cnt, size_t n)
{
    while (*cnt > 0 && n >= (*iov)->iov_len) {
        n -= (*iov)->iov_len;
        (*iov)++;
        (*cnt)--;
    }
    if (*cnt > 0) {
        (*iov)->iov_base = (uint8_t *)(*iov)->iov_base + n;
        (*iov)->iov_len -= n;
    }
}

static int send_frame(struct client *c, const struct bp_msg *m,
                      int64_t deadline, struct err *err)
{
    uint8_t hdr[BP_HDR_LEN];
    struct iovec iov[3] = { { hdr, BP_HDR_LEN }, { (void *)m->key, m->klen },
                            { (void *)m->val, m->vlen } };
    struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 3 };
    struct pollfd pfd = { .fd = c->fd, .events = POLLOUT };
    ssize_t n;

    bp_encode_hdr(hdr, m);
    while (mh.msg_iovlen > 0) {
        n = sendmsg(c->fd, &mh, MSG_NOSIGNAL);
        if (n >= 0) {
            iov_advance(&mh.msg_iov, &mh.msg_iovlen, (size_t)n);
            continue;
        }
        if (errno == EINTR)
            continue;
        if ((errno == EAGAIN || errno == EWOULDBLOCK) &&
            poll(&pfd, 1, left_ms(deadline)) != 0)
            continue;
        snprintf(c->broken, sizeof c->broken, "sending to the broker: %s",
                 errno == EAGAIN || errno == EWOULDBLOCK ? "timed out"
                                                         : strerror(errno));
        return conn_lost(c, err);
    }
    return 0;
}

/* Read until the awaited answer is in, or deadline (-1: none). */
static int recv_answer(struct client *c, int64_t deadline, struct err *err)
{
    struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
    struct err perr = { "" };
    ssize_t n;
    int rc;

    while (!c->got) {
        rc = poll(&pfd, 1, left_ms(deadline));
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc == 0) {
            snprintf(c->broken, sizeof c->broken, "no answer from the "
                     "broker in time (is it overloaded or stopped?)");
            return conn_lost(c, err);
        }
        n = recv(c->fd, c->rbuf, sizeof c->rbuf, 0);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n > 0 && bp_feed(&c->pc, c->rbuf, (size_t)n, &perr) == 0)
            continue;
        if (n == 0)
            snprintf(c->broken, sizeof c->broken, "the broker closed the "
                     "connection");
        else if (n < 0)
            snprintf(c->broken, sizeof c->broken, "reading from the "
                     "broker: %s", strerror(errno));
        else if (c->notice)
            snprintf(c->broken, sizeof c->broken, "the broker closed the "
                     "connection: %s", bp_status_name(c->notice - 1));
        else
            snprintf(c->broken, sizeof c->broken, "bad answer from the "
                     "broker: %s", perr.msg);
        return conn_lost(c, err);
    }
    return 0;
}

/* Send m (its id is set here) and wait for its answer until deadline;
 * the answer is then in c->status, c->arg, c->val and c->vlen. */
static int transact(struct client *c, struct bp_msg *m, int64_t deadline,
                    struct err *err)
{
    if (c->fd < 0)
        return err_set(err, "%s", c->broken);
    free(c->val);
    c->val = NULL;
    c->vlen = 0;
    c->got = 0;
    m->id = c->want_id = c->next_id++;
    if (!c->next_id)
        c->next_id = 1;     /* id 0 is the broker's notice */
    c->want_op = m->op;
    if (send_frame(c, m, clock_ms() + c->grace_ms, err) < 0)
        return -1;
    return recv_answer(c, deadline, err);
}

/* When to give up on the answer to a request that waits timeout_ms. */
static int64_t answer_deadline(const struct client *c, int timeout_ms)
{
    return timeout_ms < 0 ? -1 : clock_ms() + timeout_ms + c->grace_ms;
}

void client_set_answer_grace(struct client *c, int ms)
{
    c->grace_ms = ms;
}

static uint32_t wire_timeout(int timeout_ms)
{
    return timeout_ms < 0 ? BP_WAIT_FOREVER : (uint32_t)timeout_ms;
}

/* The answer's status as a return code, with err saying what happened to
 * request what on key. */
static int status_rc(const struct client *c, const char *what,
                     const char *key, struct err *err)
{
    static const char *const invalid[] = {
        [BP_PUT] = "an empty key",
        [BP_GET] = "an empty key",
        [BP_ADD] = "the key holds something other than an integer, or the "
                   "sum overflows",
        [BP_BARRIER] = "the count is 0 or differs from the count the "
                       "others passed",
        [BP_DEL] = "an empty key",
    };

    switch (c->status) {
    case BP_OK:
        return CLIENT_OK;
    case BP_NOTFOUND:
        err_set(err, "%s '%s': no such key", what, key);
        return CLIENT_NOTFOUND;
    case BP_TIMEOUT:
        err_set(err, "%s '%s': timed out", what, key);
        return CLIENT_TIMEOUT;
    case BP_INVALID:
        err_set(err, "%s '%s': refused by the broker: %s", what, key,
                c->want_op <= BP_DEL && invalid[c->want_op] ?
                invalid[c->want_op] : "invalid");
        return CLIENT_REFUSED;
    default:
        err_set(err, "%s '%s': refused by the broker: its limits are "
                "reached (store full, or too many requests waiting)",
                what, key);
        return CLIENT_REFUSED;
    }
}

static int set_key(struct bp_msg *m, const char *key, struct err *err)
{
    size_t n = key ? strlen(key) : 0;

    if (n < 1 || n > BP_MAX_KEY)
        return err_set(err, "key of %zu bytes (must be 1 to %d)", n,
                       BP_MAX_KEY);
    m->key = (const uint8_t *)key;
    m->klen = n;
    return 0;
}

/* AUTH on c's new connection: 0 done, 1 worth another connection (the
 * broker had no room, or closed before answering), -1 failed, with err. */
static int authenticate(struct client *c, const uint8_t tok[TOKEN_BYTES],
                        int64_t deadline, struct err *err)
{
    struct bp_msg m = { .op = BP_AUTH, .arg = BP_VERSION, .val = tok,
                        .vlen = TOKEN_BYTES };

    if (transact(c, &m, deadline, err) == 0) {
        if (c->status != BP_OK || c->arg < 1)
            return err_set(err, "the broker refused AUTH");
        /* never more than any broker may be set to */
        c->max_value = (uint64_t)c->arg < BP_MAX_VALUE_CEILING ?
                       (size_t)c->arg : BP_MAX_VALUE_CEILING;
        return 0;
    }
    if (c->notice == 1 + BP_INVALID)
        return err_set(err, "the broker closed the connection at AUTH: the "
                       "token (DLRUN_TOKEN) is not this broker's");
    if (c->notice || strncmp(c->broken, "the broker closed", 17) == 0 ||
        strstr(c->broken, strerror(ECONNRESET)) ||
        strstr(c->broken, strerror(EPIPE)))
        return 1;
    return -1;
}

/* Why the last of tries connections was turned away, into err. */
static void turned_away(const struct client *c, const char *broker, int tries,
                        int ms, struct err *err)
{
    if (c->notice == 1 + BP_LIMIT)
        err_set(err, "the broker at %s had no room for a new connection "
                "(%d tries over %d ms): its connection table is full of "
                "connections that do not authenticate (a flood?); see "
                "dlrun-broker(7), LIMITS", broker, tries, ms);
    else if (c->notice == 1 + BP_TIMEOUT)
        err_set(err, "the broker at %s did not get our AUTH in time (%d "
                "tries over %d ms): the machine is overloaded", broker,
                tries, ms);
    else
        err_set(err, "the broker at %s closed the connection before "
                "answering AUTH (%d tries over %d ms): it is overloaded, or "
                "an older broker that does so for a wrong token "
                "(DLRUN_TOKEN)", broker, tries, ms);
}

/* Connect and authenticate, on a new connection each time the broker
 * turns us away, until deadline. */
static int connect_auth(struct client *c, const char *broker,
                        const uint8_t tok[TOKEN_BYTES], int64_t deadline,
                        struct err *err)
{
    int64_t start = clock_ms();
    int rc = 1, tries = 0, dialed;
    uint8_t last = 0;

    while (rc == 1) {
        if (tries++)
            backoff(tries - 1, deadline);
        bp_conn_free(&c->pc);
        bp_conn_init(&c->pc, BP_CLIENT, NULL, BP_MAX_VALUE_CEILING, on_answer,
                     c);
        last = c->notice ? c->notice : last;
        c->notice = 0;
        c->fd = dial_any(broker, deadline, err);
        dialed = c->fd >= 0;
        rc = dialed ? authenticate(c, tok, deadline, err) : -1;
        /* the deadline came during a try after the broker turned us away:
         * that is what happened, not "no answer" */
        if ((rc == 1 || (rc < 0 && dialed && last && !c->notice)) &&
            left_ms(deadline) == 0) {
            c->notice = c->notice ? c->notice : last;
            turned_away(c, broker, tries, (int)(clock_ms() - start), err);
            rc = -1;
        }
    }
    return rc;
}

struct client *client_connect(const char *broker, const char *token_hex,
                              int timeout_ms, struct err *err)
{
    int64_t deadline = clock_ms() + (timeout_ms > 0 ? timeout_ms : 1);
    struct client *c = NULL;
    uint8_t tok[TOKEN_BYTES];
    char host[256];
    int port;

    /* checked before any wait: a typo is not retried */
    if ((!broker || strncmp(broker, "unix:", 5) != 0) &&
        client_parse_addr(broker, host, sizeof host, &port, err) < 0)
        return NULL;
    if (token_from_hex(token_hex, tok, err) < 0)
        return NULL;
    c = calloc(1, sizeof *c);
    if (!c) {
        err_set(err, "out of memory");
        goto fail;
    }
    c->grace_ms = ANSWER_GRACE_MS;
    c->next_id = 1;
    c->fd = -1;
    if (connect_auth(c, broker, tok, deadline, err) < 0)
        goto fail;
    explicit_bzero(tok, sizeof tok);
    return c;
fail:
    explicit_bzero(tok, sizeof tok);
    client_close(c);
    return NULL;
}

struct client *client_from_env(int timeout_ms, struct err *err)
{
    const char *broker = getenv("DLRUN_BROKER"), *tok = getenv("DLRUN_TOKEN");
    struct client *c;

    if (!broker || !*broker)
        err_set(err, "DLRUN_BROKER is not set (dlrun sets it in multi-node "
                "jobs; `dlrun broker` prints one)");
    else if (!tok || !*tok)
        err_set(err, "DLRUN_TOKEN is not set (it comes with DLRUN_BROKER)");
    if (!broker || !*broker || !tok || !*tok)
        return NULL;
    c = client_connect(broker, tok, timeout_ms, err);
    if (!c && tok && strlen(tok) != TOKEN_HEX_LEN)
        err_prefix(err, "DLRUN_TOKEN");
    return c;
}

void client_close(struct client *c)
{
    if (!c)
        return;
    if (c->fd >= 0)
        close(c->fd);
    bp_conn_free(&c->pc);
    free(c->val);
    free(c);
}

size_t client_max_value(const struct client *c)
{
    return c->max_value;
}

/* ---- operations ---- */

int client_put(struct client *c, const char *key, const void *val,
               size_t len, struct err *err)
{
    struct bp_msg m = { .op = BP_PUT, .val = val, .vlen = len };

    if (set_key(&m, key, err) < 0)
        return CLIENT_ERROR;
    if (len > c->max_value)
        return err_set(err, "put '%s': value of %zu bytes (the broker "
                       "takes at most %zu)", key, len, c->max_value);
    if (transact(c, &m, answer_deadline(c, 0), err) < 0)
        return CLIENT_ERROR;
    return status_rc(c, "put", key, err);
}

int client_get(struct client *c, const char *key, int timeout_ms,
               void **val, size_t *len, struct err *err)
{
    struct bp_msg m = { .op = BP_GET, .timeout_ms = wire_timeout(timeout_ms) };
    int rc;

    *val = NULL;
    *len = 0;
    if (set_key(&m, key, err) < 0 ||
        transact(c, &m, answer_deadline(c, timeout_ms), err) < 0)
        return CLIENT_ERROR;
    rc = status_rc(c, "get", key, err);
    if (rc != CLIENT_OK)
        return rc;
    /* an empty value is still a buffer, so callers need not test NULL */
    *val = c->val ? (void *)c->val : calloc(1, 1);
    *len = c->vlen;
    c->val = NULL;
    if (!*val)
        return err_set(err, "out of memory");
    return CLIENT_OK;
}

int client_add(struct client *c, const char *key, int64_t delta,
               int64_t *result, struct err *err)
{
    struct bp_msg m = { .op = BP_ADD, .arg = delta };
    int rc;

    if (set_key(&m, key, err) < 0 ||
        transact(c, &m, answer_deadline(c, 0), err) < 0)
        return CLIENT_ERROR;
    rc = status_rc(c, "add", key, err);
    if (rc == CLIENT_OK && result)
        *result = c->arg;
    return rc;
}

int client_barrier(struct client *c, const char *name, uint32_t count,
                   int timeout_ms, int64_t *gen, struct err *err)
{
    struct bp_msg m = { .op = BP_BARRIER, .arg = count,
                        .timeout_ms = wire_timeout(timeout_ms) };
    int rc;

    if (set_key(&m, name, err) < 0 ||
        transact(c, &m, answer_deadline(c, timeout_ms), err) < 0)
        return CLIENT_ERROR;
    rc = status_rc(c, "barrier", name, err);
    if (rc == CLIENT_OK && gen)
        *gen = c->arg;
    return rc;
}

int client_del(struct client *c, const char *key, struct err *err)
{
    struct bp_msg m = { .op = BP_DEL };

    if (set_key(&m, key, err) < 0 ||
        transact(c, &m, answer_deadline(c, 0), err) < 0)
        return CLIENT_ERROR;
    return status_rc(c, "del", key, err);
}

/* ---- the NCCL unique id ---- */

struct nccl_unique_id {
    char internal[CLIENT_NCCL_ID_BYTES];
};

/* ncclGetUniqueId from NCCL loaded now.  The library is never unloaded:
 * the id names a listening socket served by a thread inside NCCL. */
static int nccl_create(uint8_t id[CLIENT_NCCL_ID_BYTES], struct err *err)
{
    const char *lib = getenv("DLRUN_NCCL_LIBRARY");
    int (*get_id)(struct nccl_unique_id *) = NULL;
    struct nccl_unique_id uid = { { 0 } };
    void *h, *sym;
    int rc;

    if (!lib || !*lib)
        lib = "libnccl.so.2";
    h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return err_set(err, "cannot load NCCL: %s (install NCCL, or set "
                       "DLRUN_NCCL_LIBRARY to the path of libnccl.so.2)",
                       dlerror());
    sym = dlsym(h, "ncclGetUniqueId");
    if (!sym)
        return err_set(err, "%s has no ncclGetUniqueId", lib);
    /* POSIX guarantees a data pointer from dlsym converts to a function
     * pointer; memcpy says so without a cast ISO C frowns upon */
    memcpy(&get_id, &sym, sizeof get_id);
    rc = get_id(&uid);
    if (rc != 0)
        return err_set(err, "ncclGetUniqueId failed (ncclResult_t %d)", rc);
    memcpy(id, uid.internal, CLIENT_NCCL_ID_BYTES);
    return 0;
}

/* The creator's side: make the id and publish it, or publish why not
 * (as text, never CLIENT_NCCL_ID_BYTES long, so waiters can tell). */
static int nccl_publish(struct client *c, const char *key,
                        uint8_t id[CLIENT_NCCL_ID_BYTES], struct err *err)
{
    char why[CLIENT_NCCL_ID_BYTES - 8];
    struct err perr = { "" };
    int n;

    if (nccl_create(id, err) == 0)
        return client_put(c, key, id, CLIENT_NCCL_ID_BYTES, err);
    n = snprintf(why, sizeof why, "error: %s", err->msg);
    client_put(c, key, why, n < (int)sizeof why ? (size_t)n : sizeof why - 1,
               &perr);
    return CLIENT_ERROR;
}

static int nccl_fetch(struct client *c, const char *name, const char *key,
                      int timeout_ms, uint8_t id[CLIENT_NCCL_ID_BYTES],
                      struct err *err)
{
    void *val = NULL;
    size_t len = 0;
    int rc = client_get(c, key, timeout_ms, &val, &len, err);

    if (rc == CLIENT_TIMEOUT)
        err_set(err, "NCCL id of group '%s': not published in time (did "
                "the group's first rank start?)", name);
    else if (rc == CLIENT_OK && len == CLIENT_NCCL_ID_BYTES)
        memcpy(id, val, len);
    else if (rc == CLIENT_OK) {
        rc = CLIENT_ERROR;
        err_set(err, "NCCL id of group '%s': the rank that creates it "
                "failed: %s", name, strncmp(val, "error: ", 7) == 0 ?
                (char *)val + 7 : "(not an id)");
    }
    free(val);
    return rc;
}

int client_nccl_unique_id(struct client *c, const char *name, int timeout_ms,
                          uint8_t id[CLIENT_NCCL_ID_BYTES], struct err *err)
{
    char key[BP_MAX_KEY + 1], claim[BP_MAX_KEY + 1];
    int64_t arrival = 0;
    int rc;

    if (!name || !*name ||
        strlen(name) + sizeof NCCL_KEY_PREFIX + 6 > BP_MAX_KEY)
        return err_set(err, "NCCL group name must be 1 to %zu bytes",
                       BP_MAX_KEY - sizeof NCCL_KEY_PREFIX - 6);
    snprintf(key, sizeof key, NCCL_KEY_PREFIX "%s", name);
    snprintf(claim, sizeof claim, NCCL_KEY_PREFIX "%s.claim", name);
    /* the first to arrive creates: no rank numbers needed, and exactly
     * one creator however the group was formed */
    rc = client_add(c, claim, 1, &arrival, err);
    if (rc != CLIENT_OK)
        return rc;
    if (arrival == 1)
        return nccl_publish(c, key, id, err);
    return nccl_fetch(c, name, key, timeout_ms, id, err);
}

/* ---- dlrun.h: the stable API over the above ---- */

_Static_assert((int)DLRUN_ERROR == (int)CLIENT_ERROR &&
               (int)DLRUN_TIMEOUT == (int)CLIENT_TIMEOUT &&
               (int)DLRUN_NOTFOUND == (int)CLIENT_NOTFOUND &&
               (int)DLRUN_REFUSED == (int)CLIENT_REFUSED &&
               DLRUN_NCCL_ID_BYTES == CLIENT_NCCL_ID_BYTES &&
               DLRUN_FOREVER == CLIENT_FOREVER, "dlrun.h and client.h agree");

#define ENV_CONNECT_MS 30000
#define NCCL_WAIT_MS 600000

struct dlrun_kv {
    struct client *c;
};

static _Thread_local char last_error[ERR_MSG_MAX];

/* Keep e's message for dlrun_last_error() when rc is a failure. */
static int keep(int rc, const struct err *e)
{
    if (rc < 0)
        snprintf(last_error, sizeof last_error, "%s", e->msg);
    return rc;
}

const char *dlrun_last_error(void)
{
    return last_error;
}

static dlrun_kv *wrap(struct client *c, const struct err *e)
{
    dlrun_kv *kv = c ? malloc(sizeof *kv) : NULL;

    if (!kv) {
        keep(-1, c ? &(struct err){ "out of memory" } : e);
        client_close(c);
        return NULL;
    }
    kv->c = c;
    return kv;
}

dlrun_kv *dlrun_kv_connect(void)
{
    struct err e = { "" };

    return wrap(client_from_env(ENV_CONNECT_MS, &e), &e);
}

dlrun_kv *dlrun_kv_connect_to(const char *broker, const char *token,
                              int timeout_ms)
{
    struct err e = { "" };

    return wrap(client_connect(broker, token, timeout_ms, &e), &e);
}

void dlrun_kv_close(dlrun_kv *kv)
{
    if (kv)
        client_close(kv->c);
    free(kv);
}

int dlrun_kv_put(dlrun_kv *kv, const char *key, const void *value, size_t len)
{
    struct err e = { "" };

    return keep(client_put(kv->c, key, value, len, &e), &e);
}

int dlrun_kv_get(dlrun_kv *kv, const char *key, int timeout_ms, void **value,
                 size_t *len)
{
    struct err e = { "" };

    return keep(client_get(kv->c, key, timeout_ms, value, len, &e), &e);
}

int dlrun_kv_add(dlrun_kv *kv, const char *key, int64_t delta,
                 int64_t *result)
{
    struct err e = { "" };

    return keep(client_add(kv->c, key, delta, result, &e), &e);
}

int dlrun_kv_barrier(dlrun_kv *kv, const char *name, unsigned count,
                     int timeout_ms)
{
    struct err e = { "" };

    return keep(client_barrier(kv->c, name, count, timeout_ms, NULL, &e), &e);
}

int dlrun_kv_del(dlrun_kv *kv, const char *key)
{
    struct err e = { "" };

    return keep(client_del(kv->c, key, &e), &e);
}

int dlrun_nccl_unique_id(const char *name, void *id)
{
    struct err e = { "" };
    struct client *c = client_from_env(ENV_CONNECT_MS, &e);
    int rc;

    if (!c)
        return keep(CLIENT_ERROR, &e);
    rc = client_nccl_unique_id(c, name, NCCL_WAIT_MS, id, &e);
    client_close(c);
    return keep(rc, &e);
}

/* This rank's own step counter, "dlrun.progress.RANK" (the straggler
 * judge's), into key; "" when DLRUN_RANK names no rank. */
static void rank_progress_key(char *key, size_t len)
{
    const char *r = getenv("DLRUN_RANK");
    char *end = NULL;
    long v = r ? strtol(r, &end, 10) : -1;

    key[0] = '\0';
    if (r && *r && end && *end == '\0' && v >= 0 && v < 1000000000L)
        snprintf(key, len, "dlrun.progress.%ld", v);
}

/* One connection for the process, made at the first call; the mutex
 * makes it one request at a time whatever thread reports.  The job's
 * counter (--stall-timeout's), then the rank's (the step rates). */
int dlrun_progress(void)
{
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    static dlrun_kv *kv;
    static char key[64];
    int rc;

    pthread_mutex_lock(&mu);
    if (!kv)
        kv = dlrun_kv_connect();
    if (kv && !key[0])
        rank_progress_key(key, sizeof key);
    rc = kv ? dlrun_kv_add(kv, "dlrun.progress", 1, NULL) : DLRUN_ERROR;
    if (rc == DLRUN_OK && key[0])
        rc = dlrun_kv_add(kv, key, 1, NULL);
    if (rc == DLRUN_ERROR) {    /* the connection is gone: again next time */
        dlrun_kv_close(kv);
        kv = NULL;
    }
    pthread_mutex_unlock(&mu);
    return rc;
}
