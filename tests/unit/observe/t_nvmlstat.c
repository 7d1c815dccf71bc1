/* t_nvmlstat.c - lib/observe/nvmlstat.c without a GPU: CUDA_VISIBLE_DEVICES read
 * as CUDA reads it, a process's value from /proc, and no NVML library
 * meaning no GPU use and no error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "observe/nvmlstat.h"
#include "tap.h"

static void visible(void)
{
    struct nvs_dev d[4];

    is_int(nvs_parse_visible("", d, 4), 0, "empty: no GPU");
    ok(nvs_parse_visible("1", d, 4) == 1 && d[0].index == 1, "one index");
    ok(nvs_parse_visible("2,0", d, 4) == 2 && d[0].index == 2 &&
       d[1].index == 0, "two indices, in their order");
    ok(nvs_parse_visible("GPU-ab12,3", d, 4) == 2 && d[0].index == -1 &&
       strcmp(d[0].uuid, "GPU-ab12") == 0 && d[1].index == 3,
       "a UUID, then an index");
    is_int(nvs_parse_visible("0,x,1", d, 4), 1, "cut at a bad entry");
    is_int(nvs_parse_visible("-1,0", d, 4), 0, "-1 first: none (CUDA's way)");
    is_int(nvs_parse_visible("MIG-1/2/3", d, 4), 0, "MIG: not a GPU's use");
    is_int(nvs_parse_visible("0,1,2,3,4,5", d, 4), 4, "no more than room");
    is_int(nvs_parse_visible("0x1", d, 4), 0, "not decimal: refused");
}

static void proc(void)
{
    char buf[64] = "";

    setenv("CUDA_VISIBLE_DEVICES", "3,1", 1);
    /* /proc/self/environ is the environment at exec: ours is not there */
    ok(nvs_proc_visible(getpid(), buf, sizeof buf) >= 0, "own environ read");
    is_int(nvs_proc_visible(-5, buf, sizeof buf), -1, "no such process: -1");
}

static void nolib(void)
{
    setenv("DLRUN_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
    ok(nvs_open() == NULL, "no NVML library: NULL, no GPU column");
    nvs_close(NULL);
}

int main(void)
{
    visible();
    proc();
    nolib();
    return tap_done();
}
