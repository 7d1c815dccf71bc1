/* pmic.c - a simple PMI-1 client: the few commands a per-task dlrun needs
 * (pmic.h).
 *
 * A request is one line; every one this client sends has exactly one
 * reply line (PMI_PORT's handshake: four), so a line is read a byte at a
 * time and nothing past it is ever taken from the fd the program
 * inherits.  Each read waits in poll for at most the connection's limit.
 */
#include "where/pmic.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "util/clock.h"
#include "where/alloc.h"

#define PMIC_LINE 1280  /* Hydra's vallen_max is 1024, plus the words */

/* PMI_FD's number, or -1 when absent or not a number. */
static int pmic_fd(char **envp)
{
    const char *v = alloc_getenv(envp, "PMI_FD");
    char *end;
    long fd;

    if (!v || !*v)
        return -1;
    errno = 0;
    fd = strtol(v, &end, 10);
    return *end || errno || fd < 0 || fd > 1 << 20 ? -1 : (int)fd;
}

/* PMI_PORT "host:port" with PMI_ID. */
static int pmic_port(char **envp)
{
    const char *v = alloc_getenv(envp, "PMI_PORT");

    return v && strrchr(v, ':') && alloc_getenv(envp, "PMI_ID");
}

int pmic_server(char **envp)
{
    return (pmic_fd(envp) >= 0 && alloc_getenv(envp, "PMI_RANK") &&
            alloc_getenv(envp, "PMI_SIZE")) || pmic_port(envp);
}

