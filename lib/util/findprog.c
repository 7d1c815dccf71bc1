/* findprog.c - where execvp would find a program (findprog.h). */
#include "util/findprog.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int find_program(const char *prog, const char *path, char *buf, size_t len)
{
    struct stat st;

    if (strchr(prog, '/'))
        return snprintf(buf, len, "%s", prog) < (int)len ? 0 : -1;
    for (const char *p = path ? path : "/bin:/usr/bin"; *p;) {
        const char *end = strchrnul(p, ':');
        int w = (int)(end - p);
        /* an empty entry is the current folder, as for execvp */
        if (snprintf(buf, len, "%.*s%s%s", w, p, w ? "/" : "", prog) <
                (int)len && stat(buf, &st) == 0 && S_ISREG(st.st_mode) &&
            access(buf, X_OK) == 0)
            return 0;
        p = *end ? end + 1 : end;
    }
    return -1;
}
