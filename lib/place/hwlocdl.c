/* hwlocdl.c - see hwlocdl.h. */
#include "place/hwlocdl.h"

#include <dlfcn.h>
#include <hwloc.h>
#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define HWLOC_SONAME "libhwloc.so.15"  /* the ABI of the hwloc 2.x headers */

_Static_assert(HWLOC_API_VERSION >= 0x00020000 && HWLOC_API_VERSION < 0x00030000,
               "hwlocdl.c opens " HWLOC_SONAME ", the library of hwloc 2.x");

/* The real functions, filled once by load(). */
static struct {
    __typeof__(&hwloc_bitmap_alloc) bitmap_alloc;
    __typeof__(&hwloc_bitmap_and) bitmap_and;
    __typeof__(&hwloc_bitmap_copy) bitmap_copy;
    __typeof__(&hwloc_bitmap_first) bitmap_first;
    __typeof__(&hwloc_bitmap_free) bitmap_free;
    __typeof__(&hwloc_bitmap_intersects) bitmap_intersects;
    __typeof__(&hwloc_bitmap_isequal) bitmap_isequal;
    __typeof__(&hwloc_bitmap_isincluded) bitmap_isincluded;
    __typeof__(&hwloc_bitmap_iszero) bitmap_iszero;
    __typeof__(&hwloc_bitmap_last) bitmap_last;
    __typeof__(&hwloc_bitmap_list_snprintf) bitmap_list_snprintf;
    __typeof__(&hwloc_bitmap_list_sscanf) bitmap_list_sscanf;
    __typeof__(&hwloc_bitmap_next) bitmap_next;
    __typeof__(&hwloc_bitmap_or) bitmap_or;
    __typeof__(&hwloc_bitmap_set) bitmap_set;
    __typeof__(&hwloc_bitmap_weight) bitmap_weight;
    __typeof__(&hwloc_bitmap_zero) bitmap_zero;
    __typeof__(&hwloc_free_xmlbuffer) free_xmlbuffer;
    __typeof__(&hwloc_get_api_version) get_api_version;
    __typeof__(&hwloc_get_nbobjs_by_depth) get_nbobjs_by_depth;
    __typeof__(&hwloc_get_obj_by_depth) get_obj_by_depth;
    __typeof__(&hwloc_get_type_depth) get_type_depth;
    __typeof__(&hwloc_obj_add_info) obj_add_info;
    __typeof__(&hwloc_topology_destroy) topology_destroy;
    __typeof__(&hwloc_topology_export_xmlbuffer) topology_export_xmlbuffer;
    __typeof__(&hwloc_topology_get_flags) topology_get_flags;
    __typeof__(&hwloc_topology_get_topology_cpuset) topology_get_topology_cpuset;
    __typeof__(&hwloc_topology_init) topology_init;
    __typeof__(&hwloc_topology_is_thissystem) topology_is_thissystem;
    __typeof__(&hwloc_topology_load) topology_load;
    __typeof__(&hwloc_topology_restrict) topology_restrict;
    __typeof__(&hwloc_topology_set_cache_types_filter) topology_set_cache_types_filter;
    __typeof__(&hwloc_topology_set_components) topology_set_components;
    __typeof__(&hwloc_topology_set_flags) topology_set_flags;
    __typeof__(&hwloc_topology_set_icache_types_filter) topology_set_icache_types_filter;
    __typeof__(&hwloc_topology_set_io_types_filter) topology_set_io_types_filter;
    __typeof__(&hwloc_topology_set_synthetic) topology_set_synthetic;
    __typeof__(&hwloc_topology_set_xml) topology_set_xml;
    __typeof__(&hwloc_topology_set_xmlbuffer) topology_set_xmlbuffer;
} fn;

/* The name looked up is the field's with hwloc_ before it: one spelling. */
#define FN(name) { offsetof(__typeof__(fn), name), "hwloc_" #name }

