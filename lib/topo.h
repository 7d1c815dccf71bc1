/* topo.h - the hardware topology (hwloc) of this machine or of a saved
 * one. */
#ifndef DLRUN_TOPO_H
#define DLRUN_TOPO_H

#include <stddef.h>

#include "err.h"

struct topo_summary {
    int packages, numas, cores, pus, gpus;
    char hwloc_version[32];
};

/* Count what this machine has (NVIDIA GPUs: PCI devices of vendor 0x10de,
 * class 3D/VGA).  0 / -1 with err. */
int topo_summarize(struct topo_summary *out, struct err *err);

#endif
