/* topo.c - see topo.h. */
#include "place/topo.h"
#include "place/nodeshape.h"

#include <errno.h>
#include <hwloc/glibc-sched.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "place/hwlocdl.h"
#include "place/topocache.h"
#ifdef __SANITIZE_ADDRESS__
#include <dlfcn.h>
#endif

struct topo {
    hwloc_topology_t h;
    hwloc_obj_t *gpus;      /* owned array of borrowed objects, bus order */
    int ngpus;
};

static int is_nvidia_gpu(hwloc_obj_t o)
{
    return o->attr->pcidev.vendor_id == 0x10de &&
           (o->attr->pcidev.class_id >> 8) == 0x03;
}

static int cmp_busid(const void *a, const void *b)
{
    const struct hwloc_pcidev_attr_s *x = &(*(const hwloc_obj_t *)a)->attr->pcidev;
    const struct hwloc_pcidev_attr_s *y = &(*(const hwloc_obj_t *)b)->attr->pcidev;
    unsigned long kx = ((unsigned long)x->domain << 24) | ((unsigned long)x->bus << 16) |
                       ((unsigned long)x->dev << 8) | x->func;
    unsigned long ky = ((unsigned long)y->domain << 24) | ((unsigned long)y->bus << 16) |
                       ((unsigned long)y->dev << 8) | y->func;

    return (kx > ky) - (kx < ky);
}

/* t->gpus: the NVIDIA GPUs sorted by bus id. */
static int find_gpus(struct topo *t, struct err *err)
{
    hwloc_obj_t o = NULL;
    int n = 0;

    while ((o = hwloc_get_next_pcidev(t->h, o)))
        n += is_nvidia_gpu(o);
    t->gpus = calloc((size_t)n + 1, sizeof *t->gpus);
    if (!t->gpus)
        return err_set(err, "out of memory");
    while ((o = hwloc_get_next_pcidev(t->h, o)))
        if (is_nvidia_gpu(o))
            t->gpus[t->ngpus++] = o;
    qsort(t->gpus, (size_t)t->ngpus, sizeof *t->gpus, cmp_busid);
    return 0;
}

/* desc in the words of a profile's node: line (place/nodeshape.h: gpu:,
 * package:2 core:8 without pu:) as XML for h; *xml is h's until it is
 * loaded.  0, or -1 with err saying what neither syntax takes. */
static int set_node_words(hwloc_topology_t h, const char *desc, char **xml,
                          struct err *err)
{
    struct nodeshape n;
    struct err e = { "" };

    if (nodeshape_parse(desc, &n, &e) < 0)
        return err_set(err, "invalid synthetic topology '%s': neither "
                       "hwloc's synthetic syntax nor a node: line (%s; e.g. "
                       "synthetic:\"package:2 core:20 gpu:4\", man "
                       "dlrun-sites.yaml)", desc, e.msg);
    if (!(*xml = nodeshape_xml(&n)))
        return err_set(err, "out of memory");
    if (hwloc_topology_set_xmlbuffer(h, *xml, (int)strlen(*xml) + 1) < 0)
        return err_set(err, "synthetic topology '%s': hwloc cannot read "
                       "the node it describes", desc);
    return 0;
}

/* Point h at the synthetic description or the XML file of spec; *xml:
 * the text h reads when the description is a node: line (freed by the
 * caller after loading). */
static int set_source(hwloc_topology_t h, const char *spec, char **xml,
                      struct err *err)
{
    char desc[1024];
    size_t len;

    if (strncmp(spec, "synthetic:", 10) != 0) {
        if (access(spec, R_OK) < 0)
            return err_set(err, "cannot read topology file %s: %s", spec,
                           strerror(errno));
        if (hwloc_topology_set_xml(h, spec) < 0)
            return err_set(err, "%s: not an hwloc XML topology", spec);
        return 0;
    }
    len = (size_t)snprintf(desc, sizeof desc, "%s", spec + 10);
    if (len >= sizeof desc)
        return err_set(err, "synthetic topology description too long");
    if (len >= 2 && desc[0] == '"' && desc[len - 1] == '"') {
        memmove(desc, desc + 1, len - 2);
        desc[len - 2] = '\0';
    }
    /* hwloc's own syntax as it is; else the words of a profile's node: */
    if (hwloc_topology_set_synthetic(h, desc) < 0)
        return set_node_words(h, desc, xml, err);
    return 0;
}

/* This machine: keep only the CPUs this process may run on, so that every
 * plan fits in sched_getaffinity (a cgroup already hid the others). */
