/* t_bindcache.c - this machine's binding plans kept between runs: a plan
 * comes back byte for byte, every input of bind_node changes the key, a
 * file that is not exactly ours and right is refused (and removed), the
 * cache's off switches hold, and pruning covers the new files.  Works in
 * a temporary XDG_RUNTIME_DIR, never in the user's cache. */
#include <dlfcn.h>
#include <fcntl.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "place/bind.h"
#include "cachedir.h"
#include "place/bindcache.h"
#include "place/hwlocdl.h"
#include "tap.h"
#include "place/topo.h"
#include "place/topocache.h"


static char dir[64];

/* The file's layout (lib/place/bindcache.c): magic, format, entry size, nlocal,
 * zero, key, the libhwloc file; then the entries. */
#define OFF_FORMAT 8
#define OFF_ENTRY 12
#define OFF_NLOCAL 16
#define OFF_KEY 24
#define OFF_LIB 32
#define HEADER (32 + (long)sizeof(struct hwlocdl_file))

/* A plan of n ranks on this machine, bound to cores even when they share
 * (so that each has a mask), with GPU fields filled in as a GPU node's
 * would be: every field makes the round trip. */
static int plan_here(int n, struct bind_rank *r)
{
    struct bind_opts o = { .bind = BIND_CORE, .oversubscribe = 1 };
    struct err err = { "" };
    struct topo *t = topo_load(NULL, &err);
    int rc = t ? bind_node(t, n, &o, NULL, r, &err) : -1;

    if (rc < 0)
        printf("# planning here: %s\n", err.msg);
    for (int k = 0; rc == 0 && k < n; k++) {
        r[k].gpu = k;
        r[k].gpu_pci = k + 4;
        snprintf(r[k].gpu_busid, sizeof r[k].gpu_busid, "0000:%02x:00.0", k + 7);
        snprintf(r[k].visible, sizeof r[k].visible, "%d", k + 4);
        r[k].ngpus = 1;
    }
    topo_free(t);
    return rc;
}

static int exists(const char *path)
{
    struct stat st;

    return lstat(path, &st) == 0;
}

