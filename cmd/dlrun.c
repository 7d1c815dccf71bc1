/* dlrun.c - main: dispatch to a subcommand; the default is "run". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "util/didyoumean.h"

static const char usage[] =
    "usage: dlrun [run] [OPTIONS] [--] PROG [ARGS...]\n"
    "       dlrun env [OPTIONS] [--json] [--rank R] [--] [PROG [ARGS...]]\n"
    "       dlrun plan [OPTIONS] [--json]\n"
    "       dlrun check [--nodes [OPTIONS] [-- PROG]]   this build; every node\n"
    "       dlrun status [--json]                    your running jobs' ranks\n"
    "       dlrun hosts expand|fold|count LIST\n"
    "       dlrun broker [--bind ADDR] [--port P]     a standalone rendezvous broker\n"
    "       dlrun kv put|get|add|barrier|del ...      talk to it from scripts\n"
    "       dlrun script|submit [--profile NAME] -N NODES PROG...  a job script\n"
    "\n"
    "Launch a distributed deep-learning job: every rank gets RANK, WORLD_SIZE,\n"
    "LOCAL_RANK, MASTER_ADDR/PORT and the same facts for Horovod, TensorFlow,\n"
    "JAX and NCCL.  Under srun or mpirun (one task per rank) dlrun becomes the\n"
    "rank in place.  `dlrun run --help` lists the options; man dlrun says all.\n"
    "\n"
    "  -h, --help     this text          -V, --version  the version\n";

static const struct {
    const char *name;
    int (*fn)(int argc, char **argv);
} commands[] = {
    { "run", cmd_run },
    { "env", cmd_env },
    { "plan", cmd_plan },
    { "check", cmd_check },
    { "status", cmd_status },
    { "hosts", cmd_hosts },
    { "agent", cmd_agent },
    { "relay", cmd_relay },
    { "broker", cmd_broker },
    { "kv", cmd_kv },
    { "script", cmd_script },
    { "submit", cmd_submit },
};

/* The subcommands of the usage above, for "did you mean" (agent and relay
 * are dlrun's own, never typed). */
static const char *const typed[] = { "run", "env", "plan", "check", "status",
                                     "hosts", "broker", "kv", "script",
                                     "submit" };

int main(int argc, char **argv)
{
    const char *first = argc > 1 ? argv[1] : NULL, *near;

    cmd_say_to_stderr();
    if (!first)
        return fputs(usage, stderr), EXIT_USAGE;
    if (strcmp(first, "-h") == 0 || strcmp(first, "--help") == 0 ||
        strcmp(first, "help") == 0)
        return fputs(usage, stdout), EXIT_OK;
    if (strcmp(first, "-V") == 0 || strcmp(first, "--version") == 0)
        return printf("dlrun %s\n", DLRUN_VERSION), EXIT_OK;
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(first, commands[i].name) == 0)
            return commands[i].fn(argc - 1, argv + 1);
    /* No subcommand named: run, with argv[0] standing for "run"; unless
     * the word is no program and a subcommand mistyped (dlrun plna). */
    near = didyoumean_subcommand(first, typed, sizeof typed / sizeof typed[0],
                                 getenv("PATH"));
    if (near)
        return cmd_fail(EXIT_USAGE, "'%s' is not a program; did you mean "
                        "'dlrun %s'?", first, near);
    argv[0] = "run";
    return cmd_run(argc, argv);
}
