/* t_bind.c - topologies, the binding option parsers and the binding plan.
 *
 * Plans are compared with golden files, tests/golden/bind/NAME.txt: a
 * header line, then "rank K: cpus LIST gpu N (BUSID)" per local rank.
 * DLRUN_UPDATE_GOLDEN=1 rewrites them; review the diff by hand (the
 * expected layouts are explained in docs/binding.md).  Runs from the
 * repository root. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "place/bind.h"
#include "tap.h"
#include "place/topo.h"

#define GOLDEN_DIR "tests/golden/bind/"

/* ---- topologies, loaded once each ---- */

static struct {
    const char *spec;
    struct topo *t;
} topos[16];

static struct topo *topo_of(const char *spec)
{
    struct err err = { "" };
    size_t i = 0;

    for (; i < sizeof topos / sizeof topos[0] && topos[i].spec; i++)
        if (strcmp(topos[i].spec, spec) == 0)
            return topos[i].t;
    if (i == sizeof topos / sizeof topos[0])
        return NULL;
    topos[i].spec = spec;
    topos[i].t = topo_load(spec, &err);
    if (!topos[i].t)
        printf("# topo_load(%s): %s\n", spec, err.msg);
    return topos[i].t;
}

static void topos_free(void)
{
    for (size_t i = 0; i < sizeof topos / sizeof topos[0]; i++)
        topo_free(topos[i].t);
}

/* ---- golden files ---- */

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    char *buf = NULL;
    long n;

    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
        fseek(f, 0, SEEK_SET) == 0 && (buf = calloc((size_t)n + 1, 1)) &&
        fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    return buf;
}

/* Show the first line where got and want differ. */
static void show_diff(const char *got, const char *want)
{
    int line = 1;
    size_t g = strcspn(got, "\n"), w = strcspn(want, "\n");

    while (g == w && strncmp(got, want, g) == 0 && got[g] && want[w]) {
        got += g + 1, want += w + 1, line++;
        g = strcspn(got, "\n"), w = strcspn(want, "\n");
    }
    printf("#   line %d\n#   got  %.*s\n#   want %.*s\n", line, (int)g, got,
           (int)w, want);
}

/* Compare got with the golden file name (or rewrite it). */
static void golden(const char *name, const char *got, const char *what)
{
    char path[256];
    const char *update = getenv("DLRUN_UPDATE_GOLDEN");
    char *want;
    FILE *f;

    snprintf(path, sizeof path, GOLDEN_DIR "%s.txt", name);
    if (update && strcmp(update, "1") == 0) {
        f = fopen(path, "w");
        ok(f && fputs(got, f) >= 0 && fclose(f) == 0, what);
        return;
    }
    want = slurp(path);
    if (!ok(want && strcmp(got, want) == 0, what)) {
        if (want)
            show_diff(got, want);
        else
            printf("#   cannot read %s (DLRUN_UPDATE_GOLDEN=1 writes it)\n", path);
    }
    free(want);
}

/* ---- the plan table ---- */

struct brow {
    const char *golden;     /* NULL: refused */
    const char *topo;
    int nlocal;
    const char *map, *bind, *gpu;   /* option values, NULL = default */
    int oversubscribe;
    const char *granted;
    const char *err_has;    /* refused: part of the message */
};

#define SQUID "tests/topo/squid.xml"
#define DGX "tests/topo/dgx.xml"
#define GPU4 "tests/topo/gpu4-numa.xml"
#define SMALL "synthetic:package:1 core:4 pu:1"
#define SYN2 "synthetic:package:2 numa:1 core:4 pu:2"
#define SYN40 "synthetic:\"package:2 core:20 pu:2\""
#define SMT "synthetic:package:2 core:2 pu:2"
#define FLOW "tests/topo/flow.xml"