static long file_len(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static struct bindcache base;       /* 2 ranks, default options, granted NULL */
static struct bind_rank plan[2];    /* its plan */

static void test_round_trip(void)
{
    struct bind_opts o = { 0 };
    struct bind_rank got[2];
    struct stat st;

    ok(plan_here(2, plan) == 0, "a plan of 2 ranks here");
    ok(bindcache_key(&base, 2, &o, NULL) == 0, "a cache entry");
    ok(strncmp(base.path, dir, strlen(dir)) == 0 &&
       strstr(base.path, "/dlrun/bind-") && strstr(base.path, ".bin"),
       "  $XDG_RUNTIME_DIR/dlrun/bind-*.bin");
    ok(bindcache_load(&base, got) < 0, "  a miss before any save");
    bindcache_save(&base, plan);
    ok(stat(base.path, &st) == 0 && (st.st_mode & 0777) == 0600,
       "  saved, mode 0600");
    is_int(file_len(base.path), HEADER + 2 * (long)sizeof(struct bind_rank),
           "  header and 2 entries");
    memset(got, 0x5a, sizeof got);
    ok(bindcache_load(&base, got) == 0, "  a hit after it");
    ok(memcmp(got, plan, sizeof plan) == 0, "  the same bytes");
    ok(bindcache_load(&base, got) == 0 && exists(base.path), "  and again");
}

/* Whether the inputs give another file than base's, and a miss there. */
static int other_key(int n, const struct bind_opts *o, const char *granted)
{
    struct bindcache c;
    struct bind_rank got[4];

    if (bindcache_key(&c, n, o, granted) < 0)
        return 0;
    return strcmp(c.path, base.path) != 0 && c.key != base.key &&
           bindcache_load(&c, got) < 0;
}

static void test_keys(void)
{
    const struct bind_opts zero = { 0 };
    struct bind_opts o;
    struct bindcache c;

    ok(bindcache_key(&c, 2, &zero, NULL) == 0 && c.key == base.key &&
       strcmp(c.path, base.path) == 0, "same inputs: same file");
    ok(other_key(3, &zero, NULL), "another nlocal: another file, a miss");
    o = zero, o.map = MAP_SLOT;
    ok(other_key(2, &o, NULL), "  map");
    o = zero, o.ppr_obj = OBJ_SOCKET;
    ok(other_key(2, &o, NULL), "  ppr_obj");
    o = zero, o.ppr = 1;
    ok(other_key(2, &o, NULL), "  ppr");
    o = zero, o.pe = 1;
    ok(other_key(2, &o, NULL), "  pe");
    o = zero, o.bind = BIND_CORE;
    ok(other_key(2, &o, NULL), "  bind");
    o = zero, o.gpu = GPU_BIND_NONE;
    ok(other_key(2, &o, NULL), "  gpu");
    o = zero, o.oversubscribe = 1;
    ok(other_key(2, &o, NULL), "  oversubscribe");
    ok(other_key(2, &zero, ""), "granted \"\" (none) is not NULL (all)");
    ok(other_key(2, &zero, "0"), "granted \"0\"");
    ok(bindcache_key(&c, 2, &zero, "") == 0 &&
       bindcache_key(&base, 2, &zero, "0") == 0 && c.key != base.key,
       "  \"\" and \"0\" differ");
    bindcache_key(&base, 2, &zero, NULL);
    ok(bindcache_key(&c, 0, &zero, NULL) < 0, "no ranks: no entry");
}

/* A copy of base's file with len bytes at off replaced (len 0: as is),
 * then cut to size bytes (-1: not cut) or extended by one when size is -2. */
static void rewrite(const void *bytes, size_t off, size_t len, long size)
{
    char buf[HEADER + 2 * sizeof(struct bind_rank) + 1] = { 0 };
    size_t n = HEADER + 2 * sizeof(struct bind_rank);
    int fd;

    bindcache_save(&base, plan);
    fd = open(base.path, O_RDONLY);
    if (fd < 0 || read(fd, buf, n) != (ssize_t)n)
        printf("# cannot read %s\n", base.path);
    if (fd >= 0)
        close(fd);
    memcpy(buf + off, bytes, len);
    if (size >= 0)
        n = (size_t)size;
    else if (size == -2)
        n++;
    fd = open(base.path, O_WRONLY | O_TRUNC);
    if (fd < 0 || write(fd, buf, n) != (ssize_t)n)
        printf("# cannot write %s\n", base.path);
    if (fd >= 0)
        close(fd);
}

/* base's file is refused and removed. */
static int refused(void)
{
    struct bind_rank got[2];

    return bindcache_load(&base, got) < 0 && !exists(base.path);
}

static void test_bad_headers(void)
{
    const unsigned int one = 1;
    const size_t entry = sizeof(struct bind_rank) + 1;
    const char magic[8] = { 'd', 'l', 'r', 'u', 'n', 'X', 'X', 'X' };
    unsigned long long key = (unsigned long long)base.key ^ 1;
    struct bind_rank got[2];

    rewrite("", 0, 0, -1);
    ok(bindcache_load(&base, got) == 0, "the file rewritten as it was: a hit");
    rewrite("", 0, 0, HEADER + (long)sizeof(struct bind_rank) * 2 - 1);
    ok(refused(), "truncated: refused, removed");
    rewrite("", 0, 0, 0);
    ok(refused(), "empty: refused, removed");
    rewrite("", 0, 0, -2);
    ok(refused(), "a byte more: refused, removed");
    rewrite(magic, 0, sizeof magic, -1);
    ok(refused(), "wrong magic: refused, removed");
    rewrite(&(unsigned int){ 99 }, OFF_FORMAT, 4, -1);
    ok(refused(), "another format: refused, removed");
    rewrite(&entry, OFF_ENTRY, 4, -1);
    ok(refused(), "another entry size: refused, removed");
    rewrite(&one, OFF_NLOCAL, 4, -1);
    ok(refused(), "another nlocal in the header: refused, removed");
    rewrite(&key, OFF_KEY, 8, -1);
    ok(refused(), "another key in the header: refused, removed");
}

/* The libhwloc file that made the plan must still be there, unchanged:
 * what an upgrade without a reboot changes. */
static void test_bad_library(void)
{
    struct hwlocdl_file lib;

    ok(hwlocdl_file(&lib) == 0 && lib.path[0] == '/' && lib.ino != 0,
       "the loaded libhwloc's file is known");
    lib.mtime_nsec ^= 1;
    rewrite(&lib, OFF_LIB, sizeof lib, -1);
    ok(refused(), "  another time in the header: refused, removed");
    hwlocdl_file(&lib);
    lib.ino ^= 1;
    rewrite(&lib, OFF_LIB, sizeof lib, -1);
    ok(refused(), "  another inode: refused, removed");
    hwlocdl_file(&lib);
    snprintf(lib.path, sizeof lib.path, "%s/libhwloc.so.15", dir);
    rewrite(&lib, OFF_LIB, sizeof lib, -1);
    ok(refused(), "  a library no longer there: refused, removed");
    memset(lib.path, 'x', sizeof lib.path);
    rewrite(&lib, OFF_LIB, sizeof lib, -1);
    ok(refused(), "  a path without its NUL: refused, removed");
}

/* In a fresh process (this test run again): a hit of base's file without
 * loading libhwloc, the point of the cache.  Exit status 0 when so. */
static int hit_without_hwloc(void)
{
    struct bind_rank got[2];
    struct bindcache c;
    const struct bind_opts o = { 0 };

    if (dlopen("libhwloc.so.15", RTLD_LAZY | RTLD_NOLOAD))
        return 3;       /* loaded before we start: cannot tell */
    if (bindcache_key(&c, 2, &o, NULL) < 0 || bindcache_load(&c, got) < 0)
        return 1;
    return dlopen("libhwloc.so.15", RTLD_LAZY | RTLD_NOLOAD) ? 2 : 0;
}

static void test_no_hwloc(void)
{
    int status = -1;
    pid_t pid;

    bindcache_save(&base, plan);
    pid = fork();
    if (pid == 0) {
        execl("/proc/self/exe", "t_bindcache", "--hit-without-hwloc",
              (char *)NULL);
        _exit(127);
    }
    if (pid > 0)
        waitpid(pid, &status, 0);
    ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
       "a hit in a fresh process does not load libhwloc");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        printf("# child status %d\n", status);
}

