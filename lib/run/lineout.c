/* lineout.c - see lineout.h. */
#include "run/lineout.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "util/readall.h"

/* The buffer doubled (LINEOUT_MAX at first), up to LINEOUT_HELD: 0, or
 * -1 when it cannot grow. */
static int grow(struct lineout *o)
{
    size_t cap = o->cap ? 2 * o->cap : LINEOUT_MAX;
    char *b;

    if (cap > LINEOUT_HELD || !(b = realloc(o->buf, cap)))
        return -1;
    o->buf = b;
    o->cap = cap;
    return 0;
}

char *lineout_space(struct lineout *o, size_t *room)
{
    if (!o->buf)
        grow(o);
    *room = o->cap - o->len;
    return o->buf ? o->buf + o->len : NULL;
}

/* The end of the chunk that starts at done: its first line (or, with
 * force, all that is held) and the whole lines after it while the chunk
 * stays within PIPE_BUF.  0 when nothing is to go yet. */
static size_t chunk_end(const struct lineout *o, size_t done, int force)
{
    const char *nl = memchr(o->buf + done, '\n', o->len - done);
    size_t end = nl ? (size_t)(nl - o->buf) + 1 : o->len;

    if (!nl && !force)
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
    if (done > 0)
        memmove(o->buf, o->buf + done, o->len - done);
    o->len -= done;
    /* one line not ended fills the buffer: room for the rest of it, or
     * past LINEOUT_HELD it goes as a piece */
    if (o->len > 0 && o->len == o->cap && grow(o) < 0) {
        if (write_all(o->fd, o->buf, o->len) < 0)
            rc = -1;
        o->len = 0;
    }
    return rc;
}

void lineout_free(struct lineout *o)
{
    free(o->buf);
    o->buf = NULL;
    o->len = o->cap = 0;
}
