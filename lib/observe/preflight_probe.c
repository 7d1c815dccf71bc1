/* preflight_probe.c - what a node offers (the program, Python and a
 * module, GPUs, NCCL/CUDA, memory) and the TCP round trip to a peer. */
#include "observe/preflight.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rendezvous/client.h"
#include "run/proc.h"
#include "util/clock.h"
#include "util/evloop.h"
#include "util/findprog.h"

/* The first of names that dlopen finds, into out ("" when none). */
static void find_library(const char *const *names, char *out)
{
    for (out[0] = '\0'; *names; names++) {
        void *h = dlopen(*names, RTLD_LAZY | RTLD_LOCAL);
        if (h) {
            dlclose(h);
            snprintf(out, PF_STR, "%s", *names);
            return;
        }
    }
}

/* Entries of dir that do not start with '.' and, with prefix, start with
 * it followed by digits only; -1 when dir cannot be read. */
static int count_entries(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    size_t k = prefix ? strlen(prefix) : 0;
    int n = 0;

    if (!d)
        return -1;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.' && (!prefix ||
            (strncmp(e->d_name, prefix, k) == 0 && e->d_name[k] &&
             strspn(e->d_name + k, "0123456789") == strlen(e->d_name + k))))
            n++;
    closedir(d);
    return n;
}

/* The GPUs the NVIDIA driver lists (a GPU that fell off the bus is dropped
 * there, its /dev/nvidiaN stays), else the /dev/nvidiaN devices; cut to
 * CUDA_VISIBLE_DEVICES's count when set.  -1 when there is no driver. */
static int count_gpus(void)
{
    const char *vis = getenv("CUDA_VISIBLE_DEVICES");
    int n = count_entries("/proc/driver/nvidia/gpus", NULL), want;

    if (n < 0 && access("/dev/nvidiactl", F_OK) == 0)
        n = count_entries("/dev", "nvidia");
    if (n < 0 || !vis)
        return n;
    want = *vis ? 1 : 0;
    for (const char *p = vis; *p; p++)
        want += *p == ',';
    return want < n ? want : n;
}

static long long mem_available_mb(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    long long kb = -1;

    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb < 0 ? -1 : kb / 1024;
}

/* Run argv with its stdout and stderr into out (n bytes) for at most
 * timeout_ms: its exit code, 124 when it ran too long, -1 when it could
 * not start. */
static int run_capture(char *const *argv, char *out, size_t n,
                       int timeout_ms)
{
    struct err err = { "" };

    return proc_capture(argv, 0, 1, timeout_ms, out, n, &err);
}

/* The last non-empty line of s, in place (Python's error is there). */
static void last_line(char *s)
{
    size_t n = strlen(s);
    char *start;

    while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r'))
        s[--n] = '\0';
    start = strrchr(s, '\n');
    if (start)
        memmove(s, start + 1, strlen(start + 1) + 1);
}

/* The Python version of interpreter path, and the import of mod. */
static void probe_python(struct pf_report *r, const char *mod, int timeout_ms)
{
    char code[PF_STR + 64], out[8192];  /* a traceback: its last line */
    char *ver[] = { r->prog, "-c", "import sys; print(sys.version.split()[0])",
                    NULL };
    char *imp[] = { r->prog, "-c", code, NULL };

    if (run_capture(ver, r->python, PF_STR, timeout_ms) != 0) {
        snprintf(r->prog_err, PF_STR, "%.150s does not start", r->prog);
        r->python[0] = '\0';
        return;
    }
    last_line(r->python);
    if (!mod)
        return;
    snprintf(code, sizeof code, "import %s", mod);
    int rc = run_capture(imp, out, sizeof out, timeout_ms);
    last_line(out);
    snprintf(r->import_err, PF_STR, "%.*s", PF_STR - 1, out);
    if (rc == 124)
        snprintf(r->import_err, PF_STR, "import %.150s took over %d s", mod,
                 timeout_ms / 1000);
    else if (rc == 0)
        r->import_err[0] = '\0';
    else if (!r->import_err[0])
        snprintf(r->import_err, PF_STR, "import %.150s failed (code %d)",
                 mod, rc);
}

static int is_python(const char *path)
{
    const char *base = strrchr(path, '/');

    return strncmp(base ? base + 1 : path, "python", 6) == 0;
}

