/* t_readall.c - read_all: a stream read to its end whatever sizes the
 * reads come in (a pipe written a few bytes at a time), NUL-terminated,
 * bytes kept as they are (NULs inside), the bound (max bytes pass, one
 * more is EFBIG) and a read error (the read's errno).  write_all: a whole buffer
 * through EAGAIN on a non-blocking pipe whose reader is slow. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/readall.h"
#include "tap.h"

#define BIG 100003      /* several times the first buffer, not a power of 2 */

static char pattern[BIG];

struct feed {
    int fd;
    size_t len, chunk;
};

/* Write pattern's first len bytes in chunks, then close: the reader sees
 * short reads of whatever the pipe holds. */
static void *feeder(void *arg)
{
    struct feed *f = arg;

    for (size_t off = 0; off < f->len;) {
        size_t n = f->len - off < f->chunk ? f->len - off : f->chunk;
        ssize_t w = write(f->fd, pattern + off, n);
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    close(f->fd);
    return NULL;
}

/* read_all of len bytes of pattern arriving through a pipe in chunks. */
static char *through_pipe(size_t len, size_t chunk, size_t max, size_t *got)
{
    int p[2];
    pthread_t t;
    struct feed f;
    FILE *r;
    char *data;

    if (pipe(p) < 0)
        return NULL;
    f = (struct feed){ p[1], len, chunk };
    pthread_create(&t, NULL, feeder, &f);
    r = fdopen(p[0], "r");
    data = read_all(r, max, got);
    fclose(r);      /* the feeder sees EPIPE if we stopped early */
    pthread_join(t, NULL);
    return data;
}

static void pieces(void)
{
    size_t got = 1;
    char *d;

    d = through_pipe(BIG, 7, BIG, &got);
    ok(d && got == BIG && memcmp(d, pattern, BIG) == 0,
       "7-byte writes: every byte, in order");
    ok(d && d[got] == '\0', "NUL after the data");
    free(d);
    d = through_pipe(BIG, 65536, BIG, &got);
    ok(d && got == BIG && memcmp(d, pattern, BIG) == 0, "large writes");
    free(d);
    d = through_pipe(0, 1, 10, &got);
    ok(d && got == 0 && d[0] == '\0', "empty stream: empty string");
    free(d);
    d = through_pipe(4095, 1, BIG, &got);
    ok(d && got == 4095 && memcmp(d, pattern, 4095) == 0,
       "one byte short of the first buffer");
    free(d);
    d = through_pipe(4096, 4096, BIG, &got);
    ok(d && got == 4096 && memcmp(d, pattern, 4096) == 0 && d[4096] == '\0',
       "exactly the first buffer: grown for the NUL");
    free(d);
}

static void bounds(void)
{
    size_t got = 0;
    char *d;
    int fd;
    FILE *f;

    d = through_pipe(1000, 100, 1000, &got);
    ok(d && got == 1000, "max bytes exactly: read");
    free(d);
    errno = 0;
    d = through_pipe(1001, 100, 1000, &got);
    ok(!d && errno == EFBIG, "one byte more than max: NULL, EFBIG");
    errno = 0;
    d = through_pipe(BIG, 4096, 50000, &got);
    ok(!d && errno == EFBIG, "far more than max: stops, EFBIG");

    fd = open("/", O_RDONLY | O_DIRECTORY);
    f = fdopen(fd, "r");        /* reads fail with EISDIR */
    errno = 0;
    d = f ? read_all(f, 100, &got) : NULL;
    ok(f && !d && errno == EISDIR, "a read error: NULL, the read's own errno");
    if (f)
        fclose(f);
}

#define WBIG (1 << 20)          /* past any pipe's buffer */

struct drain {
    int fd;
    size_t got;
    int same;
};

static void *drain(void *arg)
{
    struct drain *d = arg;
    char b[4096];
    ssize_t n;

    usleep(20000);              /* the writer meets a full pipe first */
    while ((n = read(d->fd, b, sizeof b)) > 0) {
        for (ssize_t i = 0; i < n; i++)
            d->same = d->same && b[i] == (char)('a' + (d->got + i) % 26);
        d->got += (size_t)n;
    }
    return NULL;
}

static void writes(void)
{
    struct drain d = { .same = 1 };
    char *buf = malloc(WBIG);
    pthread_t t;
    int p[2];

    if (!buf || pipe(p) < 0)
        return (void)ok(0, "setup");
    for (size_t i = 0; i < WBIG; i++)
        buf[i] = (char)('a' + i % 26);
    fcntl(p[1], F_SETFL, O_NONBLOCK);
    d.fd = p[0];
    pthread_create(&t, NULL, drain, &d);
    is_int(write_all(p[1], buf, WBIG), 0, "write_all through a full pipe");
    close(p[1]);
    pthread_join(t, NULL);
    is_int((long)d.got, WBIG, "  every byte arrived");
    ok(d.same, "  in order");
    close(p[0]);
    if (pipe(p) == 0) {
        close(p[0]);
        ok(write_all(p[1], "x", 1) < 0 && errno == EPIPE,
           "no reader: -1 with errno");
        close(p[1]);
    }
    errno = 0;
    ok(write_all(-1, buf, 1) == -1 && errno == EBADF, "a bad fd: -1, EBADF");
    is_int(write_all(-1, buf, 0), 0, "nothing to write: 0");
    free(buf);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);   /* the feeder of a stream cut short */
    for (size_t i = 0; i < BIG; i++)
        pattern[i] = (char)(i * 31 % 251);     /* NULs included */
    pieces();
    bounds();
    writes();
    return tap_done();
}