static int restrict_to_affinity(hwloc_topology_t h, struct err *err)
{
    hwloc_bitmap_t set = NULL;
    cpu_set_t mine;
    int rc = 0;

    if (!hwloc_topology_is_thissystem(h) ||
        sched_getaffinity(0, sizeof mine, &mine) < 0)
        return 0;
    set = hwloc_bitmap_alloc();
    if (!set)
        return err_set(err, "out of memory");
    hwloc_cpuset_from_glibc_sched_affinity(h, set, &mine, sizeof mine);
    hwloc_bitmap_and(set, set, hwloc_topology_get_topology_cpuset(h));
    if (!hwloc_bitmap_iszero(set) &&
        !hwloc_bitmap_isequal(set, hwloc_topology_get_topology_cpuset(h)) &&
        hwloc_topology_restrict(h, set, HWLOC_RESTRICT_FLAG_REMOVE_CPULESS |
                                            HWLOC_RESTRICT_FLAG_ADAPT_IO) < 0)
        rc = err_set(err, "cannot restrict the topology to this process's "
                     "CPUs: %s", strerror(errno));
    hwloc_bitmap_free(set);
    return rc;
}

#ifdef __SANITIZE_ADDRESS__
/* Sanitizer builds only: hwloc's PCI plugin unloads libpciaccess when the
 * last topology goes, and LeakSanitizer then reports what libpciaccess's
 * globals still held, from a library it can no longer name (so no
 * suppression can match).  Keeping the library loaded keeps that memory
 * reachable; no leak of ours hides behind this. */
static void keep_pciaccess(void)
{
    dlopen("libpciaccess.so.0", RTLD_NOW | RTLD_NODELETE);
}
#else
static void keep_pciaccess(void)
{
}
#endif

/* Only the CPUs (from sysfs) and the PCI tree are needed.  hwloc's other
 * discovery components dial the X server (gl), load the CUDA, OpenCL and
 * NVML libraries, or bind to every CPU in turn to run CPUID (x86): tens
 * of milliseconds at every launch. */
static void skip_components(hwloc_topology_t h)
{
    static const char *const skip[] = {
        "gl", "opencl", "cuda", "nvml", "rsmi", "levelzero", "x86",
    };

    for (size_t i = 0; i < sizeof skip / sizeof skip[0]; i++)
        hwloc_topology_set_components(h, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST,
                                      skip[i]);
}

/* No NVIDIA driver here: no GPU can be used, so the PCI tree (the slow
 * part of reading this machine) is not needed. */
int topo_want_pci(void)
{
    return access("/proc/driver/nvidia/gpus", F_OK) == 0 ||
           access("/dev/nvidiactl", F_OK) == 0;
}

/* HWLOC_PLUGINS_BLACKLIST for this load: the plugins it does not need.
 * Only the PCI one is ever used, and only on this machine with an NVIDIA
 * driver (GPUs); an XML file keeps the libxml2 reader (the built-in one
 * is stricter).  The user's own list is kept after ours. */
static void plugins_to_skip(int this_machine, int want_pci, char *buf,
                            size_t len)
{
    const char *user = getenv("HWLOC_PLUGINS_BLACKLIST");

    snprintf(buf, len, "HWLOC_PLUGINS_BLACKLIST=hwloc_gl.so,hwloc_opencl.so%s%s"
             "%s%s", want_pci ? "" : ",hwloc_pci.so",
             this_machine ? ",hwloc_xml_libxml.so" : "", user ? "," : "",
             user ? user : "");
}

/* hwloc_topology_init with plugins skipped.  hwloc dlopens every plugin
 * of its folder at the first init of a process, whatever the components
 * chosen later: libxml2, ICU and libstdc++ for the XML one, the X and
 * OpenCL libraries for gl and opencl, about 4 ms, and 0.6 ms more to
 * unload them at hwloc_topology_destroy.  The only way to skip one is the
 * environment variable, read at that moment: the environment is swapped
 * for a copy with it (no setenv: a PMIx thread may be running) and given
 * back at once.  When no plugin is needed at all the plugin folder is not
 * even listed (HWLOC_PLUGINS_PATH to a folder that does not exist, unless
 * the user set one).  The copy is kept until the next call, as another
 * thread's getenv may still be walking it. */
static int init_skipping_plugins(hwloc_topology_t *h, int this_machine,
                                 int want_pci)
{
    static char var[512], none[] = "HWLOC_PLUGINS_PATH=/nonexistent/dlrun";
    static char **env;
    extern char **environ;
    char **saved = environ;
    size_t n = 0, k = 0;
    int rc;

    while (saved && saved[n])
        n++;
    free(env);
    env = calloc(n + 3, sizeof *env);
    if (env) {
        plugins_to_skip(this_machine, want_pci, var, sizeof var);
        env[k++] = var;
        if (this_machine && !want_pci && !getenv("HWLOC_PLUGINS_PATH"))
            env[k++] = none;
        for (size_t i = 0; i < n; i++)
            if (strncmp(saved[i], "HWLOC_PLUGINS_BLACKLIST=", 24) != 0)
                env[k++] = saved[i];
        environ = env;
    }
    rc = hwloc_topology_init(h);
    environ = saved;
    return rc;
}

/* An empty topology with the settings of every load: plugins and
 * components skipped, caches and (unless GPUs matter) PCI filtered out. */
