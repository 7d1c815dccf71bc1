/* options.h - the options shared by run, env and plan. */
#ifndef DLRUN_OPTIONS_H
#define DLRUN_OPTIONS_H

#include "job/jobopts.h"

/* Parse argv (argv[0] is the subcommand name): dlrun's options and the
 * spellings of torchrun, mpirun, mpiexec (Hydra) and horovodrun (the
 * dialect of the name dlrun was started by decides where they conflict).
 * Returns 0, 1 when help was printed (exit 0), or the exit code after
 * printing the error (one line).  usage is the subcommand's help text.
 * o borrows from argv; free with options_free. */
int options_parse(int argc, char **argv, struct options *o, const char *usage);

/* Before starting prog on this host: a program that cannot run for a
 * reason a hint fixes (train.py here but not in PATH: python3 train.py;
 * not executable; "–np" with a typographic dash) gets that hint, one line.
 * 0, or the exit code (127, 126, 2) after printing (cmd/dialect_torch.c). */
int dialect_check_program(char **prog);

/* The options' help, shared by the usage texts of run, env and plan. */
extern const char options_help[];

#endif
