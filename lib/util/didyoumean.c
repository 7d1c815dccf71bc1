/* didyoumean.c - a mistyped subcommand (didyoumean.h). */
#include "util/didyoumean.h"

#include <limits.h>
#include <string.h>
#include <sys/stat.h>

#include "util/editdist.h"
#include "util/findprog.h"

/* A word the run would find: a program on path, or a file here. */
static int runnable(const char *word, const char *path)
{
    char buf[PATH_MAX];
    struct stat st;

    return find_program(word, path, buf, sizeof buf) == 0 ||
           stat(word, &st) == 0;
}

const char *didyoumean_subcommand(const char *word, const char *const *names,
                                  size_t n, const char *path)
{
    size_t len = strlen(word), most = len > 3 ? 2 : 1, best_d = most + 1;
    const char *best = NULL;

    if (len == 0 || word[0] == '-' || strchr(word, '/'))
        return NULL;
    for (size_t i = 0; i < n; i++) {
        size_t d = editdist(word, names[i]);

        if (d < best_d && d < len) {
            best = names[i];
            best_d = d;
        }
    }
    return best && !runnable(word, path) ? best : NULL;
}