static const struct {
    size_t off;
    const char *name;
} fns[] = {
    FN(bitmap_alloc), FN(bitmap_and), FN(bitmap_copy), FN(bitmap_first),
    FN(bitmap_free), FN(bitmap_intersects), FN(bitmap_isequal),
    FN(bitmap_isincluded), FN(bitmap_iszero), FN(bitmap_last),
    FN(bitmap_list_snprintf), FN(bitmap_list_sscanf), FN(bitmap_next),
    FN(bitmap_or), FN(bitmap_set), FN(bitmap_weight), FN(bitmap_zero),
    FN(free_xmlbuffer), FN(get_api_version), FN(get_nbobjs_by_depth),
    FN(get_obj_by_depth), FN(get_type_depth), FN(obj_add_info),
    FN(topology_destroy), FN(topology_export_xmlbuffer),
    FN(topology_get_flags), FN(topology_get_topology_cpuset),
    FN(topology_init), FN(topology_is_thissystem), FN(topology_load),
    FN(topology_restrict), FN(topology_set_cache_types_filter),
    FN(topology_set_components), FN(topology_set_flags),
    FN(topology_set_icache_types_filter), FN(topology_set_io_types_filter),
    FN(topology_set_synthetic), FN(topology_set_xml),
    FN(topology_set_xmlbuffer),
};

#undef FN

_Static_assert(sizeof fns / sizeof fns[0] == sizeof fn / sizeof(void (*)(void)),
               "every function of the table is looked up");

/* How the one load went. */
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded;                  /* every function found */
static char why[ERR_MSG_MAX];       /* else what failed */
static int have_file;               /* file below is known */
static struct hwlocdl_file file;

/* The library's file, stat'ed just after the loader mapped it (the path
 * is the loader's: the soname found in LD_LIBRARY_PATH or its cache). */
static void note_file(void *dl)
{
    struct link_map *lm = NULL;
    struct stat st;

    if (dlinfo(dl, RTLD_DI_LINKMAP, &lm) < 0 || !lm || !lm->l_name ||
        lm->l_name[0] != '/' || strlen(lm->l_name) >= sizeof file.path ||
        stat(lm->l_name, &st) < 0)
        return;
    memset(&file, 0, sizeof file);
    file.dev = (uint64_t)st.st_dev;
    file.ino = (uint64_t)st.st_ino;
    file.size = (uint64_t)st.st_size;
    file.mtime_sec = (uint64_t)st.st_mtim.tv_sec;
    file.mtime_nsec = (uint64_t)st.st_mtim.tv_nsec;
    memcpy(file.path, lm->l_name, strlen(lm->l_name));
    have_file = 1;
}

/* RTLD_GLOBAL: hwloc's own plugins (hwloc_pci.so, hwloc_xml_libxml.so in
 * its plugin folder) are not linked to libhwloc; they take its functions
 * from the global namespace (RTLD_LOCAL: "Failed to load plugin ...
 * undefined symbol").  Neither they nor libhwloc's calls of its own
 * functions land in the trampolines below: the Makefile links with
 * --exclude-libs,ALL and no -rdynamic, so the executable exports none of
 * them (tests/e2e/t_bind.sh checks).  Already loaded (libpmix needs it
 * too), the same library is returned: one libhwloc per process. */
static void load(void)
{
    void *dl = dlopen(HWLOC_SONAME, RTLD_NOW | RTLD_GLOBAL);

    if (!dl) {
        snprintf(why, sizeof why, "cannot load hwloc (%s): install libhwloc15",
                 dlerror());
        return;
    }
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        void *f = dlsym(dl, fns[i].name);
        if (!f) {
            snprintf(why, sizeof why, "%s lacks %s (hwloc 2 needed)",
                     HWLOC_SONAME, fns[i].name);
            return;
        }
        memcpy((char *)&fn + fns[i].off, &f, sizeof f);
    }
    note_file(dl);
    loaded = 1;
}

int hwlocdl_open(struct err *err)
{
    pthread_once(&once, load);
    return loaded ? 0 : err_set(err, "%s", why);
}

int hwlocdl_file(struct hwlocdl_file *f)
{
    if (hwlocdl_open(NULL) < 0 || !have_file)
        return -1;
    *f = file;
    return 0;
}

