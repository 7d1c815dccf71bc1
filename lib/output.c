/* output.c - see output.h. */
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A longer line is written in pieces: memory stays bounded per stream. */
#define LINE_BUF (64 * 1024)

struct stream {
    int rank, which;        /* which: 1 stdout, 2 stderr */
    int rfd, wfd;           /* our read end; the child's write end */
    int file;               /* DIR/rank.N/{stdout,stderr}, or -1 */
    int show;               /* shown on the console */
    char *buf;              /* pending partial line, LINE_BUF bytes */
    size_t len;
};

struct output {
    struct output_opts o;
    struct stream *s;       /* 2 per rank: stdout, stderr */
    int n;
    char *out;              /* the tagged lines of one read */
    size_t outcap;
};

static int write_all(int fd, const char *p, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EAGAIN) {
            struct pollfd pfd = { .fd = fd, .events = POLLOUT };
            poll(&pfd, 1, 100);
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

static int shown(const struct output_opts *o, int rank)
{
    if (!o->show)
        return 1;
    for (int i = 0; i < o->nshow; i++)
        if (o->show[i] == rank)
            return 1;
    return 0;
}

static int open_file(const char *dir, int rank, int which, int append,
                     struct err *err)
{
    char path[4096];
    int fd;

    snprintf(path, sizeof path, "%s/rank.%d", dir, rank);
    if (mkdir(dir, 0755) < 0 && errno != EEXIST)
        return err_set(err, "--output-dir %s: %s", dir, strerror(errno));
    if (mkdir(path, 0755) < 0 && errno != EEXIST)
        return err_set(err, "--output-dir: cannot make %s: %s", path,
                       strerror(errno));
    snprintf(path, sizeof path, "%s/rank.%d/%s", dir, rank,
             which == 1 ? "stdout" : "stderr");
    fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC |
              (append ? O_APPEND : O_TRUNC), 0644);
    if (fd < 0)
        return err_set(err, "--output-dir: cannot write %s: %s", path,
                       strerror(errno));
    return fd;
}

static int stream_init(struct output *o, struct stream *s, int rank,
                       int which, struct err *err)
{
    int fds[2];

    s->rank = rank;
    s->which = which;
    s->show = shown(&o->o, rank);
    s->file = -1;
    s->buf = malloc(LINE_BUF);
    if (!s->buf || pipe2(fds, O_CLOEXEC) < 0)
        return err_set(err, "cannot make an output pipe: %s", strerror(errno));
    s->rfd = fds[0];
    s->wfd = fds[1];
    fcntl(s->rfd, F_SETFL, O_NONBLOCK);
    fcntl(s->rfd, F_SETPIPE_SZ, 1 << 20);   /* fewer wake-ups; best effort */
    if (o->o.dir &&
        (s->file = open_file(o->o.dir, rank, which, o->o.append, err)) < 0)
        return -1;
    return 0;
}

struct output *output_create(const int *ranks, int n,
                             const struct output_opts *opts, struct err *err)
{
    struct output *o = calloc(1, sizeof *o);

    if (!o || !(o->s = calloc((size_t)n * 2, sizeof *o->s))) {
        free(o);
        err_set(err, "out of memory");
        return NULL;
    }
    o->o = *opts;
    o->n = 2 * n;
    for (int i = 0; i < o->n; i++)
        o->s[i].rfd = o->s[i].wfd = o->s[i].file = -1;
    for (int i = 0; i < n; i++) {
        if (stream_init(o, &o->s[2 * i], ranks[i], 1, err) < 0 ||
            stream_init(o, &o->s[2 * i + 1], ranks[i], 2, err) < 0) {
            output_destroy(o);
            return NULL;
        }
    }
    return o;
}

int output_child_fd(const struct output *o, int i, int stream)
{
    return o->s[2 * i + (stream == 2)].wfd;
}

void output_close_child_ends(struct output *o, int i)
{
    for (int k = 2 * i; k < 2 * i + 2; k++) {
        if (o->s[k].wfd >= 0)
            close(o->s[k].wfd);
        o->s[k].wfd = -1;
    }
}

