/* lineout.h - output passed on in whole lines: bytes are held until their
 * line ends, then written at most PIPE_BUF bytes a write where the lines
 * allow, so that writers sharing one pipe (the relays of every node, on
 * dlrun's stdout) never mix within a line.  The buffer grows to hold a
 * long line whole, up to LINEOUT_HELD: a longer one goes out in pieces of
 * that size (the bound on a relay's memory, dlrun(1) --tag-output). */
#ifndef DLRUN_LINEOUT_H
#define DLRUN_LINEOUT_H

#include <stddef.h>

#define LINEOUT_MAX 65536               /* the buffer's first size */
#define LINEOUT_HELD (16 * 1024 * 1024)

struct lineout {
    int fd;                     /* where the lines go (borrowed) */
    size_t len;                 /* bytes held in buf */
    size_t cap;                 /* buf's size: 0 before the first bytes */
    char *buf;                  /* owned: lineout_free */
};

/* Where the next bytes read go (*room of them, 0 when full or out of
 * memory): read into it, add what was read to o->len, then
 * lineout_flush(o, 0). */
char *lineout_space(struct lineout *o, size_t *room);

/* Write the complete lines held; with force (at the end), also what
 * follows the last newline.  A line that fills the buffer makes it grow
 * (LINEOUT_HELD at most; past it, or when memory is short, the buffer goes
 * as a piece).  0, or -1 with errno when a write failed (the bytes are
 * dropped all the same: a reader gone must not stop the relay). */
int lineout_flush(struct lineout *o, int force);

/* Free the buffer (what is held is dropped: flush first). */
void lineout_free(struct lineout *o);

#endif
