/* t_findprog.c - find_program: execvp's search, done once in dlrun. */
#include "util/findprog.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"

/* A folder with an executable "prog", a plain file "data" and a folder
 * "sub", all under a fresh temporary folder (dir, PATH_MAX bytes). */
static int make_tree(char *dir)
{
    char p[4096];
    FILE *f;

    snprintf(dir, 64, "/tmp/t_findprog.XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(p, sizeof p, "%s/prog", dir);
    if (!(f = fopen(p, "w")))
        return -1;
    fclose(f);
    chmod(p, 0755);
    snprintf(p, sizeof p, "%s/data", dir);
    if (!(f = fopen(p, "w")))
        return -1;
    fclose(f);
    snprintf(p, sizeof p, "%s/sub", dir);
    return mkdir(p, 0755);
}

static void remove_tree(const char *dir)
{
    char p[4096];
    const char *names[] = { "prog", "data", NULL };

    for (int i = 0; names[i]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    snprintf(p, sizeof p, "%s/sub", dir);
    rmdir(p);
    rmdir(dir);
}

int main(void)
{
    char dir[64], path[4096], want[4096], buf[4096];

    if (!ok(make_tree(dir) == 0, "a temporary tree"))
        return tap_done();
    snprintf(path, sizeof path, "/nonexistent:%s", dir);
    snprintf(want, sizeof want, "%s/prog", dir);
    is_int(find_program("prog", path, buf, sizeof buf), 0, "found in the second folder");
    is_str(buf, want, "as DIR/prog");
    is_int(find_program("data", path, buf, sizeof buf), -1, "a file we may not execute is skipped");
    is_int(find_program("sub", path, buf, sizeof buf), -1, "a folder is no program");
    is_int(find_program("./x/y", path, buf, sizeof buf), 0, "a name with '/' is itself");
    is_str(buf, "./x/y", "unchanged");
    is_int(find_program("sh", NULL, buf, sizeof buf), 0, "no PATH: /bin:/usr/bin");
    is_int(find_program("prog", path, buf, 8), -1, "too long for the buffer: none");
    if (chdir(dir) == 0) {
        is_int(find_program("prog", "/nonexistent::", buf, sizeof buf), 0,
               "an empty entry is the current folder");
        is_str(buf, "prog", "named as found there");
    }
    remove_tree(dir);
    return tap_done();
}
