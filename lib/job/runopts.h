/* runopts.h - the options of run, env and plan (and of the agents the
 * head starts): dlrun's own words and the spellings of torchrun, mpirun,
 * mpiexec (Hydra) and horovodrun, read with lib/util/optparse from the
 * table in job/dialect_table.c. */
#ifndef DLRUN_RUNOPTS_H
#define DLRUN_RUNOPTS_H

#include "job/jobopts.h"

/* Parse argv (argv[0] is the subcommand's name, which messages name):
 * the dialect of the name dlrun was started by (program_invocation_name)
 * decides where two tools' words conflict.  Returns 0, 1 when -h/--help
 * was given (the caller prints its usage; exit 0), or the exit code after
 * saying why (one line, lib/util/say.h).  o borrows from argv; free it
 * with options_free (on a non-zero return nothing of o is kept). */
int runopts_parse(int argc, char **argv, struct options *o);

/* Before running here: a warning for each -x NAME not in this
 * environment, as mpirun says it (a typo more often than a variable only
 * the other nodes have).  Not at parse time: dlrun script and plan parse
 * lines that run in another environment. */
void runopts_warn_exports(const struct options *o);

/* Before starting prog (borrowed) on this host: a program that cannot run
 * for a reason a hint fixes (train.py here but not in PATH: python3
 * train.py; not executable; "–np" with a typographic dash) gets that hint,
 * one line.  0, or the exit code (127, 126, 2) after saying it
 * (job/dialect_torch.c). */
int dialect_check_program(char **prog);

#endif
