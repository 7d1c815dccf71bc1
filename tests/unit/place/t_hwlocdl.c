/* t_hwlocdl.c - libhwloc opened on first use: the open succeeds once
 * and is remembered, the file it loaded is recorded as the caches need it
 * (a path that exists, its identity as stat says), and a recorded file
 * that changed, moved or is malformed is noticed; the trampolines work
 * (an hwloc call made through them). */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <hwloc.h>

#include "place/hwlocdl.h"
#include "tap.h"

/* f altered field by field: each is noticed. */
static void changed(const struct hwlocdl_file *f)
{
    struct hwlocdl_file g;

    g = *f;
    g.mtime_nsec ^= 1;
    is_int(hwlocdl_file_unchanged(&g), 0, "another mtime: changed");
    g = *f;
    g.size++;
    is_int(hwlocdl_file_unchanged(&g), 0, "another size: changed");
    g = *f;
    snprintf(g.path, sizeof g.path, "/nonexistent/libhwloc.so.15");
    is_int(hwlocdl_file_unchanged(&g), 0, "gone: changed");
    g = *f;
    memset(g.path, 'x', sizeof g.path);
    is_int(hwlocdl_file_unchanged(&g), 0, "a path without NUL: not ours");
    g = *f;
    memmove(g.path, g.path + 1, sizeof g.path - 1);
    is_int(hwlocdl_file_unchanged(&g), 0, "a relative path: not ours");
}

static void trampolines(void)
{
    hwloc_bitmap_t b;

    ok(hwloc_get_api_version() >> 16 == HWLOC_API_VERSION >> 16,
       "an hwloc call through the trampolines: the headers' major version");
    b = hwloc_bitmap_alloc();
    ok(b != NULL, "hwloc_bitmap_alloc");
    if (b) {
        char list[32] = "";

        hwloc_bitmap_set(b, 3);
        hwloc_bitmap_set(b, 70);
        hwloc_bitmap_list_snprintf(list, sizeof list, b);
        ok(hwloc_bitmap_first(b) == 3 && hwloc_bitmap_last(b) == 70 &&
           hwloc_bitmap_weight(b) == 2 && !strcmp(list, "3,70"),
           "a bitmap set and read");
        hwloc_bitmap_free(b);
    }
}

int main(void)
{
    struct err err = { "" };
    struct hwlocdl_file f;
    struct stat st;

    is_int(hwlocdl_open(&err), 0, "hwlocdl_open");
    if (err.msg[0])
        printf("# %s\n", err.msg);
    is_int(hwlocdl_open(&err), 0, "a second open: as the first");
    memset(&f, 0x55, sizeof f);
    is_int(hwlocdl_file(&f), 0, "hwlocdl_file");
    ok(memchr(f.path, '\0', sizeof f.path) && f.path[0] == '/' &&
       strstr(f.path, "libhwloc"), "the path of the libhwloc it loaded");
    ok(stat(f.path, &st) == 0 && f.ino == (uint64_t)st.st_ino &&
       f.size == (uint64_t)st.st_size &&
       f.mtime_sec == (uint64_t)st.st_mtim.tv_sec, "its stat recorded");
    is_int(hwlocdl_file_unchanged(&f), 1, "unchanged: 1");

    changed(&f);
    trampolines();
    return tap_done();
}
