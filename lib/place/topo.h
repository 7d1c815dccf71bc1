/* topo.h - the hardware topology (hwloc) of this machine or of a saved
 * one, with its NVIDIA GPUs in PCI bus order.
 *
 * A topology is only read here; lib/place/bind.c plans on it.  Nothing in this
 * module binds or changes the process.
 */
#ifndef DLRUN_TOPO_H
#define DLRUN_TOPO_H

#include <hwloc.h>
#include <stddef.h>

#include "util/err.h"

struct topo;    /* an hwloc topology and its GPU list */

struct topo_summary {
    int packages, numas, cores, pus, gpus;
    char hwloc_version[32];
};

/* Load a topology.  spec: NULL or "" = this machine, restricted to the
 * CPUs this process may run on (sched_getaffinity: a cgroup or srun's
 * binding narrows it); "synthetic:DESC" = hwloc's synthetic description
 * (quotes around DESC are dropped), e.g. synthetic:"package:2 core:20 pu:2",
 * else the words of a profile's node: line (place/nodeshape.h), e.g.
 * synthetic:"package:2 core:20 gpu:4";
 * anything else = the path of an hwloc XML file (lstopo --of xml).
 * Caller frees with topo_free.  NULL with err. */
struct topo *topo_load(const char *spec, struct err *err);

void topo_free(struct topo *t);     /* t may be NULL */

/* Whether topo_load(NULL) reads this machine's PCI tree (its GPUs): only
 * with an NVIDIA driver present.  Two access(2) calls, no hwloc: the
 * binding cache's key needs it without loading a topology. */
int topo_want_pci(void);

/* The hwloc topology, borrowed: valid until topo_free(t). */
hwloc_topology_t topo_hwloc(const struct topo *t);

/* NVIDIA GPUs: PCI devices of vendor 0x10de and class 0x03xx (VGA, 3D),
 * in PCI bus id order, which is CUDA's order under
 * CUDA_DEVICE_ORDER=PCI_BUS_ID and nvidia-smi's. */
int topo_gpu_count(const struct topo *t);

/* The i-th GPU's PCI device object (borrowed), NULL when i is out of
 * range. */
hwloc_obj_t topo_gpu(const struct topo *t, int i);

/* The i-th GPU's bus id, "0000:07:00.0", into buf (len bytes); "" when i
 * is out of range. */
void topo_gpu_busid(const struct topo *t, int i, char *buf, size_t len);

/* The CPU-side object the i-th GPU is attached to (its locality: a
 * package, a NUMA group or the machine), borrowed; NULL when i is out of
 * range. */
hwloc_obj_t topo_gpu_home(const struct topo *t, int i);

/* Count what t has.  Fills every field of out. */
void topo_describe(const struct topo *t, struct topo_summary *out);

/* topo_describe of this machine (topo_load(NULL)).  0 / -1 with err. */
int topo_summarize(struct topo_summary *out, struct err *err);

#endif
