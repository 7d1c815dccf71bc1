/* t_output.c - the output engine on real pipes: whole lines only, tags,
 * long lines whole (pieces past 16 MiB), a last line without newline, bytes kept, files
 * and the console filter; data cut at every place a pipe may cut it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "run/output.h"
#include "util/clock.h"
#include "tap.h"

static char dir[64];

/* A console file, empty. */
static int console(const char *name)
{
    char path[128];

    snprintf(path, sizeof path, "%s/%s", dir, name);
    return open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
}

/* Everything fd holds (NUL-terminated; *len without it); caller frees. */
static char *contents(int fd, size_t *len)
{
    off_t n = lseek(fd, 0, SEEK_END);
    char *buf = malloc((size_t)n + 1);

    *len = 0;
    if (!buf || pread(fd, buf, (size_t)n, 0) != n) {
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    *len = (size_t)n;
    return buf;
}

/* Write n bytes to fd (non-blocking here); when the pipe is full, let
 * the engine read (stream id) and go on: a piece may be larger than the
 * pipe, which grows only once the engine has seen a large read. */
static void write_piece(struct output *o, int id, int fd, const char *p,
                        size_t n)
{
    struct err err = { "" };

    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno != EAGAIN) {
            printf("# write: %s\n", strerror(errno));
            return;
        }
        if (w < 0) {
            output_ready(o, id, &err);
            continue;
        }
        p += w;
        n -= (size_t)w;
    }
}

/* Feed len bytes to stream (rank index i, 1 or 2) in pieces of `step`
 * bytes, letting the engine read after each. */
static void feed(struct output *o, int i, int stream, const char *p,
                 size_t len, size_t step)
{
    struct err err = { "" };
    int fd = output_child_fd(o, i, stream), id = 2 * i + (stream == 2);

    fcntl(fd, F_SETFL, O_NONBLOCK);
    for (size_t off = 0; off < len; off += step) {
        size_t n = len - off < step ? len - off : step;
        write_piece(o, id, fd, p + off, n);
        output_ready(o, id, &err);
    }
}

static struct output *engine(int n, const struct output_opts *oo)
{
    static const int ranks[] = { 0, 1, 2, 3 };
    struct err err = { "" };
    struct output *o = output_create(ranks, n, oo, &err);

    if (!o)
        printf("# output_create: %s\n", err.msg);
    for (int i = 0; o && i < n; i++)
        if (output_child_open(o, i, &err) < 0)
            printf("# output_child_open: %s\n", err.msg);
    return o;
}

static void test_tags(void)
{
    struct output_opts oo = { .tag = 1, .console_out = console("o1"),
                              .console_err = console("e1") };
    struct output *o = engine(2, &oo);
    size_t len;
    char *out, *errs;

    if (!o)
        return;
    feed(o, 0, 1, "a\nb", 3, 3);
    feed(o, 1, 1, "c\n", 2, 2);
    feed(o, 0, 1, "b\n", 2, 2);     /* ends rank 0's "bb" */
    feed(o, 1, 2, "oops", 4, 4);    /* no newline at the end */
    feed(o, 1, 1, "d", 1, 1);
    for (int i = 0; i < 2; i++)
        output_close_child_ends(o, i);
    output_drain(o);
    out = contents(oo.console_out, &len);
    errs = contents(oo.console_err, &len);
    is_str(out, "[0] a\n[1] c\n[0] bb\n[1] d\n", "tagged stdout, lines whole");
    is_str(errs, "[1] oops\n", "a last line without newline ends one on the console");
    free(out);
    free(errs);
    output_destroy(o);
    close(oo.console_out);
    close(oo.console_err);
}

static long fixed_ms(void *ctx)
{
    (void)ctx;
    return 1795869943000L;      /* Sat Nov 28 12:45:43 2026 UTC */
}

/* --timestamp-output: mpirun's date before each line, before the tag with
 * -l; the files keep the bytes as they came. */