static const struct brow brows[] = {
    /* squid: 2 x 38 cores, GPUs 0-3 on socket 0, 4-7 on socket 1 */
    { "squid-default-8", SQUID, 8, NULL, NULL, NULL, 0, NULL, NULL },
    { "squid-ppr4socket-core", SQUID, 8, "ppr:4:socket", "core", NULL, 0, NULL, NULL },
    { "squid-ppr4socket-pe1", SQUID, 8, "ppr:4:socket:PE=1", "core", NULL, 0, NULL, NULL },
    { "squid-ppr4socket-socket", SQUID, 8, "ppr:4:socket", "socket", NULL, 0, NULL, NULL },
    { "squid-socket-8", SQUID, 8, "socket", NULL, NULL, 0, NULL, NULL },
    { "squid-default-2", SQUID, 2, NULL, NULL, NULL, 0, NULL, NULL },
    { "squid-default-16", SQUID, 16, NULL, NULL, NULL, 0, NULL, NULL },
    { "squid-granted-45", SQUID, 2, NULL, NULL, NULL, 0, "4,5", NULL },
    { "squid-isolate-8", SQUID, 8, NULL, NULL, "isolate", 0, NULL, NULL },
    { "squid-isolate-granted-26", SQUID, 2, NULL, NULL, "isolate", 0, "2,6", NULL },
    { "squid-gpunone-8", SQUID, 8, NULL, NULL, "none", 0, NULL, NULL },
    { "squid-ppr2socket-gpunone", SQUID, 4, "ppr:2:socket", NULL, "none", 0, NULL, NULL },
    { NULL, SQUID, 10, "ppr:4:socket", NULL, NULL, 0, NULL,
      "--map-by ppr:4:socket asks for 8 ranks on this node's 2 sockets but 10 "
      "were planned: pass --nproc-per-node 8, or --map-by ppr:5:socket" },
    { NULL, SQUID, 4, "ppr:2:socket", NULL, NULL, 0, NULL,
      "local rank 2 uses GPU 2 (0000:48:00.0) on socket 0, but --map-by "
      "ppr:2:socket leaves no cores there" },
    { NULL, SQUID, 8, "slot", NULL, NULL, 0, NULL,
      "local rank 7 uses GPU 7 (0000:cb:00.0) on socket 1" },
    { NULL, SQUID, 2, NULL, NULL, NULL, 0, "8", "GPU 8 was granted but this node "
      "has 8 NVIDIA GPUs (0-7 in PCI bus order)" },
    { NULL, SQUID, 2, NULL, NULL, NULL, 0, "1,0-2", "GPU 1 was granted twice" },
    { NULL, SQUID, 2, NULL, NULL, NULL, 0, "1,", "granted GPUs '1,': not a list" },
    { NULL, SQUID, 2, NULL, NULL, NULL, 0, "3-1", "not a list" },
    { NULL, SQUID, 77, NULL, NULL, "none", 0, NULL,
      "77 local ranks but this node has 76 cores: pass --oversubscribe" },
    { NULL, SQUID, 80, "ppr:40:socket", NULL, NULL, 0, NULL,
      "--map-by ppr:40:socket puts 40 ranks on socket 0, which has 38 cores" },
    { NULL, SQUID, 8, "ppr:4:socket:PE=10", NULL, NULL, 0, NULL,
      "puts 4 ranks of 10 cores each on socket 0, which has 38 cores" },
    /* one rank drives every usable GPU, on the cores of all their sockets */
    { "squid-one-rank-all", SQUID, 1, NULL, NULL, NULL, 0, NULL, NULL },
    { "squid-one-rank-isolate", SQUID, 1, NULL, NULL, "isolate", 0, NULL, NULL },
    { "squid-one-rank-granted-45", SQUID, 1, NULL, NULL, "isolate", 0, "4,5", NULL },
    { "dgx-one-rank-all", DGX, 1, NULL, NULL, NULL, 0, NULL, NULL },
    /* dgx: NPS4, GPUs 0,1 on NUMA 3, 2,3 on 1, 4,5 on 7, 6,7 on 5 */
    { "dgx-default-8", DGX, 8, NULL, NULL, NULL, 0, NULL, NULL },
    { "dgx-ppr4socket-core", DGX, 8, "ppr:4:socket", "core", NULL, 0, NULL, NULL },
    { "dgx-default-8-numa", DGX, 8, NULL, "numa", NULL, 0, NULL, NULL },
    { "dgx-granted-0246", DGX, 4, NULL, NULL, NULL, 0, "0,2,4,6", NULL },
    { "dgx-core-gpunone", DGX, 8, "core", NULL, "none", 0, NULL, NULL },
    { NULL, DGX, 8, "core", NULL, NULL, 0, NULL,
      "local rank 4 uses GPU 4 (0000:87:00.0) on NUMA node 7" },
    /* gpu4-numa: CPUs interleaved (socket 0 even), GPUs 0,1 on socket 0 */
    { "gpu4-default-4", GPU4, 4, NULL, NULL, NULL, 0, NULL, NULL },
    { "gpu4-numa-4", GPU4, 4, "numa", NULL, NULL, 0, NULL, NULL },
    { "gpu4-numa-4-gpunone", GPU4, 4, "numa", NULL, "none", 0, NULL, NULL },
    { "gpu4-default-4-socket", GPU4, 4, NULL, "socket", NULL, 0, NULL, NULL },
    { "gpu4-default-8", GPU4, 8, NULL, NULL, NULL, 0, NULL, NULL },
    { "gpu4-ppr1numa-isolate", GPU4, 2, "ppr:1:numa", NULL, "isolate", 0, "1,3", NULL },
    { NULL, GPU4, 3, "ppr:1:numa", NULL, NULL, 0, NULL,
      "--map-by ppr:1:numa asks for 2 ranks on this node's 2 NUMA nodes but 3 "
      "were planned: pass --nproc-per-node 2" },
    /* fewer cores than ranks */
    { "small-default-4", SMALL, 4, NULL, NULL, NULL, 0, NULL, NULL },
    { NULL, SMALL, 6, NULL, NULL, NULL, 0, NULL,
      "6 local ranks but this node has 4 cores: pass --oversubscribe" },
    { NULL, SMALL, 6, "core", NULL, NULL, 0, NULL,
      "6 local ranks but this node has 4 cores" },
    { "small-oversubscribe-6", SMALL, 6, NULL, NULL, NULL, 1, NULL, NULL },
    { "small-oversubscribe-6-core", SMALL, 6, NULL, "core", NULL, 1, NULL, NULL },
    { NULL, SMALL, 4, "ppr:2:node", NULL, NULL, 0, NULL,
      "--map-by ppr:2:node asks for 2 ranks on this node but 4 were planned: "
      "pass --nproc-per-node 2, or --map-by ppr:4:node" },
    { NULL, SMALL, 1, NULL, NULL, NULL, 0, "0", "shows no NVIDIA GPUs" },
    { "small-granted-empty", SMALL, 2, NULL, NULL, "isolate", 0, "", NULL },
    /* GPU-less, two sockets */
    { "syn2-default-4", SYN2, 4, NULL, NULL, NULL, 0, NULL, NULL },
    { "syn2-socket-4", SYN2, 4, "socket", NULL, NULL, 0, NULL, NULL },
    { "syn2-numa-2-bindnuma", SYN2, 2, "numa", "numa", NULL, 0, NULL, NULL },
    { "syn2-slot-pe3", SYN2, 2, "slot:PE=3", NULL, NULL, 0, NULL, NULL },
    { "syn40-default-3", SYN40, 3, NULL, NULL, NULL, 0, NULL, NULL },
    { "syn40-ppr2socket-none", SYN40, 4, "ppr:2:socket", "none", NULL, 0, NULL, NULL },
    /* ranks per core and per hardware thread (2 a core here), and bound
     * to one hardware thread, as Open MPI's */
    { "smt-ppr2core-hwthread", SMT, 8, "ppr:2:core", "hwthread", NULL, 0, NULL, NULL },
    { "smt-ppr2core", SMT, 8, "ppr:2:core", NULL, NULL, 0, NULL, NULL },
    { "smt-ppr1core-hwthread", SMT, 4, "ppr:1:core", "hwthread", NULL, 0, NULL, NULL },
    { "smt-ppr1hwthread", SMT, 8, "ppr:1:hwthread", NULL, NULL, 0, NULL, NULL },
    { "smt-hwthread-6", SMT, 6, "hwthread", NULL, NULL, 0, NULL, NULL },
    { "smt-core-bindhwthread", SMT, 4, "core", "hwthread", NULL, 0, NULL, NULL },
    { "smt-default-2-hwthread", SMT, 2, NULL, "hwthread", NULL, 0, NULL, NULL },
    /* Flow's node, 3 of its 4 GPUs: rank 2 alone on socket 1 (its 20
     * cores are its OMP_NUM_THREADS) */
    { "flow-default-3", FLOW, 3, NULL, NULL, NULL, 0, "0,1,2", NULL },
    { "small-ppr2core-oversubscribe", SMALL, 8, "ppr:2:core", NULL, NULL, 1, NULL, NULL },
    { NULL, SMALL, 8, "ppr:2:core", "hwthread", NULL, 0, NULL,
      "--map-by ppr:2:core puts 2 ranks on core 0, which has 1 hardware thread: "
      "pass --oversubscribe" },
    { NULL, SMT, 6, "ppr:2:core", "hwthread", NULL, 0, NULL,
      "--map-by ppr:2:core asks for 8 ranks on this node's 4 cores but 6 were "
      "planned: pass --nproc-per-node 8" },
    { NULL, SMT, 9, "hwthread", NULL, NULL, 0, NULL,
      "9 local ranks but this node has 8 hardware threads" },
};

