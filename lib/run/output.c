/* output.c - see output.h. */
#include "run/output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/readall.h"
#include "util/safefile.h"
#include "run/writeq.h"

/* A line not ended by one read is kept in its stream's part: up to
 * LINE_BUF in the read buffer's room before what a read brings, longer in
 * a part grown to hold it whole, up to LINE_HELD: a longer line (a binary
 * dump, no newline in sight) is written in LINE_HELD pieces, so that a
 * stream's memory stays bounded (dlrun(1), --tag-output). */
#define LINE_BUF (64 * 1024)
#define LINE_HELD (16 * 1024 * 1024)
/* One read takes what a stream's pipe holds (F_SETPIPE_SZ below), up to
 * this: fewer reads, polls and writes per byte.  The console gets writes
 * of up to OUT_BUF bytes from a writer thread (lib/run/writeq.c), OUT_BUFS of
 * them queued at most.  Buffers are page-aligned: the kernel's copies
 * (rep movsb) run at half speed from or to a misaligned address on some
 * CPUs (AMD Zen 3 here). */
#define READ_BUF (256 * 1024)
#define OUT_BUF (256 * 1024)
/* A stream whose read brings this much (the pipe's default 64 KiB was at
 * least half full) gets a 1 MiB pipe: fewer wake-ups for a heavy writer.
 * Not at creation: F_SETPIPE_SZ allocates in the kernel for every pipe,
 * and most streams of most jobs carry a few lines. */
#define PIPE_GROW_AT (32 * 1024)
#define PIPE_BIG (1 << 20)
#define OUT_BUFS 4

struct stream {
    int rank, which;        /* which: 1 stdout, 2 stderr */
    int rfd, wfd;           /* our read end; the child's write end */
    int file;               /* DIR/rank.N/{stdout,stderr}, or -1 */
    int show;               /* shown on the console */
    char tag[16];           /* "[RANK] " */
    size_t taglen;
    char *part;             /* the start of a line not ended yet (cap
                               bytes, allocated at the first one), or NULL */
    size_t len, cap;        /* bytes in part, <= LINE_HELD; its size */
    int grown;              /* its pipe was made PIPE_BIG */
    int piped;              /* its pipe was made (output_child_open) */
};

struct output {
    struct output_opts o;
    struct stream *s;       /* 2 per rank: stdout, stderr */
    int n;
    char *in;               /* LINE_BUF + READ_BUF: a stream's part, then
                               what one read brought; allocated at the first
                               output (a quiet job never touches it) */
    struct writeq *q;       /* writes to the console, from the first line
                               shown on it */
    int dirfd;              /* the --output-dir folder, or -1 */
};

static int shown(const struct output_opts *o, int rank)
{
    if (!o->show)
        return 1;
    for (int i = 0; i < o->nshow; i++)
        if (o->show[i] == rank)
            return 1;
    return 0;
}

/* DIR/rank.N/{stdout,stderr}, relative to the folder's fd: each part
 * checked to be ours, none a link (lib/util/safefile.h). */
static int open_file(const struct output *o, int rank, int which,
                     struct err *err)
{
    const char *name = which == 1 ? "stdout" : "stderr";
    char sub[32];
    int dfd, fd;

    snprintf(sub, sizeof sub, "rank.%d", rank);
    dfd = safefile_dir(o->dirfd, sub, 1, err);
    if (dfd < 0)
        return err_prefix(err, "--output-dir %s", o->o.dir);
    fd = safefile_open(dfd, name, o->o.append, 0644);
    if (fd < 0)
        err_set(err, "--output-dir: cannot write %s/%s/%s: %s", o->o.dir, sub,
                name, errno == ELOOP ? "a symbolic link (someone else's?)" :
                errno == EPERM ? "another user's file" : strerror(errno));
    close(dfd);
    return fd;
}

static int stream_init(struct output *o, struct stream *s, int rank,
                       int which, struct err *err)
{
    s->rank = rank;
    s->which = which;
    s->show = shown(&o->o, rank) && !(o->o.hide & which);
    s->file = -1;
    s->taglen = (size_t)snprintf(s->tag, sizeof s->tag, "[%d] ", rank);
    if (o->o.dir && (s->file = open_file(o, rank, which, err)) < 0)
        return -1;
    return 0;
}