static void test_timestamp(void)
{
    char path[128];
    struct output_opts oo = { .timestamp = 1, .dir = path,
                              .console_out = console("o5"),
                              .console_err = console("e5") };
    struct output *o;
    size_t len;
    char *out, *file;
    int fd;

    snprintf(path, sizeof path, "%s/ts", dir);
    setenv("TZ", "UTC", 1);
    tzset();
    clock_fake(fixed_ms, NULL);
    for (int tag = 0; tag < 2; tag++) {
        oo.tag = tag;
        if (!(o = engine(1, &oo)))
            break;
        feed(o, 0, 1, "a\nb\nc", 5, 5);
        output_close_child_ends(o, 0);
        output_drain(o);
        output_destroy(o);
    }
    clock_fake(NULL, NULL);
    out = contents(oo.console_out, &len);
    is_str(out, "Sat Nov 28 12:45:43 2026 a\nSat Nov 28 12:45:43 2026 b\n"
           "Sat Nov 28 12:45:43 2026 c\n"
           "Sat Nov 28 12:45:43 2026 [0] a\nSat Nov 28 12:45:43 2026 [0] b\n"
           "Sat Nov 28 12:45:43 2026 [0] c\n",
           "--timestamp-output: each line dated (mpirun's format), before -l's tag");
    snprintf(path + strlen(path), sizeof path - strlen(path), "/rank.0/stdout");
    fd = open(path, O_RDONLY | O_CLOEXEC);
    file = fd >= 0 ? contents(fd, &len) : NULL;
    is_str(file, "a\nb\nc", "  --output-dir's file keeps the bytes undated");
    snprintf(path, sizeof path, "%s/ts", dir);
    if (fd >= 0)
        close(fd);
    free(out);
    free(file);
    close(oo.console_out);
    close(oo.console_err);
}

/* A line of n bytes from rank 0, fed in pieces of step bytes, while
 * rank 1 writes short lines between them: the console of (tag) holds
 * rank 0's line whole, once, and rank 1's lines whole. */
static int long_line(int tag, size_t n, size_t step, char **out, size_t *len)
{
    struct output_opts oo = { .tag = tag, .console_out = console("o2"),
                              .console_err = console("e2") };
    struct output *o = engine(2, &oo);
    char *line = malloc(n + 1);

    *out = NULL;
    if (!o || !line)
        return free(line), -1;
    memset(line, 'x', n);
    line[n] = '\n';
    for (size_t at = 0; at < n + 1; at += step) {
        feed(o, 0, 1, line + at, n + 1 - at < step ? n + 1 - at : step, step);
        feed(o, 1, 1, "short\n", 6, 6);
    }
    for (int i = 0; i < 2; i++)
        output_close_child_ends(o, i);
    output_drain(o);
    *out = contents(oo.console_out, len);
    free(line);
    output_destroy(o);
    close(oo.console_out);
    close(oo.console_err);
    return 0;
}

/* How many lines of out (len bytes) are `prefix` + `want` x's exactly. */
static int whole_lines(const char *out, size_t len, const char *prefix,
                       size_t want)
{
    size_t at = 0, p = strlen(prefix);
    int n = 0;

    while (out && at < len) {
        const char *nl = memchr(out + at, '\n', len - at);
        size_t l = nl ? (size_t)(nl - (out + at)) : len - at;
        if (l == p + want && strncmp(out + at, prefix, p) == 0 &&
            (want == 0 || (out[at + p] == 'x' && out[at + l - 1] == 'x')))
            n++;
        at += l + 1;
    }
    return n;
}

/* A line longer than the 64 KiB a stream used to hold: never split, with
 * -l one tag; and past LINE_HELD (16 MiB) in pieces, so memory stays
 * bounded. */