static void test_ld_library_path(void)
{
    const struct bind_opts o = { 0 };
    struct bindcache c;

    setenv("LD_LIBRARY_PATH", "/opt/hwloc/lib", 1);
    ok(bindcache_key(&c, 2, &o, NULL) == 0 && c.key != base.key,
       "another LD_LIBRARY_PATH (another libhwloc may load): another key");
    unsetenv("LD_LIBRARY_PATH");
}

static void test_bad_entries(void)
{
    size_t e1 = HEADER + sizeof(struct bind_rank);
    char xs[BIND_CPUS_MAX];
    cpu_set_t far;
    int minus2 = -2, minus1 = -1;

    memset(xs, 'x', sizeof xs);
    rewrite(xs, e1 + offsetof(struct bind_rank, cpus), sizeof xs, -1);
    ok(refused(), "a CPU list without its NUL: refused, removed");
    rewrite(xs, e1 + offsetof(struct bind_rank, gpu_busid), 32, -1);
    ok(refused(), "a bus id without its NUL: refused, removed");
    rewrite(xs, e1 + offsetof(struct bind_rank, visible),
            sizeof ((struct bind_rank *)0)->visible, -1);
    ok(refused(), "CUDA_VISIBLE_DEVICES without its NUL: refused, removed");
    rewrite(xs, e1 + offsetof(struct bind_rank, gpu_list),
            sizeof ((struct bind_rank *)0)->gpu_list, -1);
    ok(refused(), "a GPU list without its NUL: refused, removed");
    rewrite(&minus2, e1 + offsetof(struct bind_rank, ngpus), sizeof minus2, -1);
    ok(refused(), "-2 GPUs: refused, removed");
    rewrite(&minus2, e1 + offsetof(struct bind_rank, gpu), sizeof minus2, -1);
    ok(refused(), "GPU -2: refused, removed");
    rewrite(&minus1, e1 + offsetof(struct bind_rank, gpu_pci), 4, -1);
    ok(refused(), "a GPU without its PCI index: refused, removed");
    rewrite("", e1 + offsetof(struct bind_rank, cpus), 1, -1);
    ok(refused(), "a mask without its CPU list: refused, removed");
    CPU_ZERO(&far);
    CPU_SET(CPU_SETSIZE - 1, &far);
    rewrite(&far, e1 + offsetof(struct bind_rank, mask), sizeof far, -1);
    ok(refused(), "a CPU this process may not use: refused, removed");
}

