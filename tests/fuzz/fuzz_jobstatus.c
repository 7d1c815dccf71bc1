/* fuzz_jobstatus.c - libFuzzer target for the rank lines `dlrun status`
 * reads from the broker (dlrun.st.NODE, lib/observe/jobstatus.h), which any rank
 * holding the token can write.
 *
 * It never crashes, keeps at most the room it has, every rank it keeps is
 * in range with a one-word host, and what it accepts prints back to lines
 * that read the same. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "observe/jobstatus.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void must(int cond)
{
    if (!cond)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct js_rank r[8], back[8];
    struct err err = { "" };
    int n = -1, n2 = -1;
    int rc = js_parse_ranks((const char *)data, size, r, 8, &n, &err);
    char *text = NULL;
    size_t len = 0;
    FILE *m;

    must(rc == 0 || (rc == -1 && err.msg[0]));
    must(n >= 0 && n <= 8);
    if (rc < 0)
        return 0;
    m = open_memstream(&text, &len);
    must(m != NULL);
    for (int i = 0; i < n; i++) {
        must(r[i].rank >= 0 && r[i].rank < JS_MAX_RANKS && r[i].pid >= 0);
        must(strnlen(r[i].host, JS_HOST) < JS_HOST && r[i].host[0] &&
             !strpbrk(r[i].host, " \n"));
        must(!r[i].has_gpu || (r[i].gpu_pct >= -1 && r[i].gpu_pct <= 100 &&
                               r[i].gpu_mem_kb >= 0));
        js_put_rank(m, &r[i]);
    }
    must(fclose(m) == 0);
    /* printed with one decimal: the second reading is the fixed point */
    if (js_parse_ranks(text, len, back, 8, &n2, &err) == 0) {
        must(n2 == n);
        for (int i = 0; i < n; i++)
            must(back[i].rank == r[i].rank && back[i].pid == r[i].pid &&
                 back[i].state == r[i].state &&
                 back[i].has_gpu == r[i].has_gpu &&
                 strcmp(back[i].host, r[i].host) == 0);
    }
    free(text);
    return 0;
}
