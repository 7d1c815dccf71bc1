/* fuzz_options.c - libFuzzer target for runopts_parse: the words of any
 * command line (torchrun's, mpirun's, Hydra's, horovodrun's, typos, MPMD
 * parts), NUL-separated.  It never crashes or leaks, returns 0, 1 (help)
 * or an exit code, and on 0 the program to run lies inside argv. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "job/runopts.h"
#include "util/say.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 1), *argv[66];
    struct options o;
    int argc = 1, rc;

    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    argv[0] = "run";
    for (char *p = buf; argc < 65 && p <= buf + size; p += strlen(p) + 1)
        argv[argc++] = p;
    argv[argc] = NULL;
    rc = runopts_parse(argc, argv, &o);     /* lines said go nowhere */
    if (rc != 0 && rc != 1 && rc != EXIT_USAGE && rc != EXIT_FAIL)
        abort();
    if (rc == 0 && (o.prog < 1 || o.prog > argc ||
                    (o.prog < argc) != (o.progv != NULL)))
        abort();
    if (rc == 0 && o.plan.ranks < 0)
        abort();
    options_free(&o);
    free(buf);
    return 0;
}