int hwlocdl_file_unchanged(const struct hwlocdl_file *f)
{
    struct stat st;

    if (!memchr(f->path, '\0', sizeof f->path) || f->path[0] != '/' ||
        stat(f->path, &st) < 0)
        return 0;
    return f->dev == (uint64_t)st.st_dev && f->ino == (uint64_t)st.st_ino &&
           f->size == (uint64_t)st.st_size &&
           f->mtime_sec == (uint64_t)st.st_mtim.tv_sec &&
           f->mtime_nsec == (uint64_t)st.st_mtim.tv_nsec;
}

/* The trampolines.  The three that can be called first open the library
 * and fail as hwloc does; the others are only reached with a topology or
 * bitmap that one of those three made, so the table is filled by then. */

int hwloc_topology_init(hwloc_topology_t *topologyp)
{
    if (hwlocdl_open(NULL) < 0)
        return -1;
    return fn.topology_init(topologyp);
}

hwloc_bitmap_t hwloc_bitmap_alloc(void)
{
    if (hwlocdl_open(NULL) < 0)
        return NULL;
    return fn.bitmap_alloc();
}

unsigned hwloc_get_api_version(void)
{
    if (hwlocdl_open(NULL) < 0)
        return 0;
    return fn.get_api_version();
}

int hwloc_bitmap_and(hwloc_bitmap_t res, hwloc_const_bitmap_t bitmap1,
                     hwloc_const_bitmap_t bitmap2)
{
    return fn.bitmap_and(res, bitmap1, bitmap2);
}

int hwloc_bitmap_copy(hwloc_bitmap_t dst, hwloc_const_bitmap_t src)
{
    return fn.bitmap_copy(dst, src);
}

int hwloc_bitmap_first(hwloc_const_bitmap_t bitmap)
{
    return fn.bitmap_first(bitmap);
}

void hwloc_bitmap_free(hwloc_bitmap_t bitmap)
{
    /* free(NULL) style: hwloc accepts NULL, and a caller may pass the
     * NULL of a failed hwloc_bitmap_alloc without the library */
    if (bitmap)
        fn.bitmap_free(bitmap);
}

int hwloc_bitmap_intersects(hwloc_const_bitmap_t bitmap1,
                            hwloc_const_bitmap_t bitmap2)
{
    return fn.bitmap_intersects(bitmap1, bitmap2);
}

int hwloc_bitmap_isequal(hwloc_const_bitmap_t bitmap1,
                         hwloc_const_bitmap_t bitmap2)
{
    return fn.bitmap_isequal(bitmap1, bitmap2);
}

int hwloc_bitmap_isincluded(hwloc_const_bitmap_t sub_bitmap,
                            hwloc_const_bitmap_t super_bitmap)
{
    return fn.bitmap_isincluded(sub_bitmap, super_bitmap);
}

int hwloc_bitmap_iszero(hwloc_const_bitmap_t bitmap)
{
    return fn.bitmap_iszero(bitmap);
}

int hwloc_bitmap_last(hwloc_const_bitmap_t bitmap)
{
    return fn.bitmap_last(bitmap);
}

int hwloc_bitmap_list_snprintf(char *__hwloc_restrict buf, size_t buflen,
                               hwloc_const_bitmap_t bitmap)
{
    return fn.bitmap_list_snprintf(buf, buflen, bitmap);
}

int hwloc_bitmap_list_sscanf(hwloc_bitmap_t bitmap,
                             const char *__hwloc_restrict string)
{
    return fn.bitmap_list_sscanf(bitmap, string);
}

int hwloc_bitmap_next(hwloc_const_bitmap_t bitmap, int prev)
{
    return fn.bitmap_next(bitmap, prev);
}

int hwloc_bitmap_or(hwloc_bitmap_t res, hwloc_const_bitmap_t bitmap1,
                    hwloc_const_bitmap_t bitmap2)
{
    return fn.bitmap_or(res, bitmap1, bitmap2);
}

