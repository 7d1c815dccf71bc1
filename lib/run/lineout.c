/* lineout.c - see lineout.h. */
#include "run/lineout.h"

#include <limits.h>
#include <string.h>

#include "util/readall.h"

char *lineout_space(struct lineout *o, size_t *room)
{
    *room = sizeof o->buf - o->len;
    return o->buf + o->len;
}

/* The end of the chunk that starts at done: its first line (or all that
 * is held, when no newline follows) and the whole lines after it while the
 * chunk stays within PIPE_BUF.  0 when nothing is to go yet. */
static size_t chunk_end(const struct lineout *o, size_t done, int force)
{
    const char *nl = memchr(o->buf + done, '\n', o->len - done);
    size_t end = nl ? (size_t)(nl - o->buf) + 1 : o->len;

    if (!nl && !force && o->len < sizeof o->buf)
        return 0;
    while (nl && end < o->len) {
        const char *next = memchr(o->buf + end, '\n', o->len - end);
        if (!next || (size_t)(next - (o->buf + done)) + 1 > PIPE_BUF)
            break;
        end = (size_t)(next - o->buf) + 1;
    }
    return end;
}

int lineout_flush(struct lineout *o, int force)
{
    size_t done = 0, end;
    int rc = 0;

    while (done < o->len && (end = chunk_end(o, done, force)) > 0) {
        if (write_all(o->fd, o->buf + done, end - done) < 0)
            rc = -1;
        done = end;
    }
    memmove(o->buf, o->buf + done, o->len - done);
    o->len -= done;
    return rc;
}
