/* fail.c - cmd_fail: the one line every subcommand prints when it stops
 * (cmd.h).  Apart from main's dispatch table in dlrun.c, so that the
 * subcommands that print through it do not depend on main. */
#include <stdarg.h>
#include <stdio.h>

#include "cmd.h"

static const char *fail_context;

void cmd_fail_context(const char *text)
{
    fail_context = text;
}

int cmd_fail(int code, const char *fmt, ...)
{
    va_list ap;

    fflush(stdout);
    fputs("dlrun: ", stderr);
    if (fail_context)
        fputs(fail_context, stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return code;
}
