/* readall.c - see readall.h. */
#include "util/readall.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>

char *read_all(FILE *f, size_t max, size_t *len)
{
    size_t cap = 4096, got;
    char *buf = malloc(cap), *grown;

    *len = 0;
    errno = 0;          /* what a failed read leaves is the read's error */
    while (buf && (got = fread(buf + *len, 1, cap - *len - 1, f)) > 0) {
        *len += got;
        if (*len > max) {
            free(buf);
            errno = EFBIG;
            return NULL;
        }
        if (*len + 1 < cap)
            continue;
        grown = realloc(buf, cap *= 2);
        if (!grown)
            free(buf);
        buf = grown;
    }
    if (buf && ferror(f)) {
        int e = errno ? errno : EIO;
        free(buf);
        errno = e;
        return NULL;
    }
    if (buf)
        buf[*len] = '\0';
    return buf;
}

int write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;

    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EAGAIN) {
            struct pollfd pfd = { .fd = fd, .events = POLLOUT };
            poll(&pfd, 1, 100);
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}