static int make_opts(const struct brow *r, struct bind_opts *o, struct err *err)
{
    memset(o, 0, sizeof *o);
    o->oversubscribe = r->oversubscribe;
    if (r->map && bind_parse_map_by(r->map, o, err) < 0)
        return -1;
    if (r->bind && bind_parse_bind_to(r->bind, o, err) < 0)
        return -1;
    if (r->gpu && bind_parse_gpu_bind(r->gpu, o, err) < 0)
        return -1;
    return 0;
}

/* The golden text of a plan. */
static void plan_text(const struct brow *r, const struct bind_opts *o,
                      const struct bind_rank *out, char *buf, size_t len)
{
    char opts[256], line[512];
    size_t n;

    bind_opts_describe(o, opts, sizeof opts);
    n = (size_t)snprintf(buf, len, "# %s, %d local ranks, %s, granted %s\n",
                         r->topo, r->nlocal, opts, r->granted ? r->granted : "all");
    for (int k = 0; k < r->nlocal && n < len; k++) {
        bind_describe(&out[k], line, sizeof line);
        n += (size_t)snprintf(buf + n, len - n, "rank %d: %s\n", k, line);
    }
}

static void check_row(const struct brow *r)
{
    struct bind_rank out[96];
    struct bind_opts o;
    struct err err = { "" };
    struct topo *t = topo_of(r->topo);
    char what[256], text[16384];
    int rc;

    snprintf(what, sizeof what, "%s: %d ranks %s%s%s", r->golden ? r->golden : r->topo,
             r->nlocal, r->map ? r->map : "", r->golden ? "" : " refused: ",
             r->golden ? "" : r->err_has);
    if (!t || make_opts(r, &o, &err) < 0) {
        ok(0, what);
        printf("#   %s\n", t ? err.msg : "no topology");
        return;
    }
    rc = bind_node(t, r->nlocal, &o, r->granted, out, &err);
    if (!r->golden) {
        if (!ok(rc < 0 && strstr(err.msg, r->err_has), what))
            printf("#   rc %d, message: %s\n", rc, err.msg);
        return;
    }
    if (rc < 0) {
        ok(0, what);
        printf("#   %s\n", err.msg);
        return;
    }
    plan_text(r, &o, out, text, sizeof text);
    golden(r->golden, text, what);
}

