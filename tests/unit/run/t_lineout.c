/* t_lineout.c - whole lines only, at most PIPE_BUF bytes a write where the
 * lines allow; each write seen as one message of a SEQPACKET socket. */
#include <limits.h>
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
    for (size_t i = 0; i < LINEOUT_MAX / sizeof line + 1; i++)
        feed(line, sizeof line - 1);        /* no newline: one long line */
    is_int((long)o.len, LINEOUT_MAX, "a long line fills the buffer");
    lineout_flush(&o, 0);
    is_int((long)o.len, 0, "  and goes without its newline");
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
    close(sv[0]);
    close(sv[1]);
    return tap_done();
}
