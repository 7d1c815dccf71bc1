/* t_writeq.c - the writer thread: buffers reach their fds whole and in
 * the order queued while the pipe is full and the ring runs out (the
 * caller waits, nothing is lost), several fds interleaved, a length of 0
 * giving the buffer back, write errors reported once (EPIPE, EBADF).
 * write_all, which the thread writes with, is tested in t_readall.c. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "run/writeq.h"

#define TOTAL (1 << 20)     /* 1 MiB: 16 pipes full */

struct sink {
    int fd;
    char *data;
    size_t len;
};

/* Read fd to EOF into s->data. */
static void *drain(void *arg)
{
    struct sink *s = arg;
    size_t cap = TOTAL + 65536;
    ssize_t n;

    s->data = malloc(cap);
    while (s->data && (n = read(s->fd, s->data + s->len, cap - s->len)) > 0)
        s->len += (size_t)n;
    return NULL;
}

static char byte_at(size_t i, int stream)
{
    return (char)((i * 7 + (size_t)stream * 13) % 251);
}

/* 1 MiB in buffers of irregular length through a 4-buffer ring into two
 * pipes at once, read by threads: each pipe gets its bytes in order. */
static void ordered(void)
{
    struct err err = { "" };
    struct writeq *q = writeq_create(4096, 4, &err);
    int p[2][2];
    pthread_t t[2];
    struct sink s[2] = { { 0 }, { 0 } };
    size_t off[2] = { 0, 0 }, step = 0;

    ok(q != NULL, "writeq_create");
    if (!q)
        return;
    for (int k = 0; k < 2; k++) {
        if (pipe(p[k]) < 0)
            return;
        fcntl(p[k][1], F_SETPIPE_SZ, 4096);    /* fills at once */
        s[k].fd = p[k][0];
        pthread_create(&t[k], NULL, drain, &s[k]);
    }
    while (off[0] < TOTAL || off[1] < TOTAL) {
        int k = off[0] < TOTAL && (step % 3 != 2 || off[1] >= TOTAL) ? 0 : 1;
        size_t n = 1 + (step * 977) % 4096;
        char *b = writeq_buffer(q);

        if (n > TOTAL - off[k])
            n = TOTAL - off[k];
        for (size_t i = 0; i < n; i++)
            b[i] = byte_at(off[k] + i, k);
        writeq_submit(q, p[k][1], n);
        off[k] += n;
        step++;
        if (step % 50 == 0)                     /* a buffer given back */
            writeq_submit(q, p[k][1], 0), (void)writeq_buffer(q);
    }
    is_int(writeq_flush(q), 0, "flush: everything written");
    for (int k = 0; k < 2; k++) {
        int same;
        close(p[k][1]);
        pthread_join(t[k], NULL);
        same = s[k].len == TOTAL;
        for (size_t i = 0; same && i < TOTAL; i++)
            same = s[k].data[i] == byte_at(i, k);
        ok(same, k ? "second pipe: every byte in order" :
                     "first pipe: every byte in order");
        free(s[k].data);
        close(p[k][0]);
    }
    writeq_destroy(q);
}

/* Queue len bytes of text for fd. */
static void put(struct writeq *q, int fd, const char *text)
{
    char *b = writeq_buffer(q);

    memcpy(b, text, strlen(text));
    writeq_submit(q, fd, strlen(text));
}

static void errors(void)
{
    struct err err = { "" };
    struct writeq *q = writeq_create(100, 2, &err);  /* not a page multiple */
    int dead[2], live[2];
    char c = 0;

    ok(q != NULL, "a buffer size that is not a multiple of the page");
    if (!q || pipe(dead) < 0 || pipe(live) < 0)
        return;
    close(dead[0]);
    put(q, dead[1], "lost");
    errno = 0;
    ok(writeq_flush(q) == -1 && errno == EPIPE,
       "a pipe nobody reads: flush -1, EPIPE");
    is_int(writeq_flush(q), 0, "reported once: the next flush is clean");

    put(q, -1, "x");
    put(q, live[1], "y");
    /* "y" comes after "x" was tried: its error is recorded by then */
    ok(read(live[0], &c, 1) == 1 && c == 'y', "a later buffer still written");
    is_int(writeq_failed(q), EBADF, "writeq_failed: EBADF, without waiting");
    is_int(writeq_failed(q), 0, "and only once");

    put(q, -1, "x");
    put(q, dead[1], "x");
    errno = 0;
    ok(writeq_flush(q) == -1 && errno == EBADF, "two failures: the first kept");
    writeq_submit(q, live[1], 0);
    is_int(writeq_flush(q), 0, "a length of 0 writes nothing");
    close(live[1]);
    ok(read(live[0], &c, 1) == 0, "nothing more on the pipe");
    close(live[0]);
    close(dead[1]);
    writeq_destroy(q);
    writeq_destroy(NULL);
    ok(1, "writeq_destroy(NULL)");
}

int main(void)
{
    alarm(300);     /* hang guard */
    signal(SIGPIPE, SIG_IGN);   /* the thread takes SIGPIPE, as dlrun would */
    ordered();
    errors();
    return tap_done();
}