/* Every bound rank's mask matches its list, and a GPU has its bus id. */
static void check_consistency(void)
{
    const struct brow *r = &brows[0];
    struct bind_rank out[8];
    struct bind_opts o = { 0 };
    struct err err = { "" };
    cpu_set_t want;
    int good = bind_node(topo_of(r->topo), 8, &o, NULL, out, &err) == 0;

    for (int k = 0; good && k < 8; k++) {
        CPU_ZERO(&want);
        for (int c = 9 * (k % 4) + 38 * (k / 4); c < 9 * (k % 4 + 1) + 38 * (k / 4); c++)
            CPU_SET(c, &want);
        good = CPU_EQUAL(&want, &out[k].mask) && out[k].gpu == k &&
               out[k].gpu_pci == k && out[k].visible[0] == '\0';
    }
    ok(good, "squid default: masks are the cpu_set_t of the lists, GPU k each");
}

/* ---- this machine ---- */

static void check_this_machine(void)
{
    struct bind_opts o = { .oversubscribe = 1, .bind = BIND_CORE };
    struct bind_rank out[2];
    struct err err = { "" };
    struct topo_summary s;
    cpu_set_t mine, both;
    struct topo *t = topo_load(NULL, &err);
    int rc;

    if (!ok(t != NULL, "topo_load(NULL) reads this machine")) {
        printf("#   %s\n", err.msg);
        return;
    }
    topo_describe(t, &s);
    ok(s.pus >= 1 && s.numas >= 1, "this machine has PUs and NUMA nodes");
    rc = bind_node(t, 2, &o, NULL, out, &err);
    ok(rc == 0, "bind_node plans 2 ranks here");
    sched_getaffinity(0, sizeof mine, &mine);
    for (int k = 0; rc == 0 && k < 2; k++) {
        CPU_AND(&both, &out[k].mask, &mine);
        ok(CPU_EQUAL(&both, &out[k].mask) && CPU_COUNT(&out[k].mask) > 0,
           k ? "rank 1's mask is inside sched_getaffinity"
             : "rank 0's mask is inside sched_getaffinity");
    }
    ok(topo_summarize(&s, &err) == 0 && s.pus >= 1, "topo_summarize still works");
    topo_free(t);
}

