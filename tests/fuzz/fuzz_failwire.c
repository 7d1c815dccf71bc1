/* fuzz_failwire.c - libFuzzer target for fw_failure_parse (a failure
 * report read from the head's broker, which any rank can write: any
 * bytes).  It never crashes; a report it takes names a rank of the job
 * and a positive pid, and formats back to what it parsed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "failwire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fw_failure f, g;
    struct err err = { "" };
    char buf[512];

    if (fw_failure_parse(data, size, 16, &f, &err) < 0) {
        if (!err.msg[0])
            abort();
        return 0;
    }
    if (f.rank < 0 || f.rank >= 16 || f.pid <= 0)
        abort();
    if (fw_failure_format(&f, "h", buf, sizeof buf) < 0 ||
        fw_failure_parse(buf, strlen(buf), 16, &g, &err) < 0 ||
        memcmp(&f, &g, sizeof f) != 0)
        abort();
    return 0;
}
