/* cachedir.h - the cache tests' setting: a plain machine (no HWLOC_*
 * variable, the cache not turned off) and an empty cache folder of their
 * own, so that they never touch the user's.  Header only. */
#ifndef DLRUN_CACHEDIR_H
#define DLRUN_CACHEDIR_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

/* Make /tmp/NAME.XXXXXX into dir (len bytes) and point XDG_RUNTIME_DIR at
 * it.  0, or -1 when the folder cannot be made. */
static inline int cachedir_setup(const char *name, char *dir, size_t len)
{
    for (char **e = environ; *e; e++)
        if (strncmp(*e, "HWLOC_", 6) == 0) {
            char var[128];
            snprintf(var, sizeof var, "%.*s", (int)strcspn(*e, "="), *e);
            unsetenv(var);
            e = environ - 1;    /* unsetenv moved the entries: again */
        }
    unsetenv("DLRUN_TOPOLOGY_CACHE");
    snprintf(dir, len, "/tmp/%s.XXXXXX", name);
    if (!mkdtemp(dir))
        return -1;
    setenv("XDG_RUNTIME_DIR", dir, 1);
    return 0;
}

#endif
