/* topocache.h - this machine's topology kept as hwloc XML between runs.
 *
 * Reading the topology from sysfs costs about a millisecond here (tens on
 * a node with hundreds of CPUs: hwloc opens a dozen files per CPU); the
 * same topology read back from XML costs 40 us.  What hwloc finds depends
 * only on the machine since boot, the CPUs this process may use and the
 * memory nodes it may use, so the saved file is named after exactly
 * those (boot id, sched_getaffinity, get_mempolicy's allowed nodes), the
 * hwloc and dlrun versions and whether PCI devices were read.  Anything
 * else that could change what hwloc sees (an HWLOC_* variable) turns the
 * cache off.
 *
 * The files live in a folder only this user can write: $XDG_RUNTIME_DIR/
 * dlrun, else /tmp/dlrun-UID (made 0700; a folder that is not ours, not
 * 0700 or a symbolic link is not used).  DLRUN_TOPOLOGY_CACHE=0 turns the
 * cache off.  A file that does not load is removed and the topology read
 * again; files of earlier boots are removed when a new one is written.
 */
#ifndef DLRUN_TOPOCACHE_H
#define DLRUN_TOPOCACHE_H

#include <hwloc.h>
#include <stddef.h>

/* The cache file for this process now into path (len bytes), with want_pci
 * saying whether the PCI tree is part of the topology.  0, or -1 when the
 * cache is off or there is no safe folder. */
int topocache_path(int want_pci, char *path, size_t len);

/* Read path into a topology that h (initialized, filters set, not loaded)
 * loads; 0 when h is loaded from it, -1 when there is no usable file
 * (a broken one is removed).  Nothing is printed. */
int topocache_load(const char *path, hwloc_topology_t h);

/* Save the loaded topology h as path, atomically (a temporary file
 * renamed); best effort, failures are ignored. */
void topocache_save(const char *path, hwloc_topology_t h);

#endif
