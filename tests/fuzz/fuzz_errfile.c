/* fuzz_errfile.c - libFuzzer target for errfile_parse (the error file a
 * rank writes: any bytes) and errfile_from_wire (its message as an agent
 * puts it into the broker).  It never crashes, and a message it finds is
 * one line that fits its buffer. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "run/errfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct errfile e;
    int rc = errfile_parse((const char *)data, size, &e);
    size_t n = strnlen(e.message, sizeof e.message);

    if (n >= sizeof e.message || strchr(e.message, '\n') ||
        (rc == 0) != (n > 0))
        abort();
    /* the same message as an agent sends it through the broker */
    rc = errfile_from_wire(data, size, &e);
    n = strnlen(e.message, sizeof e.message);
    if (n >= sizeof e.message || strchr(e.message, '\n') ||
        (rc == 0) != (n > 0 && n == size))
        abort();
    return 0;
}
