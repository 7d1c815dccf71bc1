/* say.h - the lines dlrun says to its user, from wherever they arise.
 *
 * Library code never writes to the terminal itself: what the user must
 * read (a failure, a -v step, a warning) goes to the sink that cmd/
 * installs once in main (cmd/fail.c: "dlrun: LINE" on stderr), and a unit
 * test installs one that keeps the lines to check them.  With no sink
 * installed the lines are dropped.
 *
 *     int rc = say_fail(EXIT_USAGE, "--nnodes %s: expected N or MIN:MAX", s);
 *     say("warning: %s", why);
 */
#ifndef DLRUN_SAY_H
#define DLRUN_SAY_H

#include <stdarg.h>

/* Exit codes shared by every subcommand and the job library (documented
 * in dlrun(1)). */
enum {
    EXIT_OK = 0,
    EXIT_FAIL = 1,      /* a run-time failure that is not the user's input */
    EXIT_USAGE = 2,     /* bad option, bad input, inconsistent allocation */
    EXIT_PMI_TIMEOUT = 3, /* a PMI launcher did not answer within
                             DLRUN_PMI_TIMEOUT (a task never came) */
    EXIT_STALL = 124,   /* --stall-timeout: every rank idle that long */
    EXIT_NODES = 125,   /* --nnodes MIN:MAX: a node fault left fewer than
                           MIN nodes and no spare */
    EXIT_NOEXEC = 126,  /* program found but not executable */
    EXIT_NOTFOUND = 127 /* program not found */
};

/* Takes one line (no "dlrun: " and no newline; borrowed for the call). */
typedef void (*say_sink_fn)(void *ctx, const char *line);

/* Install the sink (NULL: drop the lines); ctx is borrowed.  Returns the
 * sink it replaces, so that a test can put it back. */
say_sink_fn say_set_sink(say_sink_fn fn, void *ctx);

/* Put text (borrowed; NULL: nothing) before every line until called
 * again: where the words come from when a parser runs on words that are
 * not the command line (dlrun script checking the dlrun line it writes). */
void say_context(const char *text);

/* One line to the sink (the context before it). */
void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void say_v(const char *fmt, va_list ap);

/* say the line and return code: `return say_fail(EXIT_USAGE, ...)`. */
int say_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