static void test_long_line(void)
{
    size_t len;
    char *out;

    if (long_line(1, 150000, 40000, &out, &len) == 0) {
        is_int(whole_lines(out, len, "[0] ", 150000), 1,
               "-l: a 150000-byte line, fed in 40000-byte pieces: one tagged line");
        is_int(whole_lines(out, len, "[1] short", 0), 4,
               "  the other rank's lines whole beside it");
        is_int((long)len, 150000 + 5 + 4 * 10, "  and nothing else");
    }
    free(out);
    if (long_line(0, 1000000, 300000, &out, &len) == 0) {
        is_int(whole_lines(out, len, "", 1000000), 1,
               "untagged: a 1 MB line whole, another rank's lines not inside it");
        is_int((long)len, 1000001 + 4 * 6, "  and nothing else");
    }
    free(out);
    if (long_line(1, 17 << 20, 1 << 20, &out, &len) == 0)
        is_int(whole_lines(out, len, "[0] ", 16 << 20), 1,
               "-l: a 17 MiB line: a 16 MiB piece first (the bound)");
    free(out);
}

static void test_raw_and_files(void)
{
    int show[] = { 1 };
    struct output_opts oo = { .dir = dir, .show = show, .nshow = 1,
                              .console_out = console("o3"),
                              .console_err = console("e3") };
    struct output *o = engine(2, &oo);
    static const char bin[] = "raw\001\000x\n\377end";
    char path[128];
    size_t len;
    char *out, *file;
    int fd;

    if (!o)
        return;
    feed(o, 0, 1, "zero\n", 5, 5);
    feed(o, 1, 1, bin, sizeof bin - 1, 3);
    for (int i = 0; i < 2; i++)
        output_close_child_ends(o, i);
    output_drain(o);
    out = contents(oo.console_out, &len);
    ok(out && len == sizeof bin - 1 && memcmp(out, bin, len) == 0,
       "untagged, rank 1 only: bytes unchanged");
    free(out);
    snprintf(path, sizeof path, "%s/rank.0/stdout", dir);
    fd = open(path, O_RDONLY);
    file = fd >= 0 ? contents(fd, &len) : NULL;
    is_str(file, "zero\n", "--output-dir: a hidden rank's file");
    free(file);
    if (fd >= 0)
        close(fd);
    output_destroy(o);
    close(oo.console_out);
    close(oo.console_err);
}

/* 2 ranks, 5000 numbered lines of varied length each, fed in pieces that
 * end anywhere: every line arrives once, whole, tagged, in order. */
static char *numbered(int rank, size_t *len)
{
    char *buf = malloc(5000 * 200), *p = buf;

    for (int i = 0; buf && i < 5000; i++) {
        p += sprintf(p, "r%d %d ", rank, i);
        memset(p, 'a' + i % 26, (size_t)(i * 7 % 150));
        p += i * 7 % 150;
        *p++ = '\n';
    }
    *len = buf ? (size_t)(p - buf) : 0;
    return buf;
}

static int check_numbered(const char *out, size_t len)
{
    int next[2] = { 0, 0 }, bad = 0, r, i;
    size_t at = 0;

    while (at < len) {
        const char *nl = memchr(out + at, '\n', len - at);
        size_t n = nl ? (size_t)(nl - out) - at : len - at;
        int pad = 0;
        if (!nl || sscanf(out + at, "[%d] r%*d %d%n", &r, &i, &pad) != 2 ||
            r < 0 || r > 1 || i != next[r]++ || out[at + (size_t)pad] != ' ' ||
            n - (size_t)pad - 1 != (size_t)(i * 7 % 150))
            bad++;
        at += n + 1;
    }
    return bad == 0 && next[0] == 5000 && next[1] == 5000;
}

