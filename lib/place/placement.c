/* placement.c - which sockets and NUMA nodes a rank's CPUs are on (see
 * placement.h). */
#include "place/placement.h"

#include <stdio.h>

void placement_where(const struct topo *t, const cpu_set_t *mask,
                     enum placement_kind kind, char *buf, size_t len)
{
    hwloc_topology_t h = topo_hwloc(t);
    int depth = kind == PLACE_SOCKET ?
                hwloc_get_type_depth(h, HWLOC_OBJ_PACKAGE) :
                HWLOC_TYPE_DEPTH_NUMANODE;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    unsigned n = depth < 0 && kind == PLACE_SOCKET ? 0 :
                 hwloc_get_nbobjs_by_depth(h, depth);
    size_t used = 0;

    snprintf(buf, len, "-");
    if (!set)
        return;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, mask))
            hwloc_bitmap_set(set, (unsigned)c);
    for (unsigned i = 0; i < n && used + 1 < len; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_depth(h, depth, i);
        int k;

        if (!o || !o->cpuset || !hwloc_bitmap_intersects(o->cpuset, set))
            continue;
        k = snprintf(buf + used, len - used, "%s%u", used ? "," : "", i);
        if (k < 0 || (size_t)k >= len - used)
            break;
        used += (size_t)k;
    }
    hwloc_bitmap_free(set);
}
