/* floor.c - the floor for launch latency: start N copies of PROG with a
 * plain fork/execvp each, then wait for all of them.  Nothing else: no
 * environment per rank, no process groups, no signal set-up, no exec-error
 * pipe.  Any launcher on one host pays at least this, so dlrun/floor says
 * how much dlrun's own work costs on top of the kernel's.
 *
 *   floor N PROG [ARGS...]
 *
 * Exits 0 when every copy exited 0, else 1 (127 when exec failed). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int n, status, rc = 0;

    if (argc < 3 || (n = atoi(argv[1])) < 1) {
        fprintf(stderr, "usage: floor N PROG [ARGS...]\n");
        return 2;
    }
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            execvp(argv[2], argv + 2);
            _exit(127);
        }
        if (pid < 0) {
            perror("fork");
            return 1;
        }
    }
    /* all started before the first wait: the copies run side by side */
    while (wait(&status) > 0)
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            rc = WIFEXITED(status) && WEXITSTATUS(status) == 127 ? 127 : 1;
    return rc;
}
