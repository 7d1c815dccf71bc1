/* topo.c - see topo.h. */
#include "topo.h"

#include <hwloc.h>
#include <stdio.h>

static int count_nvidia(hwloc_topology_t t)
{
    hwloc_obj_t o = NULL;
    int n = 0;

    while ((o = hwloc_get_next_pcidev(t, o)))
        n += o->attr->pcidev.vendor_id == 0x10de &&
             (o->attr->pcidev.class_id >> 8) == 0x03;
    return n;
}

int topo_summarize(struct topo_summary *out, struct err *err)
{
    hwloc_topology_t t;
    unsigned v = hwloc_get_api_version();

    if (hwloc_topology_init(&t) < 0)
        return err_set(err, "hwloc_topology_init failed");
    hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (hwloc_topology_load(t) < 0) {
        hwloc_topology_destroy(t);
        return err_set(err, "hwloc cannot read this machine's topology");
    }
    out->packages = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE);
    out->numas = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
    out->cores = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
    out->pus = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
    out->gpus = count_nvidia(t);
    snprintf(out->hwloc_version, sizeof out->hwloc_version, "%u.%u.%u",
             v >> 16, (v >> 8) & 0xff, v & 0xff);
    hwloc_topology_destroy(t);
    return 0;
}
