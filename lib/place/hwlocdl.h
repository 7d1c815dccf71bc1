/* hwlocdl.h - libhwloc opened with dlopen at the first hwloc call, not
 * linked: with its libudev and libm it cost ~0.17 ms at every dlrun start,
 * and most starts need no topology (a plan from the binding cache,
 * --bind-to none, `plan` of a host list, agents, kv, script, --version).
 *
 * Unlike lib/where/pmixdl.h and lib/run/sshdl.h there is no table for callers to
 * call through: hwloc.h's inline helpers (hwloc_get_next_obj_by_type,
 * hwloc_get_root_obj, ...) are compiled into our objects and call hwloc's
 * functions by name.  So hwlocdl.c defines every hwloc function the
 * project (and its tests) calls, with hwloc.h's own prototype, as a
 * trampoline into the library.  A new hwloc call elsewhere fails to link
 * until its trampoline is added there.
 *
 * The trampolines that can come first (hwloc_topology_init,
 * hwloc_bitmap_alloc, hwloc_get_api_version) open the library and fail
 * as hwloc would (-1, NULL, 0) when it cannot be loaded; every other one
 * takes an object that only their success can have made.
 */
#ifndef DLRUN_HWLOCDL_H
#define DLRUN_HWLOCDL_H

#include <stdint.h>

#include "util/err.h"

/* Which libhwloc file was loaded: what the caches record (topocache.h,
 * bindcache.h) so that a library upgraded without a reboot is noticed.
 * Plain data without holes: the binding cache keeps it as it is. */
struct hwlocdl_file {
    uint64_t dev, ino, size, mtime_sec, mtime_nsec;     /* its stat */
    char path[256];     /* as the loader found it, NUL-padded */
};

/* Open libhwloc (once; later calls say how the first went).  0 / -1 with
 * err: "cannot load the hwloc library ...: install libhwloc15". */
int hwlocdl_open(struct err *err);

/* The loaded library's file into f (opening the library first).  0, or -1
 * when it cannot be loaded, its path does not fit or could not be stat'ed
 * (no cache then). */
int hwlocdl_file(struct hwlocdl_file *f);

/* Whether the file at f->path is still f: one stat, the library is not
 * opened.  1 / 0. */
int hwlocdl_file_unchanged(const struct hwlocdl_file *f);

#endif