/* ---- topologies ---- */

static void check_topos(void)
{
    struct err err = { "" };
    struct topo_summary s;
    char busid[32];
    struct topo *t;

    t = topo_of(SQUID);
    ok(t && topo_gpu_count(t) == 8, "squid: 8 NVIDIA GPUs (not the BMC's VGA)");
    if (t) {
        topo_describe(t, &s);
        ok(s.packages == 2 && s.numas == 2 && s.cores == 76 && s.pus == 76 &&
           s.gpus == 8, "squid: 2 packages, 2 NUMA nodes, 76 cores, 8 GPUs");
        topo_gpu_busid(t, 4, busid, sizeof busid);
        is_str(busid, "0000:88:00.0", "squid: GPU 4 is the first on socket 1");
        topo_gpu_busid(t, 8, busid, sizeof busid);
        is_str(busid, "", "no bus id past the last GPU");
    }
    t = topo_of(DGX);
    ok(t && topo_gpu_count(t) == 8, "dgx: 8 GPUs (NVSwitches are not GPUs)");
    if (t) {
        topo_gpu_busid(t, 0, busid, sizeof busid);
        is_str(busid, "0000:07:00.0", "dgx: GPU 0 is the lowest bus id");
        topo_describe(t, &s);
        ok(s.numas == 8 && s.cores == 128 && s.pus == 256, "dgx: NPS4, SMT");
    }
    t = topo_of(GPU4);
    ok(t && topo_gpu_count(t) == 4, "gpu4-numa: 4 GPUs (not their audio functions)");
    if (t) {
        topo_gpu_busid(t, 0, busid, sizeof busid);
        is_str(busid, "0000:3b:00.0", "gpu4-numa: GPUs sorted by bus id");
    }
    t = topo_of(SMALL);
    ok(t && topo_gpu_count(t) == 0, "synthetic topologies have no GPUs");
    ok(!topo_load("tests/topo/missing.xml", &err) && strstr(err.msg, "cannot read"),
       "missing XML file refused");
    ok(!topo_load("synthetic:package:x", &err) &&
       strstr(err.msg, "invalid synthetic topology"), "bad synthetic refused");
    ok(!topo_load("tests/unit/tap.h", &err), "a file that is not XML refused");
}

/* ---- option parsers ---- */

struct prow {
    const char *s;
    int ok;
    struct bind_opts want;      /* when ok */
};

static const struct prow map_rows[] = {
    { "slot", 1, { .map = MAP_SLOT } },
    { "core", 1, { .map = MAP_CORE } },
    { "socket", 1, { .map = MAP_SOCKET } },
    { "package", 1, { .map = MAP_SOCKET } },
    { "NUMA", 1, { .map = MAP_NUMA } },
    { "ppr:4:socket", 1, { .map = MAP_PPR, .ppr = 4, .ppr_obj = OBJ_SOCKET } },
    { "ppr:2:numa", 1, { .map = MAP_PPR, .ppr = 2, .ppr_obj = OBJ_NUMA } },
    { "ppr:8:node", 1, { .map = MAP_PPR, .ppr = 8, .ppr_obj = OBJ_NODE } },
    { "PPR:4:package:PE=9", 1,
      { .map = MAP_PPR, .ppr = 4, .ppr_obj = OBJ_SOCKET, .pe = 9 } },
    { "slot:pe=2", 1, { .map = MAP_SLOT, .pe = 2 } },
    { "ppr:4096:node", 1, { .map = MAP_PPR, .ppr = 4096, .ppr_obj = OBJ_NODE } },
    { "", 0, { 0 } },
    { "ppr", 0, { 0 } },
    { "ppr:4", 0, { 0 } },
    { "ppr:0:socket", 0, { 0 } },
    { "ppr:-1:socket", 0, { 0 } },
    { "ppr:4097:node", 0, { 0 } },
    { "ppr:4:core", 1, { .map = MAP_PPR, .ppr = 4, .ppr_obj = OBJ_CORE } },
    { "ppr:2:hwthread", 1, { .map = MAP_PPR, .ppr = 2, .ppr_obj = OBJ_PU } },
    { "hwthread", 1, { .map = MAP_HWTHREAD } },
    { "ppr:2:board", 0, { 0 } },
    { "node", 0, { 0 } },
    { "seq", 0, { 0 } },
    { "ppr::socket", 0, { 0 } },
    { "ppr:4:socket:", 0, { 0 } },
    { "ppr:4:socket:PE=0", 0, { 0 } },
    { "slot:PE=2:PE=3", 0, { 0 } },
    { "socket:span", 0, { 0 } },
    { ":slot", 0, { 0 } },
    { "board", 0, { 0 } },
    { "ppr:1:socket:pe=1:pe=1:pe=1:pe=1:pe=1:pe=1:pe=1:pe=1", 0, { 0 } },
    { "slotslotslotslotslotslotslotslotslotslotslotslotslotslotslotslot", 0, { 0 } },
};

