/* say.c - the sink of the lines dlrun says (say.h). */
#include "util/say.h"

#include <stdio.h>
#include <stdlib.h>

static say_sink_fn sink;
static void *sink_ctx;
static const char *context;

say_sink_fn say_set_sink(say_sink_fn fn, void *ctx)
{
    say_sink_fn old = sink;

    sink = fn;
    sink_ctx = ctx;
    return old;
}

void say_context(const char *text)
{
    context = text;
}

void say_v(const char *fmt, va_list ap)
{
    char buf[1024], *line = buf;
    va_list copy;
    int n, at;

    if (!sink)
        return;
    at = snprintf(buf, sizeof buf, "%s", context ? context : "");
    if (at >= (int)sizeof buf)
        at = (int)sizeof buf - 1;
    va_copy(copy, ap);
    n = vsnprintf(buf + at, sizeof buf - (size_t)at, fmt, copy);
    va_end(copy);
    /* a long line (a host list, a command) is said whole, not cut */
    if (n >= 0 && (size_t)n >= sizeof buf - (size_t)at &&
        (line = malloc((size_t)at + (size_t)n + 1))) {
        snprintf(line, (size_t)at + 1, "%s", buf);
        vsnprintf(line + at, (size_t)n + 1, fmt, ap);
    } else if (!line) {
        line = buf;
    }
    sink(sink_ctx, line);
    if (line != buf)
        free(line);
}

void say(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    say_v(fmt, ap);
    va_end(ap);
}

int say_fail(int code, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    say_v(fmt, ap);
    va_end(ap);
    return code;
}