static void test_cut_anywhere(void)
{
    static const size_t steps[] = { 1, 7, 4096, 65537, 300000 };
    size_t l0, l1, len;
    char *a = numbered(0, &l0), *b = numbered(1, &l1), *out, what[80];

    for (size_t k = 0; a && b && k < sizeof steps / sizeof steps[0]; k++) {
        struct output_opts oo = { .tag = 1, .console_out = console("o4"),
                                  .console_err = console("e4") };
        struct output *o = engine(2, &oo);
        size_t step = steps[k];
        if (!o)
            break;
        for (size_t off = 0; off < l0 || off < l1; off += step) {
            if (off < l0)
                feed(o, 0, 1, a + off, l0 - off < step ? l0 - off : step, step);
            if (off < l1)
                feed(o, 1, 1, b + off, l1 - off < step ? l1 - off : step, step);
        }
        for (int i = 0; i < 2; i++)
            output_close_child_ends(o, i);
        output_drain(o);
        out = contents(oo.console_out, &len);
        snprintf(what, sizeof what, "pieces of %zu bytes: every line once, whole, "
                 "in order", step);
        ok(out && check_numbered(out, len), what);
        free(out);
        output_destroy(o);
        close(oo.console_out);
        close(oo.console_err);
    }
    free(a);
    free(b);
}

/* A stream that carries a few lines keeps the kernel's default pipe; one
 * whose read brings 32 KiB or more gets 1 MiB (fewer wake-ups). */
static void test_pipe_grows(void)
{
    struct output_opts oo = { .console_out = console("o5"),
                              .console_err = console("e5") };
    struct output *o = engine(2, &oo);
    size_t n = 200000;
    char *big = malloc(n);
    int quiet, loud;

    if (!o || !big)
        return;
    memset(big, 'y', n);
    big[n - 1] = '\n';
    quiet = fcntl(output_child_fd(o, 0, 1), F_GETPIPE_SZ);
    feed(o, 0, 1, "one line\n", 9, 9);
    feed(o, 1, 1, big, n, n);
    is_int(fcntl(output_child_fd(o, 0, 1), F_GETPIPE_SZ), quiet,
           "a quiet stream keeps its pipe size");
    loud = fcntl(output_child_fd(o, 1, 1), F_GETPIPE_SZ);
    ok(quiet < (1 << 20) && loud == (1 << 20),
       "a stream with a large read gets a 1 MiB pipe");
    for (int i = 0; i < 2; i++)
        output_close_child_ends(o, i);
    output_drain(o);
    free(big);
    output_destroy(o);
    close(oo.console_out);
    close(oo.console_err);
}

/* A rank's pipes are made when it is about to start, once: dlrun holds
 * no pipe of a rank not started yet. */
static void test_pipes_per_rank(void)
{
    static const int ranks[] = { 0, 1, 2 };
    struct output_opts oo = { .console_out = -1, .console_err = -1 };
    struct err err = { "" };
    struct output *o = output_create(ranks, 3, &oo, &err);
    int fds[6], ids[6], w;

    if (!o) {
        ok(0, "output_create");
        return;
    }
    ok(output_child_fd(o, 0, 1) < 0 && output_child_fd(o, 2, 2) < 0,
       "no pipe before output_child_open");
    is_int(output_poll_fds(o, fds, ids), 0, "  nothing to poll");
    ok(output_child_open(o, 1, &err) == 0 && output_child_fd(o, 1, 1) >= 0 &&
       output_child_fd(o, 1, 2) >= 0, "rank index 1's two pipes");
    w = output_child_fd(o, 1, 1);
    ok(output_child_open(o, 1, &err) == 0 && output_child_fd(o, 1, 1) == w,
       "  made once: a second call keeps them");
    ok(output_child_fd(o, 0, 1) < 0 && output_child_fd(o, 2, 1) < 0,
       "  the other ranks still have none");
    is_int(output_poll_fds(o, fds, ids), 2, "  its two read ends are polled");
    output_close_child_ends(o, 1);
    output_destroy(o);
}

int main(void)
{
    char cmd[128];

    snprintf(dir, sizeof dir, "/tmp/t_output.XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    test_tags();
    test_timestamp();
    test_long_line();
    test_raw_and_files();
    test_cut_anywhere();
    test_pipe_grows();
    test_pipes_per_rank();
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        printf("# could not remove %s\n", dir);
    return tap_done();
}