void pf_probe(struct pf_report *r, char **prog, const char *import_mod,
              int timeout_ms)
{
    static const char *const nccl[] = { "libnccl.so.2", "libnccl.so", NULL };
    static const char *const cuda[] = {
        "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0",
        "libcudart.so", "libcuda.so.1", NULL,
    };

    if (gethostname(r->host, PF_STR) != 0)
        snprintf(r->host, PF_STR, "?");
    r->host[PF_STR - 1] = '\0';
    snprintf(r->version, PF_STR, "%s", DLRUN_VERSION);
    r->gpus = count_gpus();
    find_library(nccl, r->nccl);
    find_library(cuda, r->cuda);
    r->mem_free_mb = mem_available_mb();
    if (import_mod)
        snprintf(r->import_mod, PF_STR, "%s", import_mod);
    if (!prog || !prog[0])
        return;
    if (find_program(prog[0], getenv("PATH"), r->prog, PF_STR) < 0 ||
        access(r->prog, X_OK) != 0) {
        snprintf(r->prog_err, PF_STR, "%.150s: not found or not "
                 "executable", prog[0]);
        r->prog[0] = '\0';
        return;
    }
    if (is_python(r->prog))
        probe_python(r, import_mod, timeout_ms);
}

int pf_listen(const char *ip, char *addr, size_t len, struct err *err)
{
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
                              .ai_flags = AI_NUMERICHOST | AI_PASSIVE };
    struct addrinfo *res = NULL;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char host[NI_MAXHOST], port[NI_MAXSERV];
    int fd = -1;

    if (getaddrinfo(ip, "0", &hints, &res) != 0)
        return err_set(err, "not a numeric address: %s", ip);
    /* non-blocking: pf_echo_serve takes what is pending until EAGAIN */
    fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0 || bind(fd, res->ai_addr, res->ai_addrlen) < 0 ||
        listen(fd, 64) < 0 || getsockname(fd, (void *)&ss, &sl) < 0 ||
        getnameinfo((void *)&ss, sl, host, sizeof host, port, sizeof port,
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
        err_set(err, "cannot listen on %s: %s", ip, strerror(errno));
        if (fd >= 0)
            close(fd);
        fd = -1;
    } else {
        snprintf(addr, len, strchr(host, ':') ? "[%s]:%s" : "%s:%s", host,
                 port);
    }
    freeaddrinfo(res);
    return fd;
}

/* The echo listener serves its connections together, each for at most
 * ECHO_DEADLINE_MS from its accept however it trickles its bytes, and
 * echoes only once the peer sent the listener's key (which reached the
 * job's agents through its broker): a local user's idle or trickling
 * connections cannot hold it, nor read an echo. */
#define ECHO_MAX_CONNS 64
#define ECHO_DEADLINE_MS 10000
#define ECHO_SWEEP_MS 250

struct echo_srv;

struct echo_conn {
    struct echo_srv *s;
    int fd;                 /* -1: a free slot */
    long until;             /* clock_ms() when it is closed */
    size_t have;            /* bytes of "KEY\n" received */
};

struct echo_srv {
    struct evloop *l;
    const char *key;        /* borrowed */
    size_t klen;
    int lfd;
    struct echo_conn c[ECHO_MAX_CONNS];
};

static void conn_drop(struct echo_conn *c)
{
    evloop_del_fd(c->s->l, c->fd);
    close(c->fd);
    c->fd = -1;
}

/* What conn c sent: the rest of the key, then bytes echoed.  Closed when
 * the peer closed, sent a wrong key or does not take the echo. */
static int conn_readable(void *ctx, int fd, short revents, struct err *err)
{
    struct echo_conn *c = ctx;
    const char *key = c->s->key;
    size_t i = 0;
    char b[128];
    ssize_t n = read(fd, b, sizeof b);

    (void)revents;
    (void)err;
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return 0;
    for (; n > 0 && c->have <= c->s->klen && i < (size_t)n; i++, c->have++)
        if (b[i] != (c->have < c->s->klen ? key[c->have] : '\n'))
            n = -1;
    if (n <= 0 || (i < (size_t)n &&
                   write(fd, b + i, (size_t)n - i) != n - (ssize_t)i))
        conn_drop(c);
    return 0;
}

/* A slot for a new connection: a free one, else the oldest that has not
 * sent the key (closed); NULL when every one has. */
static struct echo_conn *conn_slot(struct echo_srv *s)
{
    struct echo_conn *old = NULL;

    for (int i = 0; i < ECHO_MAX_CONNS; i++) {
        struct echo_conn *c = &s->c[i];
        if (c->fd < 0)
            return c;
        if (c->have <= s->klen && (!old || c->until < old->until))
            old = c;
    }
    if (old)
        conn_drop(old);
    return old;
}

