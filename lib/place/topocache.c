/* topocache.c - see topocache.h. */
#include "place/topocache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "place/hwlocdl.h"
#include "util/readall.h"
#include "util/safefile.h"

#define CACHE_FORMAT 2              /* bump when what is saved changes */
#define CACHE_MAX_BYTES (16 << 20)  /* a larger file is not ours */
#define CACHE_MAX_FILES 64          /* of one boot; more: start afresh */
#define MEMS_WORDS 64               /* 4096 memory nodes */
#define MPOL_F_MEMS_ALLOWED_ (1UL << 2)

extern char **environ;

uint64_t topocache_hash(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;

    for (size_t i = 0; i < n; i++) {
        h ^= c[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

/* Off on request, and when an HWLOC_* variable may change what hwloc
 * reads (HWLOC_FSROOT, HWLOC_XMLFILE, HWLOC_COMPONENTS, ...). */
static int cache_off(void)
{
    const char *v = getenv("DLRUN_TOPOLOGY_CACHE");

    if (v && strcmp(v, "0") == 0)
        return 1;
    for (char **e = environ; e && *e; e++)
        if (strncmp(*e, "HWLOC_", 6) == 0)
            return 1;
    return 0;
}

/* The kernel's id of this boot, 36 characters; -1 when unknown. */
static int boot_id(char *buf, size_t len)
{
    int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    ssize_t n;

    if (fd < 0)
        return -1;
    n = read(fd, buf, len - 1);
    close(fd);
    if (n < 32)
        return -1;
    buf[n] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    return strchr(buf, '/') ? -1 : 0;
}

/* The GPUs the NVIDIA driver lists (/proc/driver/nvidia/gpus/BUSID), as a
 * hash that does not depend on the listing's order: a GPU that fell off
 * the bus (the driver drops it) or came back changes the PCI tree hwloc
 * finds and the GPUs a plan may use, without a reboot. */
static uint64_t nvidia_gpus_hash(void)
{
    DIR *d = opendir("/proc/driver/nvidia/gpus");
    struct dirent *e;
    uint64_t sum = 0;

    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.')
            sum += topocache_hash(0xcbf29ce484222325ULL, e->d_name,
                                  strlen(e->d_name));
    if (d)
        closedir(d);
    return sum;
}

/* Everything the topology depends on, hashed, but the hwloc library
 * loaded: asking it (hwloc_get_api_version) would load it at every launch,
 * which a hit in the binding cache does not need.  The library's file is
 * checked apart by each cache (topocache_path, bindcache.c). */
static int state_hash(const char *boot, int want_pci, uint64_t *out)
{
    unsigned long mems[MEMS_WORDS] = { 0 };
    unsigned versions[2] = { CACHE_FORMAT, HWLOC_API_VERSION };
    uid_t uid = geteuid();
    cpu_set_t cpus;
    uint64_t h = 0xcbf29ce484222325ULL;

    if (sched_getaffinity(0, sizeof cpus, &cpus) < 0)
        return -1;
    /* the memory nodes this process's cpuset allows (no policy is read) */
    syscall(SYS_get_mempolicy, NULL, mems, (unsigned long)MEMS_WORDS * 64,
            NULL, MPOL_F_MEMS_ALLOWED_);
    h = topocache_hash(h, versions, sizeof versions);
    h = topocache_hash(h, DLRUN_VERSION, sizeof DLRUN_VERSION);
    h = topocache_hash(h, boot, strlen(boot));
    h = topocache_hash(h, &cpus, sizeof cpus);
    h = topocache_hash(h, mems, sizeof mems);
    h = topocache_hash(h, &want_pci, sizeof want_pci);
    if (want_pci) {
        uint64_t gpus = nvidia_gpus_hash();
        h = topocache_hash(h, &gpus, sizeof gpus);
    }
    *out = topocache_hash(h, &uid, sizeof uid);
    return 0;
}

int topocache_where(int want_pci, struct cache_where *w)
{
    char boot[64];

    if (cache_off() || boot_id(boot, sizeof boot) < 0 ||
        state_hash(boot, want_pci, &w->state) < 0 ||
        safefile_rundir(w->dir, sizeof w->dir, NULL) < 0)
        return -1;
    snprintf(w->boot8, sizeof w->boot8, "%.8s", boot);
    return 0;
}

int topocache_file(const struct cache_where *w, const char *kind,
                   uint64_t hash, const char *ext, char *path, size_t len)
{
    int n = snprintf(path, len, "%s/%s-%s-%016llx.%s", w->dir, kind, w->boot8,
                     (unsigned long long)hash, ext);

    return n < 0 || (size_t)n >= len ? -1 : 0;
}

int topocache_path(int want_pci, char *path, size_t len)
{
    struct cache_where w;
    struct hwlocdl_file lib;

    if (topocache_where(want_pci, &w) < 0 || hwlocdl_file(&lib) < 0)
        return -1;
    return topocache_file(&w, "topo", topocache_hash(w.state, &lib, sizeof lib),
                          "xml", path, len);
}

/* The whole of fd (a regular file of ours), NUL-terminated; NULL if not. */
static char *read_ours(int fd, size_t *len)
{
    struct stat st;
    char *buf;
    size_t got = 0;

    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
        st.st_uid != geteuid() || st.st_size <= 0 ||
        st.st_size > CACHE_MAX_BYTES)
        return NULL;
    buf = malloc((size_t)st.st_size + 1);
    while (buf && got < (size_t)st.st_size) {
        ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    if (buf && got != (size_t)st.st_size) {
        free(buf);
        return NULL;
    }
    if (buf)
        buf[got] = '\0';
    *len = got;
    return buf;
}

void *topocache_read(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    char *buf;

    if (fd < 0)
        return NULL;
    buf = read_ours(fd, len);
    close(fd);
    return buf;
}

/* A loaded topology fits this process: some CPUs, all of them usable. */
static int fits(hwloc_topology_t h)
{
    hwloc_const_cpuset_t set = hwloc_topology_get_topology_cpuset(h);
    cpu_set_t mine;
    int cpu, ok = !hwloc_bitmap_iszero(set);

    if (sched_getaffinity(0, sizeof mine, &mine) < 0)
        return 0;
    hwloc_bitmap_foreach_begin(cpu, set) {
        if (cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &mine))
            ok = 0;
    } hwloc_bitmap_foreach_end();
    return ok;
}

int topocache_load(const char *path, hwloc_topology_t h)
{
    size_t len = 0;
    char *xml = topocache_read(path, &len);
    int rc = -1;

    if (!xml)
        return -1;
    len++;      /* hwloc wants the length with the NUL */
    if (len <= (size_t)INT32_MAX &&
        hwloc_topology_set_flags(h, hwloc_topology_get_flags(h) |
                                    HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM) == 0 &&
        hwloc_topology_set_xmlbuffer(h, xml, (int)len) == 0 &&
        hwloc_topology_load(h) == 0 && fits(h))
        rc = 0;
    else
        unlink(path);
    free(xml);
    return rc;
}

/* One of the cache's files: "topo-BOOT8-..." or "bind-BOOT8-...". */
static int cache_file_name(const char *name)
{
    return strncmp(name, "topo-", 5) == 0 || strncmp(name, "bind-", 5) == 0;
}

/* Files of earlier boots go; so do all when there are too many (of both
 * kinds together: a bind file is one more per rank count and option set). */
static void prune(const char *dir, const char *boot8)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[4096 + 300];
    int mine = 0;

    while (d && (e = readdir(d)))
        mine += cache_file_name(e->d_name) &&
                strncmp(e->d_name + 5, boot8, 8) == 0;
    if (d)
        rewinddir(d);
    while (d && (e = readdir(d))) {
        if (!cache_file_name(e->d_name) ||
            (mine < CACHE_MAX_FILES && strncmp(e->d_name + 5, boot8, 8) == 0))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    if (d)
        closedir(d);
}

void topocache_write(const char *path, const void *buf, size_t len)
{
    const char *name = strrchr(path, '/');
    char dir[4096], tmp[4096 + 16];
    int fd;

    if (!name || (size_t)(name - path) >= sizeof dir || strlen(name) < 14 ||
        !cache_file_name(name + 1) || len > CACHE_MAX_BYTES)
        return;
    snprintf(dir, sizeof dir, "%.*s", (int)(name - path), path);
    prune(dir, name + 6);
    if (snprintf(tmp, sizeof tmp, "%s.XXXXXX", path) >= (int)sizeof tmp)
        return;
    fd = mkostemp(tmp, O_CLOEXEC);
    if (fd >= 0) {
        int ok = write_all(fd, buf, len) == 0;
        if (close(fd) < 0 || !ok || rename(tmp, path) < 0)
            unlink(tmp);
    }
}

void topocache_save(const char *path, hwloc_topology_t h)
{
    char *xml = NULL;
    int len = 0;

    if (hwloc_topology_export_xmlbuffer(h, &xml, &len, 0) < 0)
        return;
    topocache_write(path, xml, (size_t)len);
    hwloc_free_xmlbuffer(h, xml);
}
