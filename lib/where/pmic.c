/* pmic.c - a simple PMI-1 client: the few commands a per-task dlrun needs
 * to agree rank 0's address and port through the launcher (pmic.h).
 *
 * A request is one line; every one this client sends has exactly one
 * reply line, so a line is read a byte at a time and nothing past it is
 * ever taken from the fd the program inherits.
 */
#include "where/pmic.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

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

int pmic_server(char **envp)
{
    return pmic_fd(envp) >= 0 && alloc_getenv(envp, "PMI_RANK") &&
           alloc_getenv(envp, "PMI_SIZE");
}

int pmic_fd_open(char **envp)
{
    struct stat st;
    int fd = pmic_fd(envp);

    return fd >= 0 && fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
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

static int send_line(int fd, const char *line, struct err *err)
{
    size_t len = strlen(line), off = 0;

    while (off < len) {
        /* MSG_NOSIGNAL: a server that closed the fd is an error, not
         * SIGPIPE; a PMI_FD that is not a socket takes write */
        ssize_t n = send(fd, line + off, len - off, MSG_NOSIGNAL);

        if (n < 0 && errno == ENOTSOCK)
            n = write(fd, line + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return err_set(err, "writing to PMI_FD %d: %s", fd,
                           n < 0 ? strerror(errno) : "nothing written");
        off += (size_t)n;
    }
    return 0;
}

/* One reply line into buf (len bytes), without its newline. */
static int read_line(int fd, char *buf, size_t len, struct err *err)
{
    size_t off = 0;

    for (;;) {
        ssize_t n = read(fd, buf + off, 1);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return err_set(err, "reading PMI_FD %d: %s", fd, strerror(errno));
        if (n == 0)
            return err_set(err, "the PMI server closed PMI_FD %d", fd);
        if (buf[off] == '\n')
            break;
        if (++off == len - 1)
            return err_set(err, "a line from PMI_FD %d is over %zu bytes", fd,
                           len - 2);
    }
    buf[off] = '\0';
    return 0;
}

/* Send request (one line with its newline), read the reply into buf and
 * check it is want with rc 0. */
static int ask(int fd, const char *request, const char *want, char *buf,
               size_t len, struct err *err)
{
    char asked[64];

    snprintf(asked, sizeof asked, "%.*s", (int)strcspn(request, " \n"),
             request);
    if (send_line(fd, request, err) < 0 || read_line(fd, buf, len, err) < 0)
        return -1;
    return pmic_reply(buf, want, asked, err);
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

int pmic_agree_master(char **envp, int rank, char *addr, size_t len,
                      int *port, int finalize, struct err *err)
{
    int fd = pmic_fd(envp);
    char line[PMIC_LINE], kvs[257], req[PMIC_LINE], val[1025];

    if (fd < 0)
        return err_set(err, "PMI_FD is not set to a file descriptor");
    if (ask(fd, "cmd=init pmi_version=1 pmi_subversion=1\n",
            "response_to_init", line, sizeof line, err) < 0 ||
        ask(fd, "cmd=get_my_kvsname\n", "my_kvsname", line, sizeof line,
            err) < 0)
        return -1;
    if (pmic_field(line, "kvsname", kvs, sizeof kvs) < 0)
        return err_set(err, "the PMI server named no key-value space");
    snprintf(req, sizeof req, "cmd=put kvsname=%s key=dlrun.master "
             "value=%.900s:%d\n", kvs, addr, *port);
    if ((rank == 0 && ask(fd, req, "put_result", line, sizeof line, err) < 0) ||
        ask(fd, "cmd=barrier_in\n", "barrier_out", line, sizeof line, err) < 0)
        return -1;
    snprintf(req, sizeof req, "cmd=get kvsname=%s key=dlrun.master\n", kvs);
    if (ask(fd, req, "get_result", line, sizeof line, err) < 0)
        return -1;
    if (pmic_field(line, "value", val, sizeof val) < 0)
        return err_set(err, "the PMI server's get_result has no value");
    if (split_master(val, addr, len, port, err) < 0)
        return -1;
    if (finalize && ask(fd, "cmd=finalize\n", "finalize_ack", line,
                        sizeof line, err) < 0)
        return -1;
    return 0;
}