/* The listener: take what is pending (a bounded number per turn). */
static int conn_accept(void *ctx, int lfd, short revents, struct err *err)
{
    struct echo_srv *s = ctx;

    (void)revents;
    (void)err;
    for (int k = 0; k < ECHO_MAX_CONNS; k++) {
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        struct echo_conn *c = fd >= 0 ? conn_slot(s) : NULL;
        struct err e = { "" };

        if (fd < 0)
            break;
        if (!c || evloop_add_fd(s->l, fd, conn_readable, c, &e) < 0) {
            close(fd);
            continue;
        }
        *c = (struct echo_conn){ s, fd, clock_ms() + ECHO_DEADLINE_MS, 0 };
    }
    return 0;
}

/* Close what outlived its deadline, however it trickled. */
static int conn_sweep(void *ctx, struct err *err)
{
    struct echo_srv *s = ctx;
    long now = clock_ms();

    (void)err;
    for (int i = 0; i < ECHO_MAX_CONNS; i++)
        if (s->c[i].fd >= 0 && now >= s->c[i].until)
            conn_drop(&s->c[i]);
    return 0;
}

void pf_echo_serve(int lfd, int stop_fd, const char *key)
{
    struct echo_srv *s = calloc(1, sizeof *s);
    struct err err = { "" };

    if (!s || !(s->l = evloop_create(&err)))
        goto out;
    s->key = key;
    s->klen = strlen(key);
    s->lfd = lfd;
    for (int i = 0; i < ECHO_MAX_CONNS; i++)
        s->c[i] = (struct echo_conn){ s, -1, 0, 0 };
    if (evloop_add_fd(s->l, lfd, conn_accept, s, &err) == 0 &&
        evloop_stop_on_fd(s->l, stop_fd, &err) == 0 &&
        evloop_add_timer(s->l, ECHO_SWEEP_MS, ECHO_SWEEP_MS, conn_sweep, s,
                         &err))
        evloop_run(s->l, &err);
    for (int i = 0; i < ECHO_MAX_CONNS; i++)
        if (s->c[i].fd >= 0)
            conn_drop(&s->c[i]);
out:
    if (s)
        evloop_destroy(s->l);
    free(s);
}

/* Connect fd to sa within timeout_ms.  0 / -1 (errno set). */
static int connect_within(int fd, const struct addrinfo *a, int timeout_ms)
{
    int fl = fcntl(fd, F_GETFL), e = 0;
    socklen_t el = sizeof e;
    struct pollfd p = { .fd = fd, .events = POLLOUT };

    fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    if (connect(fd, a->ai_addr, a->ai_addrlen) < 0) {
        if (errno != EINPROGRESS)
            return -1;
        if (poll(&p, 1, timeout_ms) <= 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el);
        if (e) {
            errno = e;
            return -1;
        }
    }
    return fcntl(fd, F_SETFL, fl);
}

/* Five one-byte round trips on fd: the best into *best. */
static int round_trips(int fd, int timeout_ms, long *best)
{
    struct pollfd p = { .fd = fd, .events = POLLIN };
    int one = 1;

    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    *best = -1;
    for (int i = 0; i < 5; i++) {
        long t = clock_us();
        char c = (char)('a' + i), back = 0;
        if (write(fd, &c, 1) != 1 || poll(&p, 1, timeout_ms) <= 0 ||
            read(fd, &back, 1) != 1 || back != c)
            return -1;
        t = clock_us() - t;
        if (*best < 0 || t < *best)
            *best = t;
    }
    return 0;
}

/* The listener's key and a newline: what makes it echo. */
static int send_key(int fd, const char *key)
{
    char line[256];
    int n = snprintf(line, sizeof line, "%s\n", key);

    return n > 0 && (size_t)n < sizeof line && write(fd, line, (size_t)n) == n
           ? 0 : -1;
}

int pf_ping(const char *addr, const char *key, int timeout_ms, long *rtt_us,
            struct err *err)
{
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
                              .ai_flags = AI_NUMERICHOST }, *res = NULL;
    char host[256];
    int port = 0, fd = -1, rc = -1;

    if (client_parse_addr(addr, host, sizeof host, &port, err) < 0)
        return -1;
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    if (getaddrinfo(host, ps, &hints, &res) != 0)
        return err_set(err, "not a numeric address: %s", addr);
    fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect_within(fd, res, timeout_ms) < 0)
        err_set(err, "cannot connect to %s: %s", addr, strerror(errno));
    else if (send_key(fd, key) < 0 || round_trips(fd, timeout_ms, rtt_us) < 0)
        err_set(err, "%s: no echo within %d ms", addr, timeout_ms);
    else
        rc = 0;
    if (fd >= 0)
        close(fd);
    freeaddrinfo(res);
    return rc;
}