static void test_not_ours(void)
{
    char elsewhere[128];
    struct bind_rank got[2];

    rewrite("", 0, 0, -1);
    if (geteuid() != 0) {
        ok(1, "# skip another user's file: needs root");
    } else {
        ok(chown(base.path, 65534, 65534) == 0, "a file of user 65534");
        ok(refused(), "  refused, removed");
    }
    rewrite("", 0, 0, -1);
    snprintf(elsewhere, sizeof elsewhere, "%s/elsewhere.bin", dir);
    rename(base.path, elsewhere);
    ok(symlink(elsewhere, base.path) == 0, "a symbolic link to a good file");
    ok(refused(), "  refused, the link removed");
    ok(exists(elsewhere), "  not what it pointed to");
    ok(mkdir(base.path, 0700) == 0, "a folder in its place");
    ok(bindcache_load(&base, got) < 0, "  refused");
    rmdir(base.path);
}

static void test_off(void)
{
    const struct bind_opts o = { 0 };
    struct bindcache c;

    setenv("DLRUN_TOPOLOGY_CACHE", "0", 1);
    ok(bindcache_key(&c, 2, &o, NULL) < 0, "DLRUN_TOPOLOGY_CACHE=0: off");
    setenv("DLRUN_TOPOLOGY_CACHE", "1", 1);
    ok(bindcache_key(&c, 2, &o, NULL) == 0, "DLRUN_TOPOLOGY_CACHE=1: on");
    unsetenv("DLRUN_TOPOLOGY_CACHE");
    setenv("HWLOC_FOO", "1", 1);
    ok(bindcache_key(&c, 2, &o, NULL) < 0, "an HWLOC_ variable: off");
    unsetenv("HWLOC_FOO");
    ok(bindcache_key(&c, 2, &o, NULL) == 0 && strcmp(c.path, base.path) == 0,
       "back: on, the same file");
}

/* A file of this boot named after hash i. */
static void fake_file(const char *kind, int i, char *path, size_t len)
{
    struct cache_where w;
    int fd;

    topocache_where(topo_want_pci(), &w);
    topocache_file(&w, kind, (uint64_t)i, "bin", path, len);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0)
        close(fd);
}

static void test_prune(void)
{
    char old[200], path[4400], first[4400];
    struct err err = { "" };
    int all = 1;

    snprintf(old, sizeof old, "%s/dlrun/bind-00000000-0000000000000000.bin", dir);
    close(open(old, O_WRONLY | O_CREAT, 0600));
    bindcache_save(&base, plan);
    ok(!exists(old), "a bind file of another boot goes when one is saved");
    ok(exists(base.path), "  the new one is there");
    close(open(old, O_WRONLY | O_CREAT, 0600));
    topocache_path(topo_want_pci(), path, sizeof path);
    unlink(path);
    topo_free(topo_load(NULL, &err));
    ok(!exists(old), "  and when a topology is saved");
    fake_file("bind", 1, first, sizeof first);
    for (int i = 2; i <= 64; i++)
        fake_file(i % 2 ? "bind" : "topo", i, path, sizeof path);
    bindcache_save(&base, plan);
    ok(!exists(first) && !exists(path), "64 files of this boot: all go");
    ok(exists(base.path), "  the new one is there");
    for (int i = 1; i <= 8; i++) {
        fake_file("bind", i, path, sizeof path);
        all &= exists(path);
    }
    bindcache_save(&base, plan);
    ok(all && exists(path) && exists(base.path), "a few of this boot: kept");
}

int main(int argc, char **argv)
{
    char cmd[200];

    if (argc > 1 && strcmp(argv[1], "--hit-without-hwloc") == 0)
        return hit_without_hwloc();
    if (cachedir_setup("t_bindcache", dir, sizeof dir) < 0)
        return 1;
    test_round_trip();
    test_keys();
    test_bad_headers();
    test_bad_library();
    test_no_hwloc();
    test_ld_library_path();
    test_bad_entries();
    test_not_ours();
    test_off();
    test_prune();
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        printf("# could not remove %s\n", dir);
    return tap_done();
}
