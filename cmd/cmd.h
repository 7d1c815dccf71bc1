/* cmd.h - the subcommands of dlrun, dispatched from the table in dlrun.c.
 *
 * Each takes the arguments after its own name (argv[0] is the subcommand
 * name) and returns the process exit status.  Only cmd/ prints to the user.
 */
#ifndef DLRUN_CMD_H
#define DLRUN_CMD_H

/* Exit codes shared by every subcommand (documented in dlrun(1)). */
enum {
    EXIT_OK = 0,
    EXIT_FAIL = 1,      /* a run-time failure that is not the user's input */
    EXIT_USAGE = 2,     /* bad option, bad input, inconsistent allocation */
    EXIT_STALL = 124,   /* --stall-timeout: every rank idle that long */
    EXIT_NOEXEC = 126,  /* program found but not executable */
    EXIT_NOTFOUND = 127 /* program not found */
};

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

/* Print "dlrun: MSG" (one line) to stderr and return code, for
 * `return die_usage(...)` style exits from subcommands. */
int cmd_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Put text (borrowed; NULL: nothing) after "dlrun: " in every cmd_fail
 * line until called again: where the words come from when a parser runs
 * on words that are not the command line (dlrun script checking the
 * dlrun line of the script it writes with dlrun run's parser). */
void cmd_fail_context(const char *text);

#endif
