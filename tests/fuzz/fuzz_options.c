/* fuzz_options.c - libFuzzer target for options_parse: the words of any
 * command line (torchrun's, mpirun's, Hydra's, horovodrun's, typos, MPMD
 * parts), NUL-separated.  It never crashes or leaks, returns 0, 1 (help)
 * or an exit code, and on 0 the program to run lies inside argv. */
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../cmd/dialect_mpmd.c"
#include "../../cmd/dialect_opts.c"
#include "../../cmd/dialect_table.c"
#include "../../cmd/dialect_torch.c"
#include "../../cmd/options.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* cmd/dlrun.c's, silent here */
int cmd_fail(int code, const char *fmt, ...)
{
    (void)fmt;
    return code;
}

static int stdout_closed;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 1), *argv[66];
    struct options o;
    int argc = 1, rc;

    if (!buf)
        return 0;
    if (!stdout_closed)     /* --help's text */
        stdout_closed = freopen("/dev/null", "w", stdout) != NULL;
    memcpy(buf, data, size);
    buf[size] = '\0';
    argv[0] = "run";
    for (char *p = buf; argc < 65 && p <= buf + size; p += strlen(p) + 1)
        argv[argc++] = p;
    argv[argc] = NULL;
    rc = options_parse(argc, argv, &o, "usage\n");
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
