/* fuzz_bind_opts.c - libFuzzer target for the binding option parsers and
 * the planner behind them (lib/place/bind.c).
 *
 * Input: byte 0 picks the local ranks (1-64) and the topology (two
 * synthetic ones, tests/topo/gpu4-numa.xml and tests/topo/dgx.xml when run
 * from the repository root, as `make fuzz` does); byte 1 bit 0 is
 * --oversubscribe; then lines: --map-by, --bind-to, --gpu-bind, the granted
 * GPUs (absent = all) and an inherited CUDA_VISIBLE_DEVICES.
 *
 * The parsers never crash, fail cleanly (a one-line message, options
 * unchanged); bind_node either fails cleanly or fills every rank
 * consistently: the mask is inside the topology and matches its list, a
 * GPU comes with its bus id, isolate sets CUDA_VISIBLE_DEVICES exactly when
 * a rank has a GPU, and a rank bound next to one GPU stays in its socket
 * (one driving every GPU of the node has their list and may span them). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwloc/glibc-sched.h>

#include "place/bind.h"
#include "place/topo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NLOCAL_MAX 64

static void must(int cond)
{
    if (!cond)
        abort();
}

static void must_fail_cleanly(const struct err *err)
{
    must(err->msg[0] != '\0' && !strchr(err->msg, '\n'));
}

static struct topo *topology(int which)
{
    static const char *const specs[] = {
        "synthetic:package:1 core:4 pu:1",
        "synthetic:package:2 numa:2 core:3 pu:2",
        "tests/topo/gpu4-numa.xml",
        "tests/topo/dgx.xml",
    };
    static struct topo *loaded[4];
    static int tried[4];
    struct err err = { "" };

    if (!tried[which]) {
        tried[which] = 1;
        loaded[which] = topo_load(specs[which], &err);
    }
    return loaded[which] ? loaded[which] : topology(0);
}

/* One parser on one line: on failure, o must be as it was. */
static int parse(int (*fn)(const char *, struct bind_opts *, struct err *),
                 const char *s, struct bind_opts *o)
{
    struct bind_opts before = *o;
    struct err err = { "" };

    if (fn(s, o, &err) == 0)
        return 0;
    must_fail_cleanly(&err);
    must(memcmp(&before, o, sizeof before) == 0);
    return -1;
}

/* The package (or the machine) holding GPU pci's place. */
static hwloc_const_cpuset_t gpu_socket(const struct topo *t, int pci)
{
    hwloc_topology_t h = topo_hwloc(t);
    hwloc_obj_t home = topo_gpu_home(t, pci), o = NULL;

    while ((o = hwloc_get_next_obj_by_type(h, HWLOC_OBJ_PACKAGE, o)))
        if (hwloc_bitmap_isincluded(home->cpuset, o->cpuset))
            return o->cpuset;
    return hwloc_get_root_obj(h)->cpuset;
}

static void check_rank(const struct topo *t, const struct bind_opts *o,
                       const struct bind_rank *r, const char *inherited)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    char line[512], vis[64];
    struct err err = { "" };

    must(set != NULL);
    hwloc_cpuset_from_glibc_sched_affinity(topo_hwloc(t), set, &r->mask, sizeof r->mask);
    must(hwloc_bitmap_isincluded(set, hwloc_topology_get_topology_cpuset(topo_hwloc(t))));
    must((CPU_COUNT(&r->mask) > 0) == (r->cpus[0] != '\0'));
    if (r->cpus[0] && !strstr(r->cpus, "...")) {
        hwloc_bitmap_t listed = hwloc_bitmap_alloc();

        must(listed && hwloc_bitmap_list_sscanf(listed, r->cpus) == 0 &&
             hwloc_bitmap_isequal(listed, set));
        hwloc_bitmap_free(listed);
    }
    must((r->gpu < 0) == (r->gpu_pci < 0) && (r->gpu < 0) == (r->gpu_busid[0] == '\0'));
    must((r->visible[0] != '\0') == (o->gpu == GPU_BIND_ISOLATE && r->gpu >= 0));
    must(o->gpu != GPU_BIND_NONE || r->gpu < 0);
    /* a rank driving every GPU of the node spans their sockets */
    if (r->gpu >= 0 && r->ngpus <= 1 && r->cpus[0])
        must(hwloc_bitmap_isincluded(set, gpu_socket(t, r->gpu_pci)));
    must(r->ngpus <= 1 || (r->gpu >= 0 && r->gpu_list[0] != '\0'));
    bind_describe(r, line, sizeof line);
    if (bind_visible(r, inherited, vis, sizeof vis, &err) < 0)
        must_fail_cleanly(&err);
    hwloc_bitmap_free(set);
}

static void plan(const uint8_t *head, char **lines, int n)
{
    struct bind_opts o = { .oversubscribe = head[1] & 1 };
    struct bind_rank out[NLOCAL_MAX];
    struct err err = { "" };
    const struct topo *t = topology(head[0] >> 6);
    int nlocal = 1 + (head[0] & (NLOCAL_MAX - 1));
    char desc[256];

    if ((n > 0 && parse(bind_parse_map_by, lines[0], &o) < 0) ||
        (n > 1 && parse(bind_parse_bind_to, lines[1], &o) < 0) ||
        (n > 2 && parse(bind_parse_gpu_bind, lines[2], &o) < 0))
        return;
    bind_opts_describe(&o, desc, sizeof desc);
    if (bind_node(t, nlocal, &o, n > 3 ? lines[3] : NULL, out, &err) < 0) {
        must_fail_cleanly(&err);
        return;
    }
    for (int k = 0; k < nlocal; k++)
        check_rank(t, &o, &out[k], n > 4 ? lines[4] : NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text, *lines[5];
    int n = 0;

    if (size < 2)
        return 0;
    text = malloc(size - 1);
    if (!text)
        return 0;
    memcpy(text, data + 2, size - 2);
    text[size - 2] = '\0';
    for (char *p = text; p && n < 5;) {
        lines[n++] = p;
        if ((p = strchr(p, '\n')))
            *p++ = '\0';
    }
    plan(data, lines, size > 2 ? n : 0);
    free(text);
    return 0;
}