static void check_parsers(void)
{
    const struct bind_opts before = { .map = MAP_CORE, .bind = BIND_NUMA,
                                      .gpu = GPU_BIND_ISOLATE, .pe = 7 };
    struct err err = { "" };

    for (size_t i = 0; i < sizeof map_rows / sizeof map_rows[0]; i++) {
        const struct prow *r = &map_rows[i];
        struct bind_opts o = before, want = before;
        char what[160];
        int rc = bind_parse_map_by(r->s, &o, &err);

        want.map = r->want.map, want.ppr = r->want.ppr;
        want.ppr_obj = r->want.ppr_obj, want.pe = r->want.pe;
        snprintf(what, sizeof what, "--map-by '%.80s' %s", r->s,
                 r->ok ? "parsed" : "refused, options unchanged");
        ok(r->ok ? rc == 0 && memcmp(&o, &want, sizeof o) == 0
                 : rc < 0 && memcmp(&o, &before, sizeof o) == 0 &&
                       strstr(err.msg, "use slot, hwthread, core"), what);
    }
    ok(bind_parse_map_by(NULL, &(struct bind_opts){ 0 }, &err) < 0, "--map-by NULL refused");
    ok(bind_parse_map_by("node", &(struct bind_opts){ 0 }, &err) < 0 &&
       strstr(err.msg, "Open MPI's node mapping is not one dlrun does"), err.msg);
    ok(bind_parse_map_by("ppr:2:l3cache", &(struct bind_opts){ 0 }, &err) < 0 &&
       strstr(err.msg, "'ppr:2:l3cache': dlrun does not place ranks by caches"),
       err.msg);
    ok(bind_parse_map_by("L2cache", &(struct bind_opts){ 0 }, &err) < 0 &&
       strstr(err.msg, "by caches") && strstr(err.msg, "ppr:N:numa"), err.msg);
}

static void check_small_parsers(void)
{
    struct bind_opts o = { 0 };
    struct err err = { "" };

    ok(bind_parse_bind_to("core", &o, &err) == 0 && o.bind == BIND_CORE, "--bind-to core");
    ok(bind_parse_bind_to("package", &o, &err) == 0 && o.bind == BIND_SOCKET,
       "--bind-to package = socket");
    ok(bind_parse_bind_to("None", &o, &err) == 0 && o.bind == BIND_NONE, "--bind-to None");
    ok(bind_parse_bind_to("hwthread", &o, &err) == 0 && o.bind == BIND_HWTHREAD,
       "--bind-to hwthread");
    ok(bind_parse_bind_to("l3cache", &o, &err) < 0 && o.bind == BIND_HWTHREAD &&
       strstr(err.msg, "does not bind to caches"), "--bind-to l3cache refused, saying why");
    ok(bind_parse_bind_to("board", &o, &err) < 0 && o.bind == BIND_HWTHREAD &&
       strstr(err.msg, "use hwthread, core, numa, socket or none"), "--bind-to board refused");
    ok(bind_parse_bind_to(NULL, &o, &err) < 0, "--bind-to NULL refused");
    ok(bind_parse_bind_to("", &o, &err) < 0, "--bind-to '' refused");
    ok(bind_parse_gpu_bind("isolate", &o, &err) == 0 && o.gpu == GPU_BIND_ISOLATE,
       "--gpu-bind isolate");
    ok(bind_parse_gpu_bind("closest", &o, &err) == 0 && o.gpu == GPU_BIND_CLOSEST,
       "--gpu-bind closest");
    ok(bind_parse_gpu_bind("single:1", &o, &err) < 0 && o.gpu == GPU_BIND_CLOSEST &&
       strstr(err.msg, "closest, isolate or none"), "--gpu-bind single:1 refused");
    ok(bind_node(topo_of(SMALL), 0, &o, NULL, NULL, &err) < 0 &&
       strstr(err.msg, "0 local ranks"), "0 local ranks refused");
    o.map = (enum bind_map)42;
    ok(bind_node(topo_of(SMALL), 1, &o, NULL, NULL, &err) < 0 &&
       strstr(err.msg, "invalid"), "options out of range refused");
}