int output_poll_fds(const struct output *o, int *fds, int *ids)
{
    int k = 0;

    for (int i = 0; i < o->n; i++) {
        if (o->s[i].rfd < 0)
            continue;
        fds[k] = o->s[i].rfd;
        ids[k++] = i;
    }
    return k;
}

static int ensure_out(struct output *o, size_t need)
{
    char *p;

    if (need <= o->outcap)
        return 0;
    p = realloc(o->out, need);
    if (!p)
        return -1;
    o->out = p;
    o->outcap = need;
    return 0;
}

/* Write len bytes of whole lines (or a piece of an overlong line): raw to
 * the file, tagged to the console.  A line without its newline gets one
 * on the console only when tagged, so that the next tag starts a line. */
static int emit(struct output *o, struct stream *s, const char *p, size_t len,
                struct err *err)
{
    int console = s->which == 1 ? o->o.console_out : o->o.console_err;
    char tag[24];
    size_t tlen = 0, k = 0;

    if (s->file >= 0 && write_all(s->file, p, len) < 0)
        return err_set(err, "writing rank %d's %s file: %s", s->rank,
                       s->which == 1 ? "stdout" : "stderr", strerror(errno));
    if (!s->show)
        return 0;
    if (!o->o.tag)
        return write_all(console, p, len) < 0 ? err_set(err, "writing the "
               "output: %s", strerror(errno)) : 0;
    tlen = (size_t)snprintf(tag, sizeof tag, "[%d] ", s->rank);
    /* worst case: every byte ends a line, and the last one gets a newline */
    if (ensure_out(o, len + (len + 1) * (tlen + 1)) < 0)
        return err_set(err, "out of memory");
    for (size_t i = 0; i < len;) {
        const char *nl = memchr(p + i, '\n', len - i);
        size_t n = nl ? (size_t)(nl - (p + i)) + 1 : len - i;
        memcpy(o->out + k, tag, tlen);
        memcpy(o->out + k + tlen, p + i, n);
        k += tlen + n;
        if (!nl)
            o->out[k++] = '\n';
        i += n;
    }
    return write_all(console, o->out, k) < 0 ?
           err_set(err, "writing the output: %s", strerror(errno)) : 0;
}

/* Emit the complete lines at the head of the buffer; keep the rest. */
static int flush_lines(struct output *o, struct stream *s, struct err *err)
{
    char *last = memrchr(s->buf, '\n', s->len);
    size_t n;

    if (!last && s->len < LINE_BUF)
        return 0;
    n = last ? (size_t)(last - s->buf) + 1 : s->len;
    if (emit(o, s, s->buf, n, err) < 0)
        return -1;
    memmove(s->buf, s->buf + n, s->len - n);
    s->len -= n;
    return 0;
}

static void stream_close(struct output *o, struct stream *s, struct err *err)
{
    if (s->len > 0)
        emit(o, s, s->buf, s->len, err);
    s->len = 0;
    if (s->rfd >= 0)
        close(s->rfd);
    s->rfd = -1;
}

int output_ready(struct output *o, int id, struct err *err)
{
    struct stream *s = &o->s[id];

    for (;;) {
        ssize_t r = read(s->rfd, s->buf + s->len, LINE_BUF - s->len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && errno == EAGAIN)
            return 0;
        if (r <= 0) {
            stream_close(o, s, err);
            return 0;
        }
        s->len += (size_t)r;
        if (flush_lines(o, s, err) < 0)
            return -1;
        if (s->len < LINE_BUF && (size_t)r < LINE_BUF / 2)
            return 0;   /* the pipe is likely empty: back to poll */
    }
}

void output_drain(struct output *o)
{
    struct err err = { "" };

    for (int i = 0; i < o->n; i++) {
        if (o->s[i].rfd < 0)
            continue;
        output_ready(o, i, &err);
        stream_close(o, &o->s[i], &err);
    }
}

void output_destroy(struct output *o)
{
    if (!o)
        return;
    for (int i = 0; i < o->n; i++) {
        struct stream *s = &o->s[i];
        if (s->rfd >= 0)
            close(s->rfd);
        if (s->wfd >= 0)
            close(s->wfd);
        if (s->file >= 0)
            close(s->file);
        free(s->buf);
    }
    free(o->s);
    free(o->out);
    free(o);
}
