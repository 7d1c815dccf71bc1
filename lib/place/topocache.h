/* topocache.h - this machine's topology kept as hwloc XML between runs.
 *
 * Reading the topology from sysfs costs about a millisecond here (tens on
 * a node with hundreds of CPUs: hwloc opens a dozen files per CPU); the
 * same topology read back from XML costs 40 us.  What hwloc finds depends
 * only on the machine since boot, the CPUs this process may use, the
 * memory nodes it may use and the hwloc library that reads it, so the
 * saved file is named after exactly those (boot id, sched_getaffinity,
 * get_mempolicy's allowed nodes, the path, device, inode, size and time
 * of the libhwloc file loaded: a library upgraded without a reboot is
 * noticed), the hwloc headers' and dlrun's versions, whether PCI
 * devices were read and, when they were, the GPUs the NVIDIA driver lists
 * (a GPU that fell off the bus is noticed).  Anything else that could change what hwloc sees (an
 * HWLOC_* variable) turns the cache off.
 *
 * The files live in a folder only this user can write, the user's runtime
 * folder (safefile_rundir(): $XDG_RUNTIME_DIR/dlrun, else /tmp/dlrun-UID,
 * else one in the home; made 0700; a folder that is not ours or a symbolic
 * link is not used, one of ours that others can read turns the cache off).  DLRUN_TOPOLOGY_CACHE=0 turns the
 * cache off.  A file that does not load is removed and the topology read
 * again; files of earlier boots are removed when a new one is written.
 *
 * The same folder, names and state hash serve lib/place/bindcache.c, which keeps
 * the binding plan made on this topology (bind-BOOT8-HASH.bin): its key is
 * this state hash and the plan's own inputs.  The functions below that
 * take no hwloc object are what it shares; none of them reads the
 * topology, and none but topocache_path loads the hwloc library (the
 * state hash leaves the library out: the binding cache checks which one
 * made a plan with a stat of its file).
 */
#ifndef DLRUN_TOPOCACHE_H
#define DLRUN_TOPOCACHE_H

#include <hwloc.h>
#include <stddef.h>
#include <stdint.h>

/* Where this process's cache files go and what names them now. */
struct cache_where {
    char dir[4096];     /* the folder, made 0700 if needed */
    char boot8[9];      /* the first 8 characters of the boot id */
    uint64_t state;     /* hash of all the topology depends on */
};

/* Fill w, with want_pci saying whether the PCI tree is part of the
 * topology (topo_want_pci()).  0, or -1 when the cache is off or there is
 * no safe folder. */
int topocache_where(int want_pci, struct cache_where *w);

/* FNV-1a: hash h continued over the n bytes at p; start from w->state
 * to key a file on more than the machine. */
uint64_t topocache_hash(uint64_t h, const void *p, size_t n);

/* The path of the file "KIND-BOOT8-HASH.EXT" in w->dir into path (len
 * bytes); kind is "topo" or "bind" (4 letters: prune reads the names).
 * 0 / -1 when it does not fit. */
int topocache_file(const struct cache_where *w, const char *kind,
                   uint64_t hash, const char *ext, char *path, size_t len);

/* The topology cache file for this process now into path (len bytes):
 * topocache_where and topocache_file(w, "topo", ..., "xml") named after
 * w->state and the libhwloc file (hwlocdl_file: this loads the library).
 * 0, or -1 when the cache is off, there is no safe folder or hwloc cannot
 * be loaded. */
int topocache_path(int want_pci, char *path, size_t len);

/* The whole of path when it is a regular file of this user of 1 byte to
 * 16 MiB (a symbolic link is not followed), with a NUL after its *len
 * bytes; caller frees.  NULL if not, or on any error. */
void *topocache_read(const char *path, size_t *len);

/* Write len bytes as path, a file of topocache_file, atomically (a
 * temporary file renamed) after pruning the folder: files of other boots
 * go, and all of them when this boot has too many.  Best effort: failures
 * are ignored. */
void topocache_write(const char *path, const void *buf, size_t len);

/* Read path into a topology that h (initialized, filters set, not loaded)
 * loads; 0 when h is loaded from it, -1 when there is no usable file
 * (a broken one is removed).  Nothing is printed. */
int topocache_load(const char *path, hwloc_topology_t h);

/* Save the loaded topology h as path (topocache_write). */
void topocache_save(const char *path, hwloc_topology_t h);

#endif
