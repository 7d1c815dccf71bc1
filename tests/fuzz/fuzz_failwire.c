/* fuzz_failwire.c - libFuzzer target for fw_failure_parse and
 * fw_rank_parse (a failure report and a --summary rank line read from the
 * head's broker, which any rank can write: any bytes).  It never crashes;
 * a report it takes names a rank of the job and a positive pid, and
 * formats back to what it parsed; a rank line it takes names a rank of
 * the job and finite times. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "run/failwire.h"
#include "run/supervise.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fw_failure f, g;
    struct err err = { "" };
    struct sv_rank r;
    char buf[512], *line = malloc(size + 1);

    if (!line)
        return 0;
    memcpy(line, data, size);
    line[size] = '\0';
    if (fw_rank_parse(line, 16, &r) == 0 &&
        (r.rank < 0 || r.rank >= 16 || !isfinite(r.start) ||
         !isfinite(r.end)))
        abort();
    free(line);

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
