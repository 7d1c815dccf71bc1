/* agent.c - `dlrun agent`: internal, started by a head on every node
 * (lib/job/agent.h); users run `dlrun`. */
#include "cmd.h"
#include "job/agent.h"
#include "options.h"

int cmd_agent(int argc, char **argv)
{
    struct job j = { .agent = 1 };
    int rc = options_parse(argc, argv, &j.opt, "usage: dlrun agent (internal: "
                           "started by dlrun on every node)\n");

    if (rc != 0)
        return rc == 1 ? EXIT_OK : rc;
    return agent_run(&j, argc, argv);
}