static void check_visible(void)
{
    struct bind_rank r = { .gpu = 1, .gpu_pci = 5, .visible = "5" };
    struct err err = { "" };
    char buf[64];

    ok(bind_visible(&r, NULL, buf, sizeof buf, &err) == 0 && strcmp(buf, "5") == 0,
       "isolate without CUDA_VISIBLE_DEVICES: the PCI index");
    ok(bind_visible(&r, "0,1", buf, sizeof buf, &err) == 0 && strcmp(buf, "1") == 0,
       "isolate under Slurm's cgroup numbering: entry gpu of the inherited list");
    ok(bind_visible(&r, "GPU-aa,GPU-bb,GPU-cc", buf, sizeof buf, &err) == 0 &&
       strcmp(buf, "GPU-bb") == 0, "UUIDs in the inherited list");
    ok(bind_visible(&r, "3", buf, sizeof buf, &err) < 0 && strstr(err.msg, "no entry 1"),
       "inherited list too short refused");
    ok(bind_visible(&r, "3,", buf, sizeof buf, &err) < 0, "empty entry refused");
    r.visible[0] = '\0';
    ok(bind_visible(&r, "0,1", buf, sizeof buf, &err) == 0 && buf[0] == '\0',
       "not isolated: leave CUDA_VISIBLE_DEVICES alone");
    r = (struct bind_rank){ .gpu = 0, .gpu_pci = 4, .visible = "4,5", .ngpus = 2 };
    ok(bind_visible(&r, "0,1,2", buf, sizeof buf, &err) == 0 &&
       strcmp(buf, "0,1") == 0, "a rank driving 2 GPUs: 2 inherited entries");
    ok(bind_visible(&r, "0", buf, sizeof buf, &err) < 0 &&
       strstr(err.msg, "fewer than 2"), "  an inherited list too short refused");
}

/* mpirun without -np: ppr:N:OBJ starts N ranks on each of the node's
 * OBJs; none asked by ppr:N:node (the plan's per node) or another map. */
static void check_ppr_ranks(void)
{
    static const struct { const char *topo, *map; int want; } rows[] = {
        { SYN2, "ppr:2:core", 16 }, { SYN2, "ppr:1:hwthread", 16 },
        { SYN2, "ppr:3:socket", 6 }, { SYN2, "ppr:1:numa", 2 },
        { SMALL, "ppr:1:core", 4 }, { SMT, "ppr:2:hwthread", 16 },
        { SYN2, "ppr:4:node", 0 }, { SYN2, "core", 0 },
    };

    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct bind_opts o = { 0 };
        struct err err = { "" };
        char what[160];
        const struct topo *t = topo_of(rows[i].topo);

        snprintf(what, sizeof what, "--map-by %s without -np on %s: %d ranks",
                 rows[i].map, rows[i].topo, rows[i].want);
        ok(t && bind_parse_map_by(rows[i].map, &o, &err) == 0 &&
           bind_ppr_ranks(t, &o) == rows[i].want, what);
    }
}

int main(void)
{
    check_topos();
    check_parsers();
    check_small_parsers();
    check_visible();
    check_ppr_ranks();
    for (size_t i = 0; i < sizeof brows / sizeof brows[0]; i++)
        check_row(&brows[i]);
    check_consistency();
    check_this_machine();
    topos_free();
    return tap_done();
}
