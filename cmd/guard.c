/* guard.c - `dlrun guard`: internal, started by dlrun itself (lib/guard.h)
 * to end the job's processes when dlrun ends, even by SIGKILL.  Its stdin
 * is its link to dlrun. */
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "guard.h"

int cmd_guard(int argc, char **argv)
{
    const char *dir = NULL, *mark = NULL;

    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--cgroup") == 0)
            dir = argv[i + 1];
        else if (strcmp(argv[i], "--mark") == 0)
            mark = argv[i + 1];
        else
            return cmd_fail(EXIT_USAGE, "guard: unknown argument '%s' "
                            "(internal: started by dlrun)", argv[i]);
    }
    return guard_watch(STDIN_FILENO, dir, mark);
}
