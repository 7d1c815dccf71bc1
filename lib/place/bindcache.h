/* bindcache.h - this machine's binding plans kept between runs.
 *
 * With the topology cached (topocache.h) a launch that binds still spent
 * about 0.2 ms in hwloc: init, the XML import of the topology (0.11 ms),
 * bind_node's planning and the destroy.  A plan is a pure function of the
 * topology and of bind_node's other inputs, so the plan itself is kept
 * too, beside the topology file: bind-BOOT8-HASH.bin.  HASH covers
 * everything the plan depends on: the topology cache's state hash (boot,
 * this process's CPUs and memory nodes, hwloc headers' and dlrun versions,
 * whether the PCI tree is read and the GPUs the NVIDIA driver lists, uid),
 * this format, the number of local
 * ranks, every field of struct bind_opts, the granted GPUs (NULL and ""
 * differ) and LD_LIBRARY_PATH.  The libhwloc file that read the topology
 * (path, device, inode, size, time) is in the file's header and a hit
 * needs it unchanged (one stat): an upgraded library is a miss.  A
 * repeated launch then reads one small file and stats one, and does not
 * even load hwloc (lib/place/hwlocdl.h).
 *
 * Same folder, same off switches (DLRUN_TOPOLOGY_CACHE=0, any HWLOC_*
 * variable) and same pruning as the topology cache.  Only plans that
 * succeeded are kept (an error is found again, with its message, at each
 * run).  A file whose size, header or entries do not check out is removed
 * and the plan made again.  Nothing is printed; every failure only means
 * planning as without a cache.
 */
#ifndef DLRUN_BINDCACHE_H
#define DLRUN_BINDCACHE_H

#include <stdint.h>

#include "place/bind.h"

struct bindcache {
    char path[4400];    /* the file */
    uint64_t key;       /* the hash in its name, also in its header */
    int nlocal;         /* entries */
};

/* c for planning nlocal ranks of this machine with o and granted (as
 * bind_node takes them).  0, or -1 when the cache is off or has no safe
 * folder: plan without it. */
int bindcache_key(struct bindcache *c, int nlocal, const struct bind_opts *o,
                  const char *granted);

/* The plan kept for c into out (c->nlocal entries): 0 on a hit, -1 when
 * there is none (out undefined; a file that is not right is removed). */
int bindcache_load(const struct bindcache *c, struct bind_rank *out);

/* Keep r (c->nlocal entries, what bind_node made for c's inputs) as c's
 * file, atomically.  Best effort: failures are ignored. */
void bindcache_save(const struct bindcache *c, const struct bind_rank *r);

#endif
