/* t_privdirs.c - the private folders list: what is listed after a fork is
 * seen by the forked copy (the guard), which removes the folders still
 * listed; a forgotten one stays. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/privdirs.h"
#include "tap.h"

static int exists(const char *path)
{
    struct stat st;

    return lstat(path, &st) == 0;
}

int main(void)
{
    char top[] = "/tmp/t_privdirs.XXXXXX", a[64], b[64], f[80], cmd[96];
    int sync[2], status = -1;
    pid_t pid;
    char c;

    if (!mkdtemp(top) || pipe(sync) < 0)
        return 1;
    ok(privdirs_share() == 0, "the shared list is made");
    pid = fork();
    if (pid == 0) {             /* the guard: waits, then removes */
        close(sync[1]);
        while (read(sync[0], &c, 1) > 0)
            ;
        privdirs_remove_all();
        _exit(0);
    }
    close(sync[0]);
    snprintf(a, sizeof a, "%s/dlrun-broker.XXXXXX", top);
    snprintf(b, sizeof b, "%s/dlrun-relay.XXXXXX", top);
    ok(privdirs_mkdtemp(a) == a && exists(a), "a folder made after the fork");
    ok(privdirs_mkdtemp(b) == b && exists(b), "  and another");
    snprintf(f, sizeof f, "%s/broker.sock", a);
    fclose(fopen(f, "w"));
    privdirs_forget(b);
    close(sync[1]);             /* dlrun is gone */
    waitpid(pid, &status, 0);
    ok(status == 0 && !exists(a) && !exists(f), "the guard removed the listed "
       "one, with what was in it");
    ok(exists(b), "  not the forgotten one");
    snprintf(b, sizeof b, "%s/nowhere/x.XXXXXX", top);
    ok(privdirs_mkdtemp(b) == NULL && errno == ENOENT, "mkdtemp's failure: NULL, "
       "its errno");
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", top);
    if (system(cmd) != 0)
        printf("# could not remove %s\n", top);
    return tap_done();
}