/* The stream's pipe, made when its rank is about to start. */
static int stream_pipe(struct stream *s, struct err *err)
{
    int fds[2];

    if (s->piped)
        return 0;
    if (pipe2(fds, O_CLOEXEC) < 0)
        return err_set(err, "cannot make an output pipe: %s", strerror(errno));
    s->rfd = fds[0];
    s->wfd = fds[1];
    s->piped = 1;
    fcntl(s->rfd, F_SETFL, O_NONBLOCK);
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
    /* the folder is opened once: every rank's files go below this fd, not
     * below a path someone could swap meanwhile */
    o->dirfd = opts->dir ? safefile_dir(AT_FDCWD, opts->dir, 0, err) : -1;
    if (opts->dir && o->dirfd < 0) {
        err_prefix(err, "--output-dir");
        free(o->s);
        free(o);
        return NULL;
    }
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

int output_child_open(struct output *o, int i, struct err *err)
{
    return stream_pipe(&o->s[2 * i], err) < 0 ||
           stream_pipe(&o->s[2 * i + 1], err) < 0 ? -1 : 0;
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

/* Copy len bytes to the console buffer being filled (*k bytes in it),
 * submitting it for fd each time it is full. */
static void put(struct output *o, int fd, size_t *k, const char *p, size_t len)
{
    while (len > 0) {
        size_t n = OUT_BUF - *k < len ? OUT_BUF - *k : len;
        memcpy(writeq_buffer(o->q) + *k, p, n);
        *k += n;
        p += n;
        len -= n;
        if (*k == OUT_BUF) {
            writeq_submit(o->q, fd, *k);
            *k = 0;
        }
    }
}

/* What each line of s gets in front, into buf (len bytes): the time
 * (mpirun --timestamp-output's date: lines read together share it) and
 * the tag, as asked.  Returns its length. */
static size_t line_prefix(const struct output *o, const struct stream *s,
                          char *buf, size_t len)
{
    size_t n = 0;

    if (o->o.timestamp) {
        time_t now = (time_t)clock_wall();
        struct tm tm;

        if (localtime_r(&now, &tm))
            n = strftime(buf, len, "%a %b %e %H:%M:%S %Y ", &tm);
    }
    if (o->o.tag && n + s->taglen < len) {
        memcpy(buf + n, s->tag, s->taglen);
        n += s->taglen;
    }
    return n;
}

/* Queue the len bytes at p prefixed for fd: each line gets the stream's
 * prefix, however long; a piece without its newline (the last of a
 * stream, or of a line longer than LINE_HELD) gets one, so that the next
 * prefix starts a line.  The writer thread writes the buffers in order: a
 * line over several stays whole on the console. */
static void queue_tagged(struct output *o, const struct stream *s, int fd,
                         const char *p, size_t len)
{
    char pre[80];
    size_t k = 0, prelen = line_prefix(o, s, pre, sizeof pre);

    for (size_t i = 0; i < len;) {
        const char *nl = memchr(p + i, '\n', len - i);
        size_t n = nl ? (size_t)(nl - (p + i)) + 1 : len - i;
        put(o, fd, &k, pre, prelen);
        put(o, fd, &k, p + i, n);
        if (!nl)
            put(o, fd, &k, "\n", 1);
        i += n;
    }
    if (k > 0)
        writeq_submit(o->q, fd, k);
}

/* Queue the len bytes at p for fd as they are. */
static void queue_raw(struct output *o, int fd, const char *p, size_t len)
{
    for (size_t i = 0; i < len; i += OUT_BUF) {
        size_t n = len - i < OUT_BUF ? len - i : OUT_BUF;
        memcpy(writeq_buffer(o->q), p + i, n);
        writeq_submit(o->q, fd, n);
    }
}

/* Write len bytes of whole lines (or pieces of overlong lines): raw to the
 * file at once, to the console (tagged or raw) through the writer thread.
 * A console error shows at the next call. */
static int emit(struct output *o, struct stream *s, const char *p, size_t len,
                struct err *err)
{
    int console = s->which == 1 ? o->o.console_out : o->o.console_err, e;

    if (o->o.tap && len > 0)
        o->o.tap(o->o.tap_ctx, s->rank, s->which, p, len);
    if (s->file >= 0 && write_all(s->file, p, len) < 0)
        return err_set(err, "writing rank %d's %s file: %s", s->rank,
                       s->which == 1 ? "stdout" : "stderr", strerror(errno));
    if (!s->show || len == 0)
        return 0;
    if (!o->q && !(o->q = writeq_create(OUT_BUF, OUT_BUFS, err)))
        return -1;
    if (o->o.tag || o->o.timestamp)
        queue_tagged(o, s, console, p, len);
    else
        queue_raw(o, console, p, len);
    if ((e = writeq_failed(o->q)) != 0)
        return err_set(err, "writing the output: %s", strerror(e));
    return 0;
}

/* Keep the len bytes at p (the start of a line) after the stream's part,
 * the part grown to hold them; past LINE_HELD the part is written as a
 * piece first. */
static int keep(struct output *o, struct stream *s, const char *p, size_t len,
                struct err *err)
{
    size_t cap = s->cap ? s->cap : LINE_BUF;
    char *grown;

    if (s->len + len > LINE_HELD) {
        if (emit(o, s, s->part, s->len, err) < 0)
            return -1;
        s->len = 0;
    }
    while (cap < s->len + len)
        cap *= 2;
    if (cap != s->cap || !s->part) {
        if (!(grown = realloc(s->part, cap)))
            return err_set(err, "out of memory");
        s->part = grown;
        s->cap = cap;
    }
    memcpy(s->part + s->len, p, len);
    s->len += len;
    return 0;
}

/* p (len bytes, a stream's part and then what it read) holds lines: emit
 * every complete one, keep the rest as the stream's part. */
static int consume(struct output *o, struct stream *s, const char *p,
                   size_t len, struct err *err)
{
    const char *last = memrchr(p, '\n', len);
    size_t n = last ? (size_t)(last - p) + 1 : 0;

    if (n > 0 && emit(o, s, p, n, err) < 0)
        return -1;
    s->len = 0;
    return n < len ? keep(o, s, p + n, len - n, err) : 0;
}

/* A stream whose part is longer than LINE_BUF read r bytes at p: the part
 * grows until the line ends, then goes whole, and the rest as usual; a
 * part grown past LINE_BUF is freed again. */
static int consume_long(struct output *o, struct stream *s, const char *p,
                        size_t r, struct err *err)
{
    const char *nl = memchr(p, '\n', r);
    size_t n = nl ? (size_t)(nl - p) + 1 : r;

    if (keep(o, s, p, n, err) < 0)
        return -1;
    if (!nl)
        return 0;
    if (emit(o, s, s->part, s->len, err) < 0)
        return -1;
    free(s->part);
    s->part = NULL;
    s->len = s->cap = 0;
    return consume(o, s, p + n, r - n, err);
}

static void stream_close(struct output *o, struct stream *s, struct err *err)
{
    if (s->len > 0)
        emit(o, s, s->part, s->len, err);
    s->len = 0;
    if (s->rfd >= 0)
        close(s->rfd);
    s->rfd = -1;
}

/* A readable pipe that holds nothing is at its end (poll says POLLIN only
 * when it holds bytes). */
static int at_end(int fd)
{
    int avail = -1;

    return ioctl(fd, FIONREAD, &avail) == 0 && avail == 0;
}

int output_ready(struct output *o, int id, struct err *err)
{
    struct stream *s = &o->s[id];

    /* the buffer comes with the first byte: a job whose ranks print
     * nothing never maps its 320 KiB */
    if (!o->in && at_end(s->rfd)) {
        stream_close(o, s, err);
        return 0;
    }
    if (!o->in && !(o->in = aligned_alloc(4096, LINE_BUF + READ_BUF)))
        return err_set(err, "out of memory");
    for (;;) {
        ssize_t r;
        char *at = o->in + LINE_BUF;
        int held = s->len > LINE_BUF;   /* the part stays in its own */
        if (s->len > 0 && !held)
            memcpy(at - s->len, s->part, s->len);
        r = read(s->rfd, at, READ_BUF);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && errno == EAGAIN)
            return 0;
        if (r <= 0) {
            stream_close(o, s, err);
            return 0;
        }
        if (!s->grown && (size_t)r >= PIPE_GROW_AT) {
            fcntl(s->rfd, F_SETPIPE_SZ, PIPE_BIG);    /* best effort */
            s->grown = 1;
        }
        if (held ? consume_long(o, s, at, (size_t)r, err) < 0
                 : consume(o, s, at - s->len, s->len + (size_t)r, err) < 0)
            return -1;
        if ((size_t)r < READ_BUF / 2)
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
    if (o->q)
        writeq_flush(o->q);     /* all out before dlrun says anything */
}

void output_destroy(struct output *o)
{
    if (!o)
        return;
    writeq_destroy(o->q);
    for (int i = 0; i < o->n; i++) {
        struct stream *s = &o->s[i];
        if (s->rfd >= 0)
            close(s->rfd);
        if (s->wfd >= 0)
            close(s->wfd);
        if (s->file >= 0)
            close(s->file);
        free(s->part);
    }
    if (o->dirfd >= 0)
        close(o->dirfd);
    free(o->s);
    free(o->in);
    free(o);
}
