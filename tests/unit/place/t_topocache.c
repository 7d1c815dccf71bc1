/* t_topocache.c - this machine's topology kept between runs: the cached
 * topology is the one read from the system, a broken or foreign file is
 * not used, and the cache stays in a folder only this user can write.
 * Works in a temporary XDG_RUNTIME_DIR, never in the user's cache. */
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "place/bind.h"
#include "cachedir.h"
#include "tap.h"
#include "place/topo.h"
#include "place/topocache.h"


static char dir[64];

/* Whether t was read from a file saved by mark_cached (the cache): a
 * topology read back from XML says nothing else of where it came from. */
static int from_marked_cache(const struct topo *t)
{
    hwloc_obj_t root = hwloc_get_root_obj(topo_hwloc(t));
    const char *m = hwloc_obj_get_info_by_name(root, "dlrunTest");

    return m && strcmp(m, "cached") == 0;
}

/* Save t as the cache file with a mark. */
static void mark_cached(const struct topo *t, const char *path)
{
    hwloc_obj_add_info(hwloc_get_root_obj(topo_hwloc(t)), "dlrunTest", "cached");
    topocache_save(path, topo_hwloc(t));
}

/* The default plan of 2 local ranks, as --report-bindings shows it. */
static void plan2(const struct topo *t, char *buf, size_t len)
{
    struct bind_opts o = { .oversubscribe = 1 };
    struct bind_rank r[2];
    struct err err = { "" };
    char a[400], b[400];

    if (bind_node(t, 2, &o, NULL, r, &err) < 0) {
        snprintf(buf, len, "error: %s", err.msg);
        return;
    }
    bind_describe(&r[0], a, sizeof a);
    bind_describe(&r[1], b, sizeof b);
    snprintf(buf, len, "%s | %s", a, b);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* Save a synthetic topology of 64 cores as path: CPUs this process does
 * not have. */
static void write_foreign(const char *path)
{
    hwloc_topology_t h;

    hwloc_topology_init(&h);
    hwloc_topology_set_synthetic(h, "core:64");
    hwloc_topology_load(h);
    topocache_save(path, h);
    hwloc_topology_destroy(h);
}

static void test_round_trip(void)
{
    char path[4400], live[900], cached[900];
    struct err err = { "" };
    struct topo *t1, *t2;
    struct stat st;

    ok(topocache_path(0, path, sizeof path) == 0, "a cache path");
    ok(strncmp(path, dir, strlen(dir)) == 0 &&
       strstr(path, "/dlrun/topo-") != NULL, "  in $XDG_RUNTIME_DIR/dlrun");
    ok(stat(path, &st) < 0, "  no file yet");
    t1 = topo_load(NULL, &err);
    ok(t1 && !from_marked_cache(t1), "first load reads the system");
    ok(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600,
       "  and saves the topology, mode 0600");
    t2 = topo_load(NULL, &err);
    ok(t2 && !from_marked_cache(t2), "  (the saved file is loaded)");
    topo_free(t2);
    if (t1)
        mark_cached(t1, path);
    t2 = topo_load(NULL, &err);
    ok(t2 && from_marked_cache(t2), "second load reads the cache");
    if (t1 && t2) {
        ok(hwloc_bitmap_isequal(
               hwloc_topology_get_topology_cpuset(topo_hwloc(t1)),
               hwloc_topology_get_topology_cpuset(topo_hwloc(t2))),
           "  same CPUs");
        plan2(t1, live, sizeof live);
        plan2(t2, cached, sizeof cached);
        is_str(cached, live, "  same plan");
    }
    topo_free(t1);
    topo_free(t2);
}

static void test_bad_files(void)
{
    char path[4400];
    struct err err = { "" };
    struct topo *t;

    topocache_path(0, path, sizeof path);
    write_file(path, "<?xml version=\"1.0\"?>\n<topology>garbage");
    t = topo_load(NULL, &err);
    ok(t != NULL, "a broken file: system read");
    ok(access(path, F_OK) == 0 && t && !from_marked_cache(t),
       "  and the file replaced");
    if (t)
        mark_cached(t, path);
    topo_free(t);
    t = topo_load(NULL, &err);
    ok(t && from_marked_cache(t), "  which loads");
    topo_free(t);
    write_foreign(path);
    t = topo_load(NULL, &err);
    ok(t != NULL, "CPUs this process may not use: system read");
    ok(t && hwloc_get_nbobjs_by_type(topo_hwloc(t), HWLOC_OBJ_CORE) < 64,
       "  not the file's 64 cores");
    topo_free(t);
}

static void test_off(void)
{
    char path[4400], other[4400], sub[128];

    setenv("DLRUN_TOPOLOGY_CACHE", "0", 1);
    ok(topocache_path(0, path, sizeof path) < 0, "DLRUN_TOPOLOGY_CACHE=0: off");
    unsetenv("DLRUN_TOPOLOGY_CACHE");
    setenv("HWLOC_FSROOT", "/", 1);
    ok(topocache_path(0, path, sizeof path) < 0, "an HWLOC_ variable: off");
    unsetenv("HWLOC_FSROOT");
    ok(topocache_path(0, path, sizeof path) == 0 &&
       topocache_path(1, other, sizeof other) == 0 && strcmp(path, other) != 0,
       "with and without PCI devices: two files");
    snprintf(sub, sizeof sub, "%s/dlrun", dir);
    chmod(sub, 0755);
    ok(topocache_path(0, path, sizeof path) < 0, "a folder others can read: off");
    chmod(sub, 0700);
    rename(sub, "/tmp/dlrun-t_topocache-moved");
    symlink("/tmp/dlrun-t_topocache-moved", sub);
    ok(topocache_path(0, path, sizeof path) == 0 &&
       strncmp(path, sub, strlen(sub)) != 0, "a symbolic link: not used, the "
       "next runtime folder is");
    unlink(sub);
    rename("/tmp/dlrun-t_topocache-moved", sub);
    ok(topocache_path(0, path, sizeof path) == 0, "back: on");
}

static void test_prune(void)
{
    char path[4400], old[200];
    struct err err = { "" };
    struct stat st;

    snprintf(old, sizeof old, "%s/dlrun/topo-00000000-0000000000000000.xml",
             dir);
    write_file(old, "x");
    topocache_path(0, path, sizeof path);
    unlink(path);
    topo_free(topo_load(NULL, &err));
    ok(stat(old, &st) < 0, "a file of another boot goes when one is saved");
    ok(stat(path, &st) == 0, "  the new one is there");
}

int main(void)
{
    char cmd[200];

    if (cachedir_setup("t_topocache", dir, sizeof dir) < 0)
        return 1;
    test_round_trip();
    test_bad_files();
    test_off();
    test_prune();
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        printf("# could not remove %s\n", dir);
    return tap_done();
}
