/* cmd.h - the subcommands of dlrun, dispatched from the table in dlrun.c.
 *
 * Each takes the arguments after its own name (argv[0] is the subcommand
 * name) and returns the process exit status.  Only cmd/ prints to the user.
 */
#ifndef DLRUN_CMD_H
#define DLRUN_CMD_H

#include "util/say.h"     /* EXIT_* */

int cmd_run(int argc, char **argv);
int cmd_env(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_hosts(int argc, char **argv);
int cmd_agent(int argc, char **argv);
int cmd_relay(int argc, char **argv);
int cmd_broker(int argc, char **argv);
int cmd_kv(int argc, char **argv);
int cmd_script(int argc, char **argv);
int cmd_submit(int argc, char **argv);
/* dlrun check --nodes [OPTIONS] [-- PROG]: argv[0] is "--nodes"
 * (cmd/check_nodes.c). */
int cmd_check_nodes(int argc, char **argv);

/* The preflight of j's plan for prog (may be empty; borrowed), its table
 * on stdout (lib/job/preflight_run.h's job_preflight; cmd/check_nodes.c):
 * `dlrun check --nodes` and `dlrun --preflight`.  0 when every node
 * passed, else the exit code after printing why. */
struct job;
int run_preflight(struct job *j, char **prog);

/* Say "dlrun: MSG" (one line, through lib/util/say.h's sink) and return
 * code, for `return cmd_fail(...)` style exits from subcommands. */
int cmd_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Put text (borrowed; NULL: nothing) after "dlrun: " in every cmd_fail
 * line until called again: where the words come from when a parser runs
 * on words that are not the command line (dlrun script checking the
 * dlrun line of the script it writes with dlrun run's parser). */
void cmd_fail_context(const char *text);

/* Install the sink that writes lib/'s lines as "dlrun: LINE" on stderr
 * (main, before anything else). */
void cmd_say_to_stderr(void);

#endif
