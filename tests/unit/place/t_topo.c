/* t_topo.c - topologies read, never changed: saved machines (their
 * object counts and NVIDIA GPUs in PCI bus order, as the XML files say),
 * hwloc's synthetic descriptions with and without quotes, this machine
 * restricted to the CPUs this process may use, and the GPU accessors out
 * of range.  The expected values come from the XML text itself (counted
 * with grep), not from hwloc. */
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "place/topo.h"

struct saved {
    const char *file;
    int packages, numas, cores, pus, gpus;
    const char *busids;     /* in PCI order, comma-separated */
};

static const struct saved saved[] = {
    { "tests/topo/dgx.xml", 2, 8, 128, 256, 8,
      "0000:07:00.0,0000:0f:00.0,0000:47:00.0,0000:4e:00.0,"
      "0000:87:00.0,0000:90:00.0,0000:b7:00.0,0000:bd:00.0" },
    { "tests/topo/gpu4-numa.xml", 2, 2, 16, 16, 4,
      "0000:3b:00.0,0000:5e:00.0,0000:86:00.0,0000:d8:00.0" },
    { "tests/topo/squid.xml", 2, 2, 76, 76, 8,
      "0000:07:00.0,0000:0b:00.0,0000:48:00.0,0000:4c:00.0,"
      "0000:88:00.0,0000:8b:00.0,0000:c8:00.0,0000:cb:00.0" },
};

static void check_saved(const struct saved *s)
{
    struct err err = { "" };
    struct topo *t = topo_load(s->file, &err);
    struct topo_summary sum;
    char ids[512] = "", id[32], what[128];
    int homes_ok = 1;

    snprintf(what, sizeof what, "%s loads", s->file);
    if (!ok(t != NULL, what)) {
        printf("# %s\n", err.msg);
        return;
    }
    topo_describe(t, &sum);
    snprintf(what, sizeof what, "%s: packages, NUMA nodes, cores, PUs, GPUs",
             s->file);
    ok(sum.packages == s->packages && sum.numas == s->numas &&
       sum.cores == s->cores && sum.pus == s->pus && sum.gpus == s->gpus &&
       topo_gpu_count(t) == s->gpus, what);
    for (int i = 0; i < topo_gpu_count(t); i++) {
        hwloc_obj_t home = topo_gpu_home(t, i);
        topo_gpu_busid(t, i, id, sizeof id);
        snprintf(ids + strlen(ids), sizeof ids - strlen(ids), "%s%s",
                 i ? "," : "", id);
        homes_ok &= topo_gpu(t, i) != NULL && home && home->cpuset &&
                    !hwloc_bitmap_iszero(home->cpuset);
    }
    snprintf(what, sizeof what, "%s: GPUs in PCI bus order", s->file);
    is_str(ids, s->busids, what);
    snprintf(what, sizeof what, "%s: each GPU has a home with CPUs", s->file);
    ok(homes_ok, what);
    topo_free(t);
}

static void homes(void)
{
    struct err err = { "" };
    struct topo *t = topo_load("tests/topo/gpu4-numa.xml", &err);
    hwloc_obj_t h[4];

    if (!t)
        return;
    for (int i = 0; i < 4; i++)
        h[i] = topo_gpu_home(t, i);
    /* two GPUs on each socket's PCI root: pairs share a home, the pairs'
     * homes have no CPU in common */
    ok(hwloc_bitmap_isequal(h[0]->cpuset, h[1]->cpuset) &&
       hwloc_bitmap_isequal(h[2]->cpuset, h[3]->cpuset) &&
       !hwloc_bitmap_intersects(h[0]->cpuset, h[2]->cpuset),
       "gpu4-numa: GPUs 0,1 near one socket, 2,3 near the other");
    ok(topo_gpu(t, 4) == NULL && topo_gpu(t, -1) == NULL &&
       topo_gpu_home(t, 4) == NULL, "GPU index out of range: NULL");
    {
        char id[32] = "x";
        topo_gpu_busid(t, 4, id, sizeof id);
        is_str(id, "", "bus id out of range: empty");
    }
    topo_free(t);
}

static void synthetic(void)
{
    struct err err = { "" };
    struct topo_summary sum;
    struct topo *t = topo_load("synthetic:package:2 core:3 pu:2", &err);

    ok(t != NULL, "synthetic description");
    if (t) {
        topo_describe(t, &sum);
        ok(sum.packages == 2 && sum.cores == 6 && sum.pus == 12 &&
           sum.gpus == 0, "2 packages x 3 cores x 2 PUs, no GPU");
        topo_free(t);
    }
    t = topo_load("synthetic:\"package:1 core:4 pu:1\"", &err);
    ok(t != NULL, "quotes around the description dropped");
    if (t) {
        topo_describe(t, &sum);
        is_int(sum.pus, 4, "4 PUs");
        topo_free(t);
    }
    /* the words of a profile's node: line, which hwloc's syntax lacks */
    t = topo_load("synthetic:\"package:2 core:8\"", &err);
    ok(t != NULL, "synthetic:\"package:2 core:8\" (no pu:) taken");
    if (t) {
        topo_describe(t, &sum);
        ok(sum.packages == 2 && sum.pus == 16, "  2 sockets, 16 PUs");
        topo_free(t);
    }
    t = topo_load("synthetic:package:2 core:20 gpu:4", &err);
    ok(t != NULL, "synthetic: with gpu:4 taken");
    if (t) {
        topo_describe(t, &sum);
        ok(sum.gpus == 4 && sum.cores == 40, "  4 GPUs, 40 cores");
        topo_free(t);
    }
    ok(!topo_load("synthetic:package:2 gpu:4", &err) &&
       strstr(err.msg, "neither hwloc's synthetic syntax nor a node: line "
              "(node: no core:N"), "neither syntax: says both");
    topo_free(NULL);
    ok(1, "topo_free(NULL)");
}

static void this_machine(void)
{
    struct err err = { "" };
    struct topo_summary sum;
    cpu_set_t mine;
    char v[32];

    CPU_ZERO(&mine);
    sched_getaffinity(0, sizeof mine, &mine);
    ok(topo_summarize(&sum, &err) == 0, "topo_summarize of this machine");
    is_int(sum.pus, CPU_COUNT(&mine),
           "its PUs: the CPUs this process may run on");
    ok(sum.cores >= 1 && sum.cores <= sum.pus && sum.packages >= 1,
       "at least a package and a core");
    snprintf(v, sizeof v, "%d.", HWLOC_API_VERSION >> 16);
    ok(strncmp(sum.hwloc_version, v, strlen(v)) == 0,
       "the loaded hwloc's major version is the headers'");
    ok(topo_want_pci() == 0 || topo_want_pci() == 1, "topo_want_pci: 0 or 1");
}

int main(void)
{
    for (size_t i = 0; i < sizeof saved / sizeof saved[0]; i++)
        check_saved(&saved[i]);
    homes();
    synthetic();
    this_machine();
    return tap_done();
}
