/* fail.c - cmd_fail and the sink of lib/'s lines: the one place where
 * what the library says (lib/util/say.h) reaches the terminal, as
 * "dlrun: LINE" on stderr, after whatever stdout held. */
#include <stdarg.h>
#include <stdio.h>

#include "cmd.h"

static void say_stderr(void *ctx, const char *line)
{
    (void)ctx;
    fflush(stdout);
    fprintf(stderr, "dlrun: %s\n", line);
}

void cmd_say_to_stderr(void)
{
    say_set_sink(say_stderr, NULL);
}

void cmd_fail_context(const char *text)
{
    say_context(text);
}

int cmd_fail(int code, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    say_v(fmt, ap);
    va_end(ap);
    return code;
}