static int init_topology(struct topo *t, int this_machine, int want_pci,
                         struct err *err)
{
    /* the library is opened here (lib/place/hwlocdl.h), before the environment
     * swap, and a missing one said plainly */
    if (hwlocdl_open(err) < 0)
        return -1;
    if (init_skipping_plugins(&t->h, this_machine, want_pci) < 0) {
        t->h = NULL;
        return err_set(err, "hwloc_topology_init failed");
    }
    skip_components(t->h);
    /* placement uses packages, NUMA nodes and cores, never caches: not
     * reading them spares a sysfs walk per CPU at every launch */
    hwloc_topology_set_cache_types_filter(t->h, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_icache_types_filter(t->h, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_io_types_filter(t->h, this_machine && !want_pci ?
        HWLOC_TYPE_FILTER_KEEP_NONE : HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    return 0;
}

/* This machine: from the cache when it has this process's topology, else
 * read from the system (restricted to our CPUs) and saved there. */
static int load_this_machine(struct topo *t, struct err *err)
{
    int want_pci = topo_want_pci();
    char cache[4400];
    int cached;

    if (init_topology(t, 1, want_pci, err) < 0)
        return -1;
    /* after the init: the file's name includes the library loaded */
    cached = topocache_path(want_pci, cache, sizeof cache) == 0;
    if (cached && topocache_load(cache, t->h) == 0)
        return find_gpus(t, err);
    if (cached) {   /* the failed load may have left h half set up */
        hwloc_topology_destroy(t->h);
        if (init_topology(t, 1, want_pci, err) < 0)
            return -1;
    }
    keep_pciaccess();
    if (hwloc_topology_load(t->h) < 0)
        return err_set(err, "hwloc cannot read this machine's topology");
    if (restrict_to_affinity(t->h, err) < 0)
        return -1;
    if (cached)
        topocache_save(cache, t->h);
    return find_gpus(t, err);
}

static int load(struct topo *t, const char *spec, struct err *err)
{
    char *xml = NULL;
    int rc = -1;

    if (!spec || !*spec)
        return load_this_machine(t, err);
    if (init_topology(t, 0, 0, err) < 0 ||
        set_source(t->h, spec, &xml, err) < 0)
        goto out;
    if (hwloc_topology_load(t->h) < 0) {
        err_set(err, "hwloc cannot load the topology %s", spec);
        goto out;
    }
    rc = find_gpus(t, err);
out:
    free(xml);
    return rc;
}

struct topo *topo_load(const char *spec, struct err *err)
{
    struct topo *t = calloc(1, sizeof *t);

    if (!t) {
        err_set(err, "out of memory");
        return NULL;
    }
    if (load(t, spec, err) < 0) {
        topo_free(t);
        return NULL;
    }
    return t;
}

void topo_free(struct topo *t)
{
    if (!t)
        return;
    if (t->h)
        hwloc_topology_destroy(t->h);
    free(t->gpus);
    free(t);
}

hwloc_topology_t topo_hwloc(const struct topo *t)
{
    return t->h;
}

int topo_gpu_count(const struct topo *t)
{
    return t->ngpus;
}

hwloc_obj_t topo_gpu(const struct topo *t, int i)
{
    return i >= 0 && i < t->ngpus ? t->gpus[i] : NULL;
}

void topo_gpu_busid(const struct topo *t, int i, char *buf, size_t len)
{
    hwloc_obj_t o = topo_gpu(t, i);

    if (len == 0)
        return;
    buf[0] = '\0';
    if (o)
        snprintf(buf, len, "%04x:%02x:%02x.%01x", (unsigned)o->attr->pcidev.domain,
                 (unsigned)o->attr->pcidev.bus, (unsigned)o->attr->pcidev.dev,
                 (unsigned)o->attr->pcidev.func);
}

hwloc_obj_t topo_gpu_home(const struct topo *t, int i)
{
    hwloc_obj_t o = topo_gpu(t, i), home;

    if (!o)
        return NULL;
    home = hwloc_get_non_io_ancestor_obj(t->h, o);
    if (!home || !home->cpuset || hwloc_bitmap_iszero(home->cpuset))
        home = hwloc_get_root_obj(t->h);
    return home;
}

void topo_describe(const struct topo *t, struct topo_summary *out)
{
    unsigned v = hwloc_get_api_version();

    out->packages = hwloc_get_nbobjs_by_type(t->h, HWLOC_OBJ_PACKAGE);
    out->numas = hwloc_get_nbobjs_by_type(t->h, HWLOC_OBJ_NUMANODE);
    out->cores = hwloc_get_nbobjs_by_type(t->h, HWLOC_OBJ_CORE);
    out->pus = hwloc_get_nbobjs_by_type(t->h, HWLOC_OBJ_PU);
    out->gpus = t->ngpus;
    snprintf(out->hwloc_version, sizeof out->hwloc_version, "%u.%u.%u",
             v >> 16, (v >> 8) & 0xff, v & 0xff);
}

int topo_summarize(struct topo_summary *out, struct err *err)
{
    struct topo *t = topo_load(NULL, err);

    if (!t)
        return -1;
    topo_describe(t, out);
    topo_free(t);
    return 0;
}
