/* dialect_torch.c - after the options: torchrun's program convention
 * (train.py runs under Python) and mpirun's MPMD form. */
#include "job/dialect.h"
#include "job/runopts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/findprog.h"
#include "util/say.h"

/* torchrun runs its program with Python: a .py file, or a file that is
 * there but not executable.  An executable (a.out, a shell script, one in
 * PATH) runs as it is, which torchrun would have fed to Python. */
static int wants_python(const char *p)
{
    size_t n = strlen(p);
    struct stat st;

    if (n > 3 && strcmp(p + n - 3, ".py") == 0)
        return 1;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) != 0;
}

/* torchrun --standalone's run id: a random UUID (version 4). */
static int standalone_id(struct options *o)
{
    unsigned char b[16];
    char *s = NULL;

    if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b)
        return 0;   /* "none", as without --standalone */
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    if (asprintf(&s, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
                 "%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3], b[4],
                 b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                 b[14], b[15]) < 0 || !options_keep(o, s))
        return say_fail(EXIT_FAIL, "out of memory");
    o->torch.run_id = s;
    return 0;
}

int dialect_finish(struct options *o, int argc, char **argv)
{
    int n = argc - o->prog, k = 0, py;
    const char *python = getenv("PYTHON_EXEC");     /* torchrun's override */

    if (o->torch.standalone && !o->torch.run_id && standalone_id(o) != 0)
        return EXIT_FAIL;
    /* --redirects 3 with --log-dir: the ranks' output goes to the files
     * only, as torchrun's (a filter that shows no rank on the console) */
    if (o->torch.redirects == 3 && o->output_dir && !o->ranks_filter &&
        !(o->ranks_filter = calloc(1, sizeof *o->ranks_filter)))
        return say_fail(EXIT_FAIL, "out of memory");
    if (n <= 0)
        return 0;
    py = dialect_mpmd(o, argv + o->prog, n);
    if (py != 0)
        return py == 1 ? 0 : py;
    if (o->torch.module && o->torch.no_python)
        return say_fail(EXIT_USAGE, "torchrun's -m and --no-python exclude "
                        "each other: -m runs python3 -m MODULE");
    py = (o->torch.used || o->dialect == D_TORCHRUN) && !o->torch.no_python &&
         (o->torch.module || wants_python(argv[o->prog]));
    o->progv = calloc((size_t)n + 4, sizeof *o->progv);
    if (!o->progv)
        return say_fail(EXIT_FAIL, "out of memory");
    if (py) {
        o->progv[k++] = (char *)(python && *python ? python : "python3");
        o->progv[k++] = "-u";   /* torchrun's: output as it is written */
        if (o->torch.module)
            o->progv[k++] = "-m";
    }
    memcpy(o->progv + k, argv + o->prog, (size_t)n * sizeof *o->progv);
    return 0;
}

static int ends_py(const char *p)
{
    size_t n = strlen(p);

    return n > 3 && strcmp(p + n - 3, ".py") == 0;
}

int dialect_check_program(char **prog)
{
    const char *p = prog[0], *path = getenv("PATH");
    char found[4096];
    struct stat st;
    int here = stat(p, &st) == 0 && S_ISREG(st.st_mode);
    int runs = here && access(p, X_OK) == 0;

    /* "–np" (en dash) copied from a web page is not -np */
    if ((unsigned char)p[0] == 0xe2 && (unsigned char)p[1] == 0x80 &&
        (unsigned char)p[2] >= 0x90 && (unsigned char)p[2] <= 0x95)
        return say_fail(EXIT_USAGE, "'%s' starts with a typographic dash "
                        "(copied from a web page?): type it as -%s", p, p + 3);
    if (!strchr(p, '/')) {
        if (!here || find_program(p, path, found, sizeof found) == 0)
            return 0;
        return say_fail(EXIT_NOTFOUND, "cannot run '%s': not in PATH, but a "
                        "file here: run it as %s%s", p,
                        runs ? "./" : ends_py(p) ? "python3 " : "./", p);
    }
    if (!here || runs)
        return 0;
    return say_fail(EXIT_NOEXEC, "cannot run '%s': not executable; %s%s", p,
                    ends_py(p) ? "run it as python3 " : "chmod +x ", p);
}
