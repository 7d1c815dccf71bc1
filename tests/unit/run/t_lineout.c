/* t_lineout.c - whole lines only, at most PIPE_BUF bytes a write where the
 * lines allow; each write seen as one message of a SEQPACKET socket. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "run/lineout.h"
#include "tap.h"

static struct lineout o;
static char got[LINEOUT_MAX + 1];

/* Bytes into o, as a read would put them there. */
static void feed(const char *s, size_t n)
{
    size_t room;
    char *p = lineout_space(&o, &room);

    if (n > room)
        n = room;
    memcpy(p, s, n);
    o.len += n;
}

/* The next write's bytes (one message), or -1 when none is waiting. */
static long next_write(int fd)
{
    ssize_t n = recv(fd, got, sizeof got - 1, MSG_DONTWAIT);

    got[n > 0 ? n : 0] = '\0';
    return n;
}

static void lines(int rd)
{
    feed("ab\ncd", 5);
    is_int(lineout_flush(&o, 0), 0, "flush");
    is_int(next_write(rd), 3, "the whole line went");
    is_str(got, "ab\n", "  as it was");
    is_int((long)o.len, 2, "the rest is held");
    is_int(next_write(rd), -1, "  and not written");
    feed("e\nf\ng", 5);
    lineout_flush(&o, 0);
    is_int(next_write(rd), 6, "two lines: one write");
    is_str(got, "cde\nf\n", "  both");
    lineout_flush(&o, 1);
    is_int(next_write(rd), 1, "forced: the part line");
    is_str(got, "g", "  as it was");
    is_int((long)o.len, 0, "nothing held");
}

/* Lines that together pass PIPE_BUF go in writes of whole lines within
 * it; a line longer than the buffer in buffer-sized pieces. */
static void chunks(int rd)
{
    static char line[1000];
    int writes = 0, whole = 1, per = PIPE_BUF / (int)sizeof line;
    long n, total = 0;

    memset(line, 'x', sizeof line - 1);
    line[sizeof line - 1] = '\n';
    for (int i = 0; i < 10; i++)
        feed(line, sizeof line);
    lineout_flush(&o, 0);
    while ((n = next_write(rd)) > 0) {
        writes++, total += n;
        whole = whole && n <= PIPE_BUF && n % (long)sizeof line == 0;
    }
    is_int(total, 10 * (long)sizeof line, "every byte written");
    ok(whole, "each write: whole lines within PIPE_BUF");
    is_int(writes, (10 + per - 1) / per, "as few writes as that allows");
}

/* Feed n bytes of p as reads would (what fits each time), flushing after
 * each; the bytes o's file holds after. */
static long feed_long(const char *p, size_t n)
{
    for (size_t at = 0; at < n;) {
        size_t room, k;
        char *q = lineout_space(&o, &room);
        k = n - at < room ? n - at : room;
        memcpy(q, p + at, k);
        o.len += k;
        at += k;
        lineout_flush(&o, 0);
    }
    return (long)lseek(o.fd, 0, SEEK_END);
}

/* A line longer than the first buffer (a JSON log line of a remote rank)
 * is held until it ends, then goes whole; past LINEOUT_HELD in pieces. */
static void long_lines(void)
{
    char path[] = "/tmp/t_lineout.XXXXXX";
    size_t n = 3 * LINEOUT_MAX + 5;
    char *big = malloc(LINEOUT_HELD + 1);
    int fd = mkstemp(path), saved = o.fd;

    if (!big || fd < 0)
        return (void)ok(0, "memory and a file for the test");
    unlink(path);
    o.fd = fd;
    memset(big, 'y', LINEOUT_HELD + 1);
    is_int(feed_long(big, n - 1), 0, "3 buffers of a line not ended: nothing written");
    is_int((long)o.len, (long)n - 1, "  all of it held");
    is_int(feed_long("\n", 1), (long)n, "its newline: the line goes whole");
    is_int((long)o.len, 0, "  nothing held");
    ftruncate(fd, 0);
    lseek(fd, 0, SEEK_SET);
    is_int(feed_long(big, LINEOUT_HELD + 1), LINEOUT_HELD,
           "a line past LINEOUT_HELD: a piece of that size written");
    is_int((long)o.len, 1, "  the rest held: memory bounded");
    lineout_free(&o);
    o.fd = saved;
    close(fd);
    free(big);
}

int main(void)
{
    int sv[2];

    if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) < 0) {
        ok(0, "socketpair");
        return tap_done();
    }
    o.fd = sv[0];
    lines(sv[1]);
    chunks(sv[1]);
    long_lines();
    close(sv[0]);
    close(sv[1]);
    return tap_done();
}
