/* options.h - the options shared by run, env and plan. */
#ifndef DLRUN_OPTIONS_H
#define DLRUN_OPTIONS_H

#include "job/runopts.h"

/* runopts_parse (lib/job/runopts.h), printing usage (borrowed: the
 * subcommand's help text) on stdout for -h/--help.  Returns 0, 1 when
 * help was printed (exit 0), or the exit code after saying why (one
 * line).  o borrows from argv; free with options_free. */
int options_parse(int argc, char **argv, struct options *o, const char *usage);

/* The options' help, shared by the usage texts of run, env and plan. */
const char *options_help(void);

#endif