int hwloc_bitmap_set(hwloc_bitmap_t bitmap, unsigned id)
{
    return fn.bitmap_set(bitmap, id);
}

int hwloc_bitmap_weight(hwloc_const_bitmap_t bitmap)
{
    return fn.bitmap_weight(bitmap);
}

void hwloc_bitmap_zero(hwloc_bitmap_t bitmap)
{
    fn.bitmap_zero(bitmap);
}

void hwloc_free_xmlbuffer(hwloc_topology_t topology, char *xmlbuffer)
{
    fn.free_xmlbuffer(topology, xmlbuffer);
}

unsigned hwloc_get_nbobjs_by_depth(hwloc_topology_t topology, int depth)
{
    return fn.get_nbobjs_by_depth(topology, depth);
}

hwloc_obj_t hwloc_get_obj_by_depth(hwloc_topology_t topology, int depth,
                                   unsigned idx)
{
    return fn.get_obj_by_depth(topology, depth, idx);
}

int hwloc_get_type_depth(hwloc_topology_t topology, hwloc_obj_type_t type)
{
    return fn.get_type_depth(topology, type);
}

int hwloc_obj_add_info(hwloc_obj_t obj, const char *name, const char *value)
{
    return fn.obj_add_info(obj, name, value);
}

void hwloc_topology_destroy(hwloc_topology_t topology)
{
    fn.topology_destroy(topology);
}

int hwloc_topology_export_xmlbuffer(hwloc_topology_t topology,
                                    char **xmlbuffer, int *buflen,
                                    unsigned long flags)
{
    return fn.topology_export_xmlbuffer(topology, xmlbuffer, buflen, flags);
}

unsigned long hwloc_topology_get_flags(hwloc_topology_t topology)
{
    return fn.topology_get_flags(topology);
}

hwloc_const_cpuset_t hwloc_topology_get_topology_cpuset(hwloc_topology_t topology)
{
    return fn.topology_get_topology_cpuset(topology);
}

int hwloc_topology_is_thissystem(hwloc_topology_t __hwloc_restrict topology)
{
    return fn.topology_is_thissystem(topology);
}

int hwloc_topology_load(hwloc_topology_t topology)
{
    return fn.topology_load(topology);
}

int hwloc_topology_restrict(hwloc_topology_t __hwloc_restrict topology,
                            hwloc_const_bitmap_t set, unsigned long flags)
{
    return fn.topology_restrict(topology, set, flags);
}

int hwloc_topology_set_cache_types_filter(hwloc_topology_t topology,
                                          enum hwloc_type_filter_e filter)
{
    return fn.topology_set_cache_types_filter(topology, filter);
}

int hwloc_topology_set_components(hwloc_topology_t __hwloc_restrict topology,
                                  unsigned long flags,
                                  const char *__hwloc_restrict name)
{
    return fn.topology_set_components(topology, flags, name);
}

int hwloc_topology_set_flags(hwloc_topology_t topology, unsigned long flags)
{
    return fn.topology_set_flags(topology, flags);
}

int hwloc_topology_set_icache_types_filter(hwloc_topology_t topology,
                                           enum hwloc_type_filter_e filter)
{
    return fn.topology_set_icache_types_filter(topology, filter);
}

int hwloc_topology_set_io_types_filter(hwloc_topology_t topology,
                                       enum hwloc_type_filter_e filter)
{
    return fn.topology_set_io_types_filter(topology, filter);
}

int hwloc_topology_set_synthetic(hwloc_topology_t __hwloc_restrict topology,
                                 const char *__hwloc_restrict description)
{
    return fn.topology_set_synthetic(topology, description);
}

int hwloc_topology_set_xml(hwloc_topology_t __hwloc_restrict topology,
                           const char *__hwloc_restrict xmlpath)
{
    return fn.topology_set_xml(topology, xmlpath);
}

int hwloc_topology_set_xmlbuffer(hwloc_topology_t __hwloc_restrict topology,
                                 const char *__hwloc_restrict buffer, int size)
{
    return fn.topology_set_xmlbuffer(topology, buffer, size);
}
