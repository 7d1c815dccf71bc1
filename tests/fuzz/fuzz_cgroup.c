/* fuzz_cgroup.c - libFuzzer target for the texts the job's cgroup is
 * found from (lib/run/cgroup.h): any bytes as /proc/self/mountinfo and as
 * /proc/self/cgroup, the one split from the other at the first NUL, and
 * as a folder's name and cgroup.events for cgroup_stale.  It never
 * crashes; what it finds fits its buffer, and a cgroup's folder is below
 * the mount point found. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "run/cgroup.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 2), *second;
    char mnt[64], root[64], path[64], dir[96], m[1024], r[1024];
    struct err err = { "" };

    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = text[size + 1] = '\0';
    second = text + strlen(text) + 1;
    if (cgroup_parse_mount(text, mnt, sizeof mnt, root, sizeof root) == 0 &&
        (strnlen(mnt, sizeof mnt) >= sizeof mnt ||
         strnlen(root, sizeof root) >= sizeof root))
        abort();
    if (cgroup_parse_own(second, path, sizeof path) == 0 &&
        (path[0] != '/' || strnlen(path, sizeof path) >= sizeof path))
        abort();
    if (cgroup_dir_of(text, second, dir, sizeof dir, &err) == 0 &&
        (cgroup_parse_mount(text, m, sizeof m, r, sizeof r) < 0 ||
         strncmp(dir, m, strlen(m)) != 0))
        abort();
    if (strnlen(err.msg, sizeof err.msg) >= sizeof err.msg)
        abort();
    (void)cgroup_stale(text, 0, second, 0, (time_t)CGROUP_STALE_S + 1);
    free(text);
    return 0;
}
