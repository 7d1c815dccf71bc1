/* lineout.h - output passed on in whole lines: bytes are held until their
 * line ends, then written at most PIPE_BUF bytes a write where the lines
 * allow, so that writers sharing one pipe (the relays of every node, on
 * dlrun's stdout) never mix within a line.  A line longer than the buffer
 * goes out in buffer-sized pieces. */
#ifndef DLRUN_LINEOUT_H
#define DLRUN_LINEOUT_H

#include <stddef.h>

#define LINEOUT_MAX 65536

struct lineout {
    int fd;                     /* where the lines go (borrowed) */
    size_t len;                 /* bytes held in buf */
    char buf[LINEOUT_MAX];
};

/* Where the next bytes read go (*room of them, 0 when full): read into it,
 * add what was read to o->len, then lineout_flush(o, 0). */
char *lineout_space(struct lineout *o, size_t *room);

/* Write the complete lines held; with force (at the end), also what
 * follows the last newline.  0, or -1 with errno when a write failed (the
 * bytes are dropped all the same: a reader gone must not stop the relay). */
int lineout_flush(struct lineout *o, int force);

#endif