int pmic_fd_open(char **envp)
{
    struct stat st;
    int fd = pmic_fd(envp);

    if (fd < 0)
        return pmic_port(envp);
    return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

int pmic_is_port(char **envp)
{
    return pmic_fd(envp) < 0 && pmic_port(envp);
}

const char *pmic_launcher(char **envp)
{
    if (alloc_getenv(envp, "FLUX_JOB_ID"))
        return "flux run";
    if (alloc_getenv(envp, "SLURM_STEP_ID"))
        return "srun --mpi=pmi2";
    if (alloc_getenv(envp, "PMI_PORT") || alloc_getenv(envp, "MPI_LOCALRANKID"))
        return "mpiexec.hydra";
    return "the PMI launcher";
}

int pmic_field(const char *line, const char *key, char *val, size_t len)
{
    size_t klen = strlen(key);
    const char *w = line;

    while (*w) {
        size_t n;

        while (*w == ' ')
            w++;
        n = strcspn(w, " ");
        if (n > klen && strncmp(w, key, klen) == 0 && w[klen] == '=') {
            if (n - klen - 1 >= len)
                return -1;
            memcpy(val, w + klen + 1, n - klen - 1);
            val[n - klen - 1] = '\0';
            return 0;
        }
        w += n;
    }
    return -1;
}

int pmic_reply(const char *line, const char *want, const char *asked,
               struct err *err)
{
    char cmd[64], rc[16], msg[128] = "", q[84];

    if (pmic_field(line, "cmd", cmd, sizeof cmd) < 0 || strcmp(cmd, want) != 0)
        return err_set(err, "the PMI server answered %s with '%s', not cmd=%s",
                       asked, err_quote(q, 80, line, strlen(line)), want);
    if (pmic_field(line, "rc", rc, sizeof rc) == 0 && strcmp(rc, "0") != 0) {
        pmic_field(line, "msg", msg, sizeof msg);
        return err_set(err, "the PMI server refused %s (rc=%.15s%s%.100s)",
                       asked, rc, *msg ? ": " : "", msg);
    }
    return 0;
}

static int send_line(struct pmic *c, const char *line, struct err *err)
{
    size_t len = strlen(line), off = 0;

    while (off < len) {
        /* MSG_NOSIGNAL: a server that closed the fd is an error, not
         * SIGPIPE; a PMI_FD that is not a socket takes write */
        ssize_t n = send(c->fd, line + off, len - off, MSG_NOSIGNAL);

        if (n < 0 && errno == ENOTSOCK)
            n = write(c->fd, line + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return err_set(err, "writing to %s: %s", c->where,
                           n < 0 ? strerror(errno) : "nothing written");
        off += (size_t)n;
    }
    return 0;
}

/* Wait until c's fd is readable before deadline: 0, or -1 with err
 * naming the launcher and what did not come (asked). */
static int wait_readable(struct pmic *c, long long deadline, const char *asked,
                         struct err *err)
{
    for (;;) {
        struct pollfd p = { .fd = c->fd, .events = POLLIN };
        long long left = deadline - clock_ms();
        int n = left > 0 ? poll(&p, 1, left > 60000 ? 60000 : (int)left) : 0;

        if (n > 0)
            return 0;
        if (n < 0 && errno != EINTR)
            return err_set(err, "waiting on %s: %s", c->where, strerror(errno));
        if (n == 0 && clock_ms() >= deadline) {
            c->timed_out = 1;
            return err_set(err, "%s did not answer %s on %s within %lld %s "
                           "(DLRUN_PMI_TIMEOUT)%s", c->launcher, asked,
                           c->where, c->timeout_ms % 1000 ? c->timeout_ms :
                           c->timeout_ms / 1000, c->timeout_ms % 1000 ? "ms" :
                           "s",
                           strcmp(asked, "cmd=barrier_in") == 0 ?
                           ": some task never reached it (did every task "
                           "start dlrun, and did one fail before?)" : "");
        }
    }
}

/* One reply line into buf (len bytes), without its newline. */
static int read_line(struct pmic *c, const char *asked, char *buf, size_t len,
                     struct err *err)
{
    long long deadline = clock_ms() + c->timeout_ms;
    size_t off = 0;

    for (;;) {
        ssize_t n;

        if (wait_readable(c, deadline, asked, err) < 0)
            return -1;
        n = read(c->fd, buf + off, 1);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n < 0)
            return err_set(err, "reading %s: %s", c->where, strerror(errno));
        if (n == 0)
            return err_set(err, "%s closed %s (after %s)", c->launcher,
                           c->where, asked);
        if (buf[off] == '\n')
            break;
        if (++off == len - 1)
            return err_set(err, "a line from %s is over %zu bytes", c->where,
                           len - 2);
    }
    buf[off] = '\0';
    return 0;
}

/* Send request (one line with its newline), read the reply into buf and
 * check it is want with rc 0. */
static int ask(struct pmic *c, const char *request, const char *want,
               char *buf, size_t len, struct err *err)
{
    char asked[96];

    snprintf(asked, sizeof asked, "%.*s", (int)strcspn(request, " \n"),
             request);
    if (strncmp(request, "cmd=get ", 8) == 0 && strstr(request, " key="))
        snprintf(asked, sizeof asked, "cmd=get %.*s", (int)strcspn(
                 strstr(request, " key=") + 1, " \n"),
                 strstr(request, " key=") + 1);
    if (send_line(c, request, err) < 0 ||
        read_line(c, asked, buf, len, err) < 0)
        return -1;
    return pmic_reply(buf, want, asked, err);
}

/* A TCP connection to PMI_PORT's "host:port" into c->fd, connect waiting
 * at most c->timeout_ms. */
static int connect_port(struct pmic *c, const char *hp, struct err *err)
{
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai = NULL, *i;
    struct timeval tv = { .tv_sec = c->timeout_ms / 1000 };
    const char *colon = strrchr(hp, ':');
    char host[256];
    int rc;

    if (!colon || colon == hp || (size_t)(colon - hp) >= sizeof host)
        return err_set(err, "PMI_PORT='%.100s' is not HOST:PORT", hp);
    snprintf(host, sizeof host, "%.*s", (int)(colon - hp), hp);
    if ((rc = getaddrinfo(host, colon + 1, &hints, &ai)) != 0)
        return err_set(err, "PMI_PORT='%.100s': %s", hp, gai_strerror(rc));
    for (i = ai; i && c->fd < 0; i = i->ai_next) {
        c->fd = socket(i->ai_family, i->ai_socktype | SOCK_CLOEXEC,
                       i->ai_protocol);
        if (c->fd < 0)
            continue;
        setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        if (connect(c->fd, i->ai_addr, i->ai_addrlen) < 0) {
            close(c->fd);
            c->fd = -1;
        }
    }
    freeaddrinfo(ai);
    if (c->fd < 0)
        return err_set(err, "cannot connect to %s's PMI_PORT %.100s: %s",
                       c->launcher, hp, strerror(errno));
    c->own = 1;
    return 0;
}

/* PMI_PORT's handshake: cmd=initack with PMI_ID, then the server's
 * cmd=set lines say size, rank and debug. */
static int initack(struct pmic *c, const char *id, struct err *err)
{
    char req[128], line[PMIC_LINE], v[32];
    int got = 0;

    snprintf(req, sizeof req, "cmd=initack pmiid=%.60s\n", id);
    if (ask(c, req, "initack", line, sizeof line, err) < 0)
        return -1;
    for (int i = 0; i < 3; i++) {
        if (read_line(c, "cmd=initack", line, sizeof line, err) < 0 ||
            pmic_reply(line, "set", "cmd=initack", err) < 0)
            return -1;
        if (pmic_field(line, "size", v, sizeof v) == 0 && (got |= 1))
            c->size = atoi(v);
        if (pmic_field(line, "rank", v, sizeof v) == 0 && (got |= 2))
            c->rank = atoi(v);
    }
    if (got != 3 || c->size < 1 || c->size > 1 << 24 || c->rank < 0 ||
        c->rank >= c->size)
        return err_set(err, "%s's PMI_PORT named no rank (%d) of a size (%d)",
                       c->launcher, c->rank, c->size);
    return 0;
}

/* The channel envp names into c: PMI_PORT's socket with its handshake, or
 * PMI_FD with PMI_RANK and PMI_SIZE. */
static int channel(char **envp, struct pmic *c, struct err *err)
{
    const char *hp = alloc_getenv(envp, "PMI_PORT");
    int fd = pmic_fd(envp);

    if (fd >= 0) {
        c->fd = fd;
        snprintf(c->where, sizeof c->where, "PMI_FD %d", fd);
        return alloc_getint(envp, "PMI_SIZE", 1, 1 << 24, &c->size, err) < 0 ||
               alloc_getint(envp, "PMI_RANK", 0, c->size - 1, &c->rank,
                            err) < 0 ? -1 : 0;
    }
    if (!pmic_port(envp))
        return err_set(err, "neither PMI_FD nor PMI_PORT with PMI_ID is set");
    snprintf(c->where, sizeof c->where, "PMI_PORT %.100s", hp);
    if (connect_port(c, hp, err) < 0)
        return -1;
    return initack(c, alloc_getenv(envp, "PMI_ID"), err);
}

int pmic_open(char **envp, long long timeout_ms, struct pmic *c,
              struct err *err)
{
    char line[PMIC_LINE];

    memset(c, 0, sizeof *c);
    c->fd = -1;
    c->timeout_ms = timeout_ms;
    c->launcher = pmic_launcher(envp);
    if (channel(envp, c, err) < 0 ||
        ask(c, "cmd=init pmi_version=1 pmi_subversion=1\n",
            "response_to_init", line, sizeof line, err) < 0)
        return -1;
    c->inited = 1;
    if (ask(c, "cmd=get_my_kvsname\n", "my_kvsname", line, sizeof line,
            err) < 0)
        return -1;
    if (pmic_field(line, "kvsname", c->kvs, sizeof c->kvs) < 0)
        return err_set(err, "%s named no key-value space on %s", c->launcher,
                       c->where);
    return 0;
}

int pmic_get(struct pmic *c, const char *key, char *val, size_t len,
             struct err *err)
{
    char req[PMIC_LINE], line[PMIC_LINE] = "";

    snprintf(req, sizeof req, "cmd=get kvsname=%s key=%.64s\n", c->kvs, key);
    c->missing = 0;
    if (ask(c, req, "get_result", line, sizeof line, err) < 0) {
        char rc[16];

        c->missing = pmic_field(line, "cmd", rc, sizeof rc) == 0 &&
                     strcmp(rc, "get_result") == 0;
        return -1;
    }
    if (pmic_field(line, "value", val, len) < 0)
        return err_set(err, "%s's get_result for %.64s has no value (that "
                       "fits)", c->launcher, key);
    return 0;
}

int pmic_put(struct pmic *c, const char *key, const char *val,
             struct err *err)
{
    char req[PMIC_LINE], line[PMIC_LINE];

    snprintf(req, sizeof req, "cmd=put kvsname=%s key=%.64s value=%.900s\n",
             c->kvs, key, val);
    return ask(c, req, "put_result", line, sizeof line, err);
}

int pmic_barrier(struct pmic *c, struct err *err)
{
    char line[PMIC_LINE];

    return ask(c, "cmd=barrier_in\n", "barrier_out", line, sizeof line, err);
}

int pmic_finalize(struct pmic *c, struct err *err)
{
    char line[PMIC_LINE];

    if (!c->inited)
        return 0;
    c->inited = 0;
    return ask(c, "cmd=finalize\n", "finalize_ack", line, sizeof line, err);
}

void pmic_close(struct pmic *c)
{
    if (c->own && c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    c->own = 0;
}

/* "ADDR:PORT" (the last colon: an IPv6 address has more) into addr and
 * *port. */
static int split_master(const char *v, char *addr, size_t len, int *port,
                        struct err *err)
{
    const char *colon = strrchr(v, ':');
    char *end;
    long x;

    if (!colon || colon == v || (size_t)(colon - v) >= len)
        return err_set(err, "dlrun.master='%.100s' from PMI is not ADDR:PORT",
                       v);
    x = strtol(colon + 1, &end, 10);
    if (*end || x < 1 || x > 65535)
        return err_set(err, "dlrun.master='%.100s' from PMI has no port "
                       "(1-65535)", v);
    memcpy(addr, v, (size_t)(colon - v));
    addr[colon - v] = '\0';
    *port = (int)x;
    return 0;
}

int pmic_agree_master(struct pmic *c, int rank, char *addr, size_t len,
                      int *port, struct err *err)
{
    char val[1025];

    snprintf(val, sizeof val, "%.900s:%d", addr, *port);
    if ((rank == 0 && pmic_put(c, "dlrun.master", val, err) < 0) ||
        pmic_barrier(c, err) < 0 ||
        pmic_get(c, "dlrun.master", val, sizeof val, err) < 0)
        return -1;
    return split_master(val, addr, len, port, err);
}

/* The process's one connection: PMI_FD is one per process too. */
static struct pmic the = { .fd = -1 };
static int the_open;

struct pmic *pmic_the(char **envp, struct err *err)
{
    const char *v = alloc_getenv(envp, "DLRUN_PMI_TIMEOUT");
    long long ms = PMIC_TIMEOUT_S * 1000LL;
    char *end;

    if (the_open)
        return &the;
    if (v && *v) {
        long s = strtol(v, &end, 10);

        if (*end || s < 1 || s > 86400) {
            err_set(err, "DLRUN_PMI_TIMEOUT='%.20s' is not a number of "
                    "seconds (1-86400)", v);
            return NULL;
        }
        ms = s * 1000LL;
    }
    if (pmic_open(envp, ms, &the, err) < 0) {
        pmic_close(&the);
        return NULL;
    }
    the_open = 1;
    return &the;
}

int pmic_the_end(int finalize, struct err *err)
{
    int rc = 0;

    if (!the_open)
        return 0;
    the_open = 0;
    if (finalize || the.own)
        rc = pmic_finalize(&the, err);
    pmic_close(&the);
    return rc;
}

void pmic_the_abandon(void)
{
    struct err ignored = { "" };

    if (the_open && !the.timed_out)
        pmic_the_end(1, &ignored);
}

int pmic_the_timed_out(void)
{
    return the.timed_out;
}
