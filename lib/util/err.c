#include "util/err.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

int err_set(struct err *err, const char *fmt, ...)
{
    va_list ap;

    if (!err)
        return -1;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return -1;
}

int err_prefix(struct err *err, const char *fmt, ...)
{
    char prefix[ERR_MSG_MAX];
    char old[ERR_MSG_MAX];
    va_list ap;

    if (!err)
        return -1;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    /* truncation keeps the head of the message, which says the most */
    if (snprintf(err->msg, sizeof err->msg, "%s: %s", prefix, old) < 0)
        memcpy(err->msg, old, sizeof old);
    return -1;
}

const char *err_quote(char *buf, size_t max, const char *s, size_t len)
{
    size_t i;

    for (i = 0; i < len && i < max; i++)
        buf[i] = isprint((unsigned char)s[i]) ? s[i] : '?';
    if (i < len) {
        memcpy(buf + i, "...", 3);
        i += 3;
    }
    buf[i] = '\0';
    return buf;
}
