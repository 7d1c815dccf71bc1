/* bind.c - see bind.h; the rules are in docs/binding.md.
 *
 * bind_node runs a fixed pipeline on a struct ctx: the GPU of each rank
 * (ctx_gpus), the domains the mapping uses (ctx_domains), how many ranks
 * each gets (ctx_counts), how many cores each of those ranks gets
 * (ctx_shares), the slots, one per rank, in mapping order (ctx_slots),
 * which rank takes which slot (ctx_assign), and the masks (fill_rank).
 */
#include "place/bind.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <hwloc/glibc-sched.h>

#define BIND_RANKS_MAX 65536    /* local ranks: keeps every product in range */

/* ---- option parsers ---------------------------------------------------- */

/* A decimal number in 1..BIND_PPR_MAX, the whole of s. */
static int parse_count(const char *s, int *out)
{
    long v = 0;

    if (!*s)
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        v = v * 10 + (*s - '0');
        if (v > BIND_PPR_MAX)
            return -1;
    }
    if (v < 1)
        return -1;
    *out = (int)v;
    return 0;
}

/* Split s at ':' into buf: at most max fields (pointers into buf).
 * Returns the number of fields, -1 when s is too long or has more. */
static int split_fields(const char *s, char *buf, size_t len, char **f, int max)
{
    int n = 0;

    if ((size_t)snprintf(buf, len, "%s", s) >= len)
        return -1;
    f[n++] = buf;
    for (char *p = buf; *p; p++) {
        if (*p != ':')
            continue;
        if (n == max)
            return -1;
        *p = '\0';
        f[n++] = p + 1;
    }
    return n;
}

static const struct {
    const char *name;
    enum bind_map map;
} map_names[] = {
    { "slot", MAP_SLOT }, { "core", MAP_CORE }, { "socket", MAP_SOCKET },
    { "package", MAP_SOCKET }, { "numa", MAP_NUMA },
    { "hwthread", MAP_HWTHREAD },
};

static const struct {
    const char *name;
    enum bind_obj obj;
} obj_names[] = {
    { "socket", OBJ_SOCKET }, { "package", OBJ_SOCKET }, { "numa", OBJ_NUMA },
    { "node", OBJ_NODE }, { "core", OBJ_CORE }, { "hwthread", OBJ_PU },
};

/* Open MPI's caches as mapping or binding objects: dlrun reads no cache
 * from the topology (it spares a sysfs walk per CPU at every launch). */
static int cache_word(const char *w)
{
    return strcasecmp(w, "l1cache") == 0 || strcasecmp(w, "l2cache") == 0 ||
           strcasecmp(w, "l3cache") == 0;
}

/* Open MPI's --map-by words that dlrun does not do (a node's ranks are
 * always a block: --map-by node's round-robin over the nodes is not). */
static int map_word_other(const char *w)
{
    static const char *const others[] = { "node", "board", "seq", "dist",
                                          "rankfile" };

    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
        if (strcasecmp(w, others[i]) == 0)
            return 1;
    return 0;
}

/* f[0..nf-1] name an Open MPI mapping dlrun does not do: a cache (also
 * as ppr's object) or one of map_word_other's. */
static int map_is_other(char **f, int nf)
{
    if (strcasecmp(f[0], "ppr") == 0)
        return nf > 2 && cache_word(f[2]);
    return cache_word(f[0]) || map_word_other(f[0]);
}

/* The line for an Open MPI --map-by value dlrun does not do; -1. */
static int map_by_other(const char *s, char **f, int nf, struct err *err)
{
    const char *w = nf > 2 && strcasecmp(f[0], "ppr") == 0 ? f[2] : f[0];

    if (cache_word(w))
        return err_set(err, "--map-by '%.64s': dlrun does not place ranks "
                       "by caches (it reads none from the topology): use "
                       "numa or socket, which hold an L3 cache on most "
                       "nodes (ppr:N:numa, ppr:N:socket)", s);
    return err_set(err, "--map-by '%.64s': Open MPI's %s mapping is not one "
                   "dlrun does (a node's ranks are one block): use slot, "
                   "hwthread, core, socket, numa or ppr:N:OBJ", s, w);
}

/* "PE=n" modifiers from f[0..n-1] into o->pe. */
static int parse_modifiers(char **f, int n, struct bind_opts *o)
{
    for (int i = 0; i < n; i++) {
        if (strncasecmp(f[i], "pe=", 3) != 0 || o->pe ||
            parse_count(f[i] + 3, &o->pe) < 0)
            return -1;
    }
    return 0;
}

/* "ppr:N:OBJ[:mods]" split into f[0..n-1]. */
static int parse_ppr(char **f, int n, struct bind_opts *o)
{
    size_t i;

    if (n < 3 || parse_count(f[1], &o->ppr) < 0)
        return -1;
    for (i = 0; i < sizeof obj_names / sizeof obj_names[0]; i++)
        if (strcasecmp(f[2], obj_names[i].name) == 0)
            break;
    if (i == sizeof obj_names / sizeof obj_names[0])
        return -1;
    o->map = MAP_PPR;
    o->ppr_obj = obj_names[i].obj;
    return parse_modifiers(f + 3, n - 3, o);
}

int bind_parse_map_by(const char *s, struct bind_opts *o, struct err *err)
{
    struct bind_opts n = *o;
    char buf[64], *f[8];
    int nf = s ? split_fields(s, buf, sizeof buf, f, 8) : -1;
    int rc = -1;

    n.ppr = 0;
    n.ppr_obj = OBJ_NODE;
    n.pe = 0;
    if (nf > 0 && strcasecmp(f[0], "ppr") == 0) {
        rc = parse_ppr(f, nf, &n);
    } else if (nf > 0) {
        for (size_t i = 0; i < sizeof map_names / sizeof map_names[0]; i++)
            if (strcasecmp(f[0], map_names[i].name) == 0) {
                n.map = map_names[i].map;
                rc = parse_modifiers(f + 1, nf - 1, &n);
            }
    }
    if (rc < 0 && nf > 0 && map_is_other(f, nf))
        return map_by_other(s, f, nf, err);
    if (rc < 0)
        return err_set(err, "--map-by '%.64s': use slot, hwthread, core, "
                       "socket, numa or ppr:N:OBJ (OBJ: node, socket, numa, "
                       "core, hwthread), optionally followed by :PE=n (N, n "
                       "from 1 to %d)", s ? s : "", BIND_PPR_MAX);
    *o = n;
    return 0;
}

int bind_parse_bind_to(const char *s, struct bind_opts *o, struct err *err)
{
    static const struct {
        const char *name;
        enum bind_to to;
    } names[] = {
        { "none", BIND_NONE }, { "core", BIND_CORE }, { "numa", BIND_NUMA },
        { "socket", BIND_SOCKET }, { "package", BIND_SOCKET },
        { "hwthread", BIND_HWTHREAD },
    };

    for (size_t i = 0; s && i < sizeof names / sizeof names[0]; i++)
        if (strcasecmp(s, names[i].name) == 0) {
            o->bind = names[i].to;
            return 0;
        }
    if (s && cache_word(s))
        return err_set(err, "--bind-to '%.64s': dlrun does not bind to caches "
                       "(it reads none from the topology): use core, numa or "
                       "socket", s);
    return err_set(err, "--bind-to '%.64s': use hwthread, core, numa, socket "
                   "or none", s ? s : "");
}

int bind_parse_gpu_bind(const char *s, struct bind_opts *o, struct err *err)
{
    static const struct {
        const char *name;
        enum gpu_bind gpu;
    } names[] = {
        { "closest", GPU_BIND_CLOSEST }, { "isolate", GPU_BIND_ISOLATE },
        { "none", GPU_BIND_NONE },
    };

    for (size_t i = 0; s && i < sizeof names / sizeof names[0]; i++)
        if (strcasecmp(s, names[i].name) == 0) {
            o->gpu = names[i].gpu;
            return 0;
        }
    return err_set(err, "--gpu-bind '%.64s': use closest, isolate or none",
                   s ? s : "");
}

/* ---- describing ------------------------------------------------------ */

static const char *obj_word(enum bind_obj obj)
{
    static const char *const words[] = {
        [OBJ_NODE] = "node", [OBJ_SOCKET] = "socket", [OBJ_NUMA] = "numa",
        [OBJ_CORE] = "core", [OBJ_PU] = "hwthread",
    };

    return obj >= OBJ_NODE && obj <= OBJ_PU ? words[obj] : "?";
}

/* The --map-by value of o, "ppr:4:socket:PE=9", "default". */
static void map_str(const struct bind_opts *o, char *buf, size_t len)
{
    static const char *const names[] = {
        [MAP_DEFAULT] = "default", [MAP_SLOT] = "slot", [MAP_CORE] = "core",
        [MAP_SOCKET] = "socket", [MAP_NUMA] = "numa", [MAP_PPR] = "ppr",
        [MAP_HWTHREAD] = "hwthread",
    };
    int known = o->map >= MAP_DEFAULT && o->map <= MAP_HWTHREAD;
    int n = o->map == MAP_PPR
                ? snprintf(buf, len, "ppr:%d:%s", o->ppr, obj_word(o->ppr_obj))
                : snprintf(buf, len, "%s", known ? names[o->map] : "?");

    if (o->pe && n >= 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, ":PE=%d", o->pe);
}

void bind_opts_describe(const struct bind_opts *o, char *buf, size_t len)
{
    static const char *const to[] = {
        [BIND_DEFAULT] = "default", [BIND_NONE] = "none", [BIND_CORE] = "core",
        [BIND_NUMA] = "numa", [BIND_SOCKET] = "socket",
        [BIND_HWTHREAD] = "hwthread",
    };
    static const char *const gpu[] = {
        [GPU_BIND_CLOSEST] = "closest", [GPU_BIND_ISOLATE] = "isolate",
        [GPU_BIND_NONE] = "none",
    };
    char map[64];

    int known = o->bind >= BIND_DEFAULT && o->bind <= BIND_HWTHREAD &&
                o->gpu >= GPU_BIND_CLOSEST && o->gpu <= GPU_BIND_NONE;

    map_str(o, map, sizeof map);
    snprintf(buf, len, "--map-by %s --bind-to %s --gpu-bind %s%s", map,
             known ? to[o->bind] : "?", known ? gpu[o->gpu] : "?",
             o->oversubscribe ? " --oversubscribe" : "");
}

void bind_describe(const struct bind_rank *r, char *buf, size_t len)
{
    char gpu[128] = "none";

    if (r->ngpus > 1)
        snprintf(gpu, sizeof gpu, "%s (all %d)", r->gpu_list, r->ngpus);
    else if (r->gpu >= 0)
        snprintf(gpu, sizeof gpu, "%d (%s)", r->gpu, r->gpu_busid);
    snprintf(buf, len, "cpus %s gpu %s%s%s", r->cpus[0] ? r->cpus : "none", gpu,
             r->visible[0] ? " CUDA_VISIBLE_DEVICES=" : "", r->visible);
}

int bind_visible(const struct bind_rank *r, const char *inherited, char *buf,
                 size_t len, struct err *err)
{
    const char *p = inherited;
    size_t n;

    if (len)
        buf[0] = '\0';
    if (!r->visible[0])
        return 0;
    if (!inherited || !*inherited) {
        snprintf(buf, len, "%s", r->visible);
        return 0;
    }
    for (int i = 0; i < r->gpu && p; i++) {
        p = strchr(p, ',');
        p = p ? p + 1 : NULL;
    }
    if (!p || !*p || *p == ',')
        return err_set(err, "CUDA_VISIBLE_DEVICES=%.64s has no entry %d for "
                       "--gpu-bind isolate", inherited, r->gpu);
    n = strcspn(p, ",");
    for (int i = 1; i < r->ngpus; i++) {    /* the rank drives several */
        if (p[n] != ',' || p[n + 1] == ',' || !p[n + 1])
            return err_set(err, "CUDA_VISIBLE_DEVICES=%.64s has fewer than %d "
                           "entries for --gpu-bind isolate", inherited,
                           r->ngpus);
        n += 1 + strcspn(p + n + 1, ",");
    }
    snprintf(buf, len, "%.*s", (int)n, p);
    return 0;
}

/* ---- the planner ------------------------------------------------------ */

struct dom {
    hwloc_obj_t obj;        /* a package, a NUMA node or the machine; borrowed */
    int ncores;
    int nranks;             /* ranks mapped to it */
    int pe;                 /* cores per rank */
};

struct slot {
    int dom, j;             /* the j-th rank of doms[dom] */
    hwloc_bitmap_t place;   /* owned: the PUs of its cores */
    int rank;               /* the local rank placed in it, -1 none yet */
};

struct ctx {
    const struct topo *t;
    hwloc_topology_t h;
    const struct bind_opts *o;
    int nlocal;
    hwloc_obj_type_t core;  /* the unit of the shares: HWLOC_OBJ_CORE, or PU
                               when there are no cores or a rank's share
                               may be less than one (unit_pu) */
    int *gpu;               /* owned: each rank's GPU in PCI order, or -1 */
    int *gpu_rel;           /* owned: each rank's GPU among the usable, or -1 */
    int gpus_used;          /* some rank has a GPU */
    int *use, nuse;         /* owned: the usable GPUs in PCI order */
    int all_gpus;           /* the node's only rank drives every usable GPU */
    struct dom *doms;       /* owned, ndoms entries */
    int ndoms;
    struct slot *slots;     /* owned, nlocal entries, in mapping order */
    int *rank_slot;         /* owned: each rank's slot */
    enum bind_to bind;      /* o->bind with the default resolved */
};

static void ctx_free(struct ctx *c)
{
    for (int i = 0; c->slots && i < c->nlocal; i++)
        hwloc_bitmap_free(c->slots[i].place);
    free(c->slots);
    free(c->doms);
    free(c->gpu);
    free(c->gpu_rel);
    free(c->use);
    free(c->rank_slot);
}

/* "socket 1", "NUMA node 3", "core 5", "hardware thread 9" or "the
 * node", for messages. */
static void obj_name(hwloc_obj_t obj, char *buf, size_t len)
{
    if (obj->type == HWLOC_OBJ_PACKAGE)
        snprintf(buf, len, "socket %u", obj->logical_index);
    else if (obj->type == HWLOC_OBJ_NUMANODE)
        snprintf(buf, len, "NUMA node %u", obj->os_index);
    else if (obj->type == HWLOC_OBJ_CORE)
        snprintf(buf, len, "core %u", obj->logical_index);
    else if (obj->type == HWLOC_OBJ_PU)
        snprintf(buf, len, "hardware thread %u", obj->os_index);
    else
        snprintf(buf, len, "the node");
}

/* "core"/"cores" or "hardware thread(s)": the unit of the shares. */
static const char *unit_word(const struct ctx *c, long n)
{
    if (c->core == HWLOC_OBJ_PU &&
        hwloc_get_nbobjs_by_type(c->h, HWLOC_OBJ_CORE) > 0)
        return n == 1 ? "hardware thread" : "hardware threads";
    return n == 1 ? "core" : "cores";
}

/* The first object of type whose CPUs include set, NULL if none. */
static hwloc_obj_t obj_holding(hwloc_topology_t h, hwloc_obj_type_t type,
                               hwloc_const_cpuset_t set)
{
    hwloc_obj_t o = NULL;

    while ((o = hwloc_get_next_obj_by_type(h, type, o)))
        if (o->cpuset && !hwloc_bitmap_iszero(o->cpuset) &&
            hwloc_bitmap_isincluded(set, o->cpuset))
            return o;
    return NULL;
}

/* Where a GPU is, for messages: its socket, NUMA node, or the node. */
static void home_name(hwloc_topology_t h, hwloc_obj_t home, char *buf, size_t len)
{
    hwloc_obj_t o = home->type == HWLOC_OBJ_PACKAGE ? home : NULL;

    if (!o)
        o = obj_holding(h, HWLOC_OBJ_NUMANODE, home->cpuset);
    if (!o)
        o = obj_holding(h, HWLOC_OBJ_PACKAGE, home->cpuset);
    obj_name(o ? o : hwloc_get_root_obj(h), buf, len);
}

/* The package holding home, or the machine. */
static hwloc_obj_t package_of(hwloc_topology_t h, hwloc_obj_t home)
{
    hwloc_obj_t o = obj_holding(h, HWLOC_OBJ_PACKAGE, home->cpuset);

    return o ? o : hwloc_get_root_obj(h);
}

static hwloc_obj_t rank_home(const struct ctx *c, int k)
{
    return topo_gpu_home(c->t, c->gpu[k]);
}

/* ---- the GPU of each rank ---- */

static int parse_gpu_id(const char **p, long *v)
{
    const char *s = *p;
    long n = 0;

    if (*s < '0' || *s > '9')
        return -1;
    for (; *s >= '0' && *s <= '9'; s++)
        if ((n = n * 10 + (*s - '0')) > 1000000)
            return -1;
    *v = n;
    *p = s;
    return 0;
}

static int add_gpu(long g, int ngpus, int *use, int *nuse, struct err *err)
{
    if (g >= ngpus)
        return ngpus == 0
            ? err_set(err, "GPU %ld was granted but this node's topology shows "
                      "no NVIDIA GPUs (hwloc needs /sys/bus/pci to see them); "
                      "pass --gpu-bind none to place ranks without GPUs", g)
            : err_set(err, "GPU %ld was granted but this node has %d NVIDIA "
                      "GPU%s (0-%d in PCI bus order)", g, ngpus,
                      ngpus == 1 ? "" : "s", ngpus - 1);
    for (int i = 0; i < *nuse; i++)
        if (use[i] == g)
            return err_set(err, "GPU %ld was granted twice", g);
    use[(*nuse)++] = (int)g;
    return 0;
}

/* granted: "0,1", "2-3,6"; each GPU at most once. */
static int parse_granted(const char *s, int ngpus, int *use, int *nuse,
                         struct err *err)
{
    const char *p = s;
    long a, b;
    int bad = 0;

    *nuse = 0;
    while (*p && !bad) {
        bad = parse_gpu_id(&p, &a) < 0;
        b = a;
        if (!bad && *p == '-') {
            p++;
            bad = parse_gpu_id(&p, &b) < 0 || b < a;
        }
        for (long g = a; !bad && g <= b; g++)
            if (add_gpu(g, ngpus, use, nuse, err) < 0)
                return -1;
        if (*p == ',' && p[1])
            p++;
        else if (*p)
            bad = 1;
    }
    if (bad)
        return err_set(err, "granted GPUs '%.64s': not a list of GPU numbers "
                       "such as 0,1 or 2-3", s);
    return 0;
}

static int ctx_gpus(struct ctx *c, const char *granted, struct err *err)
{
    int n = topo_gpu_count(c->t), nuse = n, *use = calloc((size_t)n + 1, sizeof *use);
    int rc = -1;

    c->gpu = calloc((size_t)c->nlocal, sizeof *c->gpu);
    c->gpu_rel = calloc((size_t)c->nlocal, sizeof *c->gpu_rel);
    if (!use || !c->gpu || !c->gpu_rel) {
        err_set(err, "out of memory");
        goto out;
    }
    for (int i = 0; i < n; i++)
        use[i] = i;
    if (granted && parse_granted(granted, n, use, &nuse, err) < 0)
        goto out;
    if (c->o->gpu == GPU_BIND_NONE)
        nuse = 0;
    for (int k = 0; k < c->nlocal; k++) {
        c->gpu_rel[k] = nuse ? k % nuse : -1;
        c->gpu[k] = nuse ? use[k % nuse] : -1;
    }
    c->gpus_used = nuse > 0;
    c->all_gpus = c->nlocal == 1 && nuse > 1;
    c->use = use;
    c->nuse = nuse;
    use = NULL;
    rc = 0;
out:
    free(use);
    return rc;
}

/* ---- domains ---- */

/* Every used GPU's home lies inside one object of type. */
static int homes_inside(const struct ctx *c, hwloc_obj_type_t type)
{
    for (int k = 0; k < c->nlocal; k++)
        if (!obj_holding(c->h, type, rank_home(c, k)->cpuset))
            return 0;
    return 1;
}

/* The hwloc type of a ppr object. */
static hwloc_obj_type_t obj_type(enum bind_obj obj)
{
    static const hwloc_obj_type_t types[] = {
        [OBJ_NODE] = HWLOC_OBJ_MACHINE, [OBJ_SOCKET] = HWLOC_OBJ_PACKAGE,
        [OBJ_NUMA] = HWLOC_OBJ_NUMANODE, [OBJ_CORE] = HWLOC_OBJ_CORE,
        [OBJ_PU] = HWLOC_OBJ_PU,
    };

    return obj >= OBJ_NODE && obj <= OBJ_PU ? types[obj] : HWLOC_OBJ_MACHINE;
}

/* Mapped by hardware thread: ranks per hardware thread, or one each. */
static int map_pu(const struct bind_opts *o)
{
    return o->map == MAP_HWTHREAD ||
           (o->map == MAP_PPR && o->ppr_obj == OBJ_PU);
}

/* A rank's share may be less than a core: ranks per core or per
 * hardware thread.  (--bind-to hwthread alone keeps the core: each rank
 * gets the first hardware thread of its own cores, as Open MPI's.) */
static int unit_pu(const struct bind_opts *o)
{
    return map_pu(o) || (o->map == MAP_PPR && o->ppr_obj == OBJ_CORE);
}

static hwloc_obj_type_t dom_type(const struct ctx *c)
{
    switch (c->o->map) {
    case MAP_SOCKET:
        return HWLOC_OBJ_PACKAGE;
    case MAP_NUMA:
        return HWLOC_OBJ_NUMANODE;
    case MAP_PPR:
        return obj_type(c->o->ppr_obj);
    case MAP_DEFAULT:
        if (c->gpus_used && homes_inside(c, HWLOC_OBJ_NUMANODE))
            return HWLOC_OBJ_NUMANODE;
        if (c->gpus_used && homes_inside(c, HWLOC_OBJ_PACKAGE))
            return HWLOC_OBJ_PACKAGE;
        return HWLOC_OBJ_MACHINE;
    default:
        return HWLOC_OBJ_MACHINE;
    }
}

/* A domain unless it has no cores or repeats one (two NUMA nodes of the
 * same CPUs, as DDR and HBM are). */
static void add_domain(struct ctx *c, hwloc_obj_t obj)
{
    int ncores = obj->cpuset ? hwloc_get_nbobjs_inside_cpuset_by_type(
                                   c->h, obj->cpuset, c->core) : 0;

    if (ncores <= 0)
        return;
    for (int i = 0; i < c->ndoms; i++)
        if (hwloc_bitmap_isequal(c->doms[i].obj->cpuset, obj->cpuset))
            return;
    c->doms[c->ndoms++] = (struct dom){ .obj = obj, .ncores = ncores };
}

/* The domains of type: the machine for HWLOC_OBJ_MACHINE or when t has no
 * object of type with cores. */
static int build_domains(struct ctx *c, hwloc_obj_type_t type, struct err *err)
{
    int n = type == HWLOC_OBJ_MACHINE ? 0 : hwloc_get_nbobjs_by_type(c->h, type);
    hwloc_obj_t o = NULL;

    free(c->doms);
    c->ndoms = 0;
    c->doms = calloc((size_t)(n > 0 ? n : 0) + 1, sizeof *c->doms);
    if (!c->doms)
        return err_set(err, "out of memory");
    while (n > 0 && (o = hwloc_get_next_obj_by_type(c->h, type, o)))
        add_domain(c, o);
    if (c->ndoms == 0)
        add_domain(c, hwloc_get_root_obj(c->h));
    if (c->ndoms == 0)
        return err_set(err, "this topology has no CPUs");
    return 0;
}

/* The ranks divide evenly over the domains, with a core each at least. */
static int even_split(const struct ctx *c)
{
    if (c->nlocal % c->ndoms != 0)
        return 0;
    for (int d = 0; d < c->ndoms; d++)
        if (c->doms[d].ncores < c->nlocal / c->ndoms)
            return 0;
    return 1;
}

/* The default without GPUs splits the ranks evenly over the NUMA nodes, or
 * else over the sockets, when that works; else it is slot. */
static int ctx_domains(struct ctx *c, struct err *err)
{
    static const hwloc_obj_type_t even[] = { HWLOC_OBJ_NUMANODE, HWLOC_OBJ_PACKAGE };

    if (c->o->map != MAP_DEFAULT || c->gpus_used)
        return build_domains(c, dom_type(c), err);
    for (size_t i = 0; i < sizeof even / sizeof even[0]; i++) {
        if (build_domains(c, even[i], err) < 0)
            return -1;
        if (even_split(c))
            return 0;
    }
    return build_domains(c, HWLOC_OBJ_MACHINE, err);
}

/* ---- how many ranks each domain gets, and how many cores each ---- */

static int dom_holding(const struct ctx *c, hwloc_const_cpuset_t set)
{
    for (int d = 0; d < c->ndoms; d++)
        if (hwloc_bitmap_isincluded(set, c->doms[d].obj->cpuset))
            return d;
    return 0;
}

static int ppr_error(const struct ctx *c, struct err *err)
{
    static const char *const what[][2] = {
        [OBJ_NODE] = { "", "" }, [OBJ_SOCKET] = { "socket", "sockets" },
        [OBJ_NUMA] = { "NUMA node", "NUMA nodes" },
        [OBJ_CORE] = { "core", "cores" },
        [OBJ_PU] = { "hardware thread", "hardware threads" },
    };
    long want = (long)c->o->ppr * c->ndoms;
    char where[64], map[64], also[64] = "";

    map_str(c->o, map, sizeof map);
    if (c->o->ppr_obj == OBJ_NODE)
        snprintf(where, sizeof where, "this node");
    else
        snprintf(where, sizeof where, "this node's %d %s", c->ndoms,
                 what[c->o->ppr_obj][c->ndoms != 1]);
    if (c->nlocal % c->ndoms == 0 && c->nlocal / c->ndoms <= BIND_PPR_MAX)
        snprintf(also, sizeof also, ", or --map-by ppr:%d:%s",
                 c->nlocal / c->ndoms, obj_word(c->o->ppr_obj));
    return err_set(err, "--map-by %s asks for %ld rank%s on %s but %d %s "
                   "planned: pass --nproc-per-node %ld%s", map, want,
                   want == 1 ? "" : "s", where, c->nlocal,
                   c->nlocal == 1 ? "was" : "were", want, also);
}

static int ctx_counts(struct ctx *c, struct err *err)
{
    switch (c->o->map) {
    case MAP_PPR:
        if ((long)c->o->ppr * c->ndoms != c->nlocal)
            return ppr_error(c, err);
        for (int d = 0; d < c->ndoms; d++)
            c->doms[d].nranks = c->o->ppr;
        return 0;
    case MAP_SOCKET:
    case MAP_NUMA:
        for (int d = 0; d < c->ndoms; d++)
            c->doms[d].nranks = c->nlocal / c->ndoms + (d < c->nlocal % c->ndoms);
        return 0;
    default:
        for (int d = 0; d < c->ndoms && !c->gpus_used; d++)
            c->doms[d].nranks = c->nlocal / c->ndoms;
        for (int k = 0; k < c->nlocal && c->gpus_used; k++)
            c->doms[dom_holding(c, rank_home(c, k)->cpuset)].nranks++;
        return 0;
    }
}

static int share_error(const struct ctx *c, const struct dom *d, struct err *err)
{
    char map[64], where[64], pe[32] = "";

    map_str(c->o, map, sizeof map);
    obj_name(d->obj, where, sizeof where);
    if (c->o->pe)
        snprintf(pe, sizeof pe, " of %d %s each", d->pe, unit_word(c, d->pe));
    if (d->obj->type == HWLOC_OBJ_MACHINE && !c->o->pe)
        return err_set(err, "%d local ranks but this node has %d %s: pass "
                       "--oversubscribe to let ranks share %s, or plan fewer "
                       "ranks per node", d->nranks, d->ncores,
                       unit_word(c, d->ncores), unit_word(c, 2));
    return err_set(err, "--map-by %s%s puts %d rank%s%s on %s, which has %d "
                   "%s: pass --oversubscribe to let ranks share %s, or "
                   "change the mapping", map, c->gpus_used && c->o->map ==
                   MAP_DEFAULT ? " (by GPU)" : "", d->nranks,
                   d->nranks == 1 ? "" : "s", pe, where, d->ncores,
                   unit_word(c, d->ncores), unit_word(c, 2));
}

/* Cores per rank; refuse more ranks than cores unless oversubscribing.
 * Resolves the default --bind-to: core (hwthread when mapped by hardware
 * thread) unless ranks share them. */
static int ctx_shares(struct ctx *c, struct err *err)
{
    int shared = 0;

    for (int i = 0; i < c->ndoms; i++) {
        struct dom *d = &c->doms[i];

        if (d->nranks == 0)
            continue;
        d->pe = c->o->pe ? c->o->pe
                : c->o->map == MAP_CORE || c->o->map == MAP_HWTHREAD ? 1
                : d->ncores / d->nranks > 1 ? d->ncores / d->nranks : 1;
        if ((long)d->nranks * d->pe <= d->ncores)
            continue;
        if (!c->o->oversubscribe)
            return share_error(c, d, err);
        shared = 1;
    }
    c->bind = c->o->bind != BIND_DEFAULT ? c->o->bind
              : shared ? BIND_NONE : map_pu(c->o) ? BIND_HWTHREAD : BIND_CORE;
    return 0;
}

/* ---- slots, one per rank, and which rank takes which ---- */

/* The PUs of the cores of the j-th rank of its domain: pe cores from
 * j * pe on, wrapping around when ranks share cores. */
static int make_place(const struct ctx *c, struct slot *s, struct err *err)
{
    const struct dom *d = &c->doms[s->dom];
    int n = d->pe < d->ncores ? d->pe : d->ncores;

    s->rank = -1;
    s->place = hwloc_bitmap_alloc();
    if (!s->place)
        return err_set(err, "out of memory");
    for (int i = 0; i < n; i++) {
        int idx = (int)(((long)s->j * d->pe + i) % d->ncores);
        hwloc_obj_t core = hwloc_get_obj_inside_cpuset_by_type(
            c->h, d->obj->cpuset, c->core, (unsigned)idx);

        if (core)
            hwloc_bitmap_or(s->place, s->place, core->cpuset);
    }
    return 0;
}

/* Slots in mapping order: round-robin over the domains for socket and
 * numa, else domain after domain. */
static int ctx_slots(struct ctx *c, struct err *err)
{
    int rr = c->o->map == MAP_SOCKET || c->o->map == MAP_NUMA, k = 0;

    c->slots = calloc((size_t)c->nlocal, sizeof *c->slots);
    c->rank_slot = calloc((size_t)c->nlocal, sizeof *c->rank_slot);
    if (!c->slots || !c->rank_slot)
        return err_set(err, "out of memory");
    for (int d = 0; d < c->ndoms && !rr; d++)
        for (int j = 0; j < c->doms[d].nranks; j++, k++)
            c->slots[k] = (struct slot){ .dom = d, .j = j };
    for (k = 0; k < c->nlocal && rr; k++)
        c->slots[k] = (struct slot){ .dom = k % c->ndoms, .j = k / c->ndoms };
    for (k = 0; k < c->nlocal; k++)
        if (make_place(c, &c->slots[k], err) < 0)
            return -1;
    return 0;
}

/* The first free slot inside set, -1 if none. */
static int free_slot(const struct ctx *c, hwloc_const_cpuset_t set)
{
    for (int s = 0; s < c->nlocal; s++)
        if (c->slots[s].rank < 0 && hwloc_bitmap_isincluded(c->slots[s].place, set))
            return s;
    return -1;
}

static void take(struct ctx *c, int s, int k)
{
    c->slots[s].rank = k;
    c->rank_slot[k] = s;
}

struct by_home {
    int weight, rank;
};

static int cmp_by_home(const void *a, const void *b)
{
    const struct by_home *x = a, *y = b;

    if (x->weight != y->weight)
        return (x->weight > y->weight) - (x->weight < y->weight);
    return (x->rank > y->rank) - (x->rank < y->rank);
}

static int closest_error(const struct ctx *c, int k, struct err *err)
{
    char busid[32], where[64], map[64];

    topo_gpu_busid(c->t, c->gpu[k], busid, sizeof busid);
    home_name(c->h, rank_home(c, k), where, sizeof where);
    map_str(c->o, map, sizeof map);
    return err_set(err, "--gpu-bind closest: local rank %d uses GPU %d (%s) on "
                   "%s, but --map-by %s leaves no cores there for it: use the "
                   "default mapping (it follows the GPUs), a ppr that matches "
                   "them, or --gpu-bind none to keep this mapping", k,
                   c->gpu_rel[k], busid, where, map);
}

/* Rank k takes a free slot inside its GPU's home (pass 0) or, failing
 * that, inside the GPU's socket (pass 1).  Ranks whose GPU sits in the
 * smallest place choose first, lower ranks first among equals. */
static int assign_by_gpu(struct ctx *c, struct err *err)
{
    struct by_home *order = calloc((size_t)c->nlocal, sizeof *order);
    int rc = -1;

    if (!order)
        return err_set(err, "out of memory");
    /* the node's only rank drives every GPU: GPU 0's home is not its own,
     * the mapping's one slot is (place_all_gpus widens the default's) */
    if (c->all_gpus) {
        take(c, 0, 0);
        free(order);
        return 0;
    }
    for (int k = 0; k < c->nlocal; k++) {
        order[k] = (struct by_home){ hwloc_bitmap_weight(rank_home(c, k)->cpuset), k };
        c->rank_slot[k] = -1;
    }
    qsort(order, (size_t)c->nlocal, sizeof *order, cmp_by_home);
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < c->nlocal; i++) {
            int k = order[i].rank, s;
            hwloc_obj_t home = rank_home(c, k);

            if (c->rank_slot[k] >= 0)
                continue;
            s = free_slot(c, pass ? package_of(c->h, home)->cpuset : home->cpuset);
            if (s >= 0)
                take(c, s, k);
        }
    for (int k = 0; k < c->nlocal; k++)
        if (c->rank_slot[k] < 0) {
            closest_error(c, k, err);
            goto out;
        }
    rc = 0;
out:
    free(order);
    return rc;
}

/* The node's only rank drives every usable GPU: by default it runs on
 * the cores of all their homes (sockets or NUMA nodes; the whole node when
 * they span it), not on GPU 0's alone. */
static void place_all_gpus(struct ctx *c)
{
    hwloc_bitmap_t place = c->slots[c->rank_slot[0]].place;

    if (!c->all_gpus || c->o->map != MAP_DEFAULT)
        return;
    hwloc_bitmap_zero(place);
    for (int i = 0; i < c->nuse; i++)
        hwloc_bitmap_or(place, place, topo_gpu_home(c->t, c->use[i])->cpuset);
}

static int ctx_assign(struct ctx *c, struct err *err)
{
    if (c->gpus_used && assign_by_gpu(c, err) < 0)
        return -1;
    for (int k = 0; k < c->nlocal && !c->gpus_used; k++)
        take(c, k, k);
    place_all_gpus(c);
    return 0;
}

/* r drives every usable GPU: their list, and under isolate every one's
 * PCI index. */
static void fill_all_gpus(const struct ctx *c, struct bind_rank *r)
{
    size_t n = 0, v = 0;

    r->ngpus = c->nuse;
    for (int i = 0; i < c->nuse && n + 12 < sizeof r->gpu_list; i++)
        n += (size_t)snprintf(r->gpu_list + n, sizeof r->gpu_list - n, "%s%d",
                              i ? "," : "", i);
    r->visible[0] = '\0';
    for (int i = 0; c->o->gpu == GPU_BIND_ISOLATE && i < c->nuse &&
                    v + 12 < sizeof r->visible; i++)
        v += (size_t)snprintf(r->visible + v, sizeof r->visible - v, "%s%d",
                              i ? "," : "", c->use[i]);
}

/* ---- each rank's result ---- */

/* The union of the objects of type that share a PU with place (the
 * machine's CPUs when there are none). */
static void covering(hwloc_topology_t h, hwloc_obj_type_t type,
                     hwloc_const_cpuset_t place, hwloc_bitmap_t out)
{
    hwloc_obj_t o = NULL;

    hwloc_bitmap_zero(out);
    while ((o = hwloc_get_next_obj_by_type(h, type, o)))
        if (o->cpuset && hwloc_bitmap_intersects(o->cpuset, place))
            hwloc_bitmap_or(out, out, o->cpuset);
    if (hwloc_bitmap_iszero(out))
        hwloc_bitmap_copy(out, hwloc_get_root_obj(h)->cpuset);
}

static void bind_mask(const struct ctx *c, hwloc_const_cpuset_t place,
                      hwloc_bitmap_t mask)
{
    switch (c->bind) {
    case BIND_CORE:     /* whole cores, also where the unit is a PU */
        if (c->core == HWLOC_OBJ_PU &&
            hwloc_get_nbobjs_by_type(c->h, HWLOC_OBJ_CORE) > 0)
            covering(c->h, HWLOC_OBJ_CORE, place, mask);
        else
            hwloc_bitmap_copy(mask, place);
        break;
    case BIND_HWTHREAD:     /* the first PU of the rank's own range */
        hwloc_bitmap_zero(mask);
        hwloc_bitmap_set(mask, (unsigned)hwloc_bitmap_first(place));
        break;
    case BIND_NUMA:
        covering(c->h, HWLOC_OBJ_NUMANODE, place, mask);
        break;
    case BIND_SOCKET:
        covering(c->h, HWLOC_OBJ_PACKAGE, place, mask);
        break;
    default:
        hwloc_bitmap_zero(mask);
    }
}

static void cpu_list(hwloc_const_bitmap_t mask, char *buf, size_t len)
{
    int n = hwloc_bitmap_iszero(mask) ? 0 : hwloc_bitmap_list_snprintf(buf, len, mask);

    if (n <= 0)
        buf[0] = '\0';
    else if ((size_t)n >= len)
        memcpy(buf + len - 4, "...", 4);
}

static int fill_rank(const struct ctx *c, int k, struct bind_rank *r,
                     struct err *err)
{
    hwloc_bitmap_t mask = hwloc_bitmap_alloc();
    int rc = -1;

    memset(r, 0, sizeof *r);
    r->gpu = c->gpu_rel[k];
    r->gpu_pci = c->gpu[k];
    if (!mask) {
        err_set(err, "out of memory");
        goto out;
    }
    bind_mask(c, c->slots[c->rank_slot[k]].place, mask);
    if (hwloc_bitmap_last(mask) >= CPU_SETSIZE) {
        err_set(err, "CPU %d is beyond what a cpu_set_t holds (%d CPUs)",
                hwloc_bitmap_last(mask), CPU_SETSIZE);
        goto out;
    }
    hwloc_cpuset_to_glibc_sched_affinity(c->h, mask, &r->mask, sizeof r->mask);
    cpu_list(mask, r->cpus, sizeof r->cpus);
    topo_gpu_busid(c->t, r->gpu_pci, r->gpu_busid, sizeof r->gpu_busid);
    if (r->gpu_pci >= 0 && c->o->gpu == GPU_BIND_ISOLATE)
        snprintf(r->visible, sizeof r->visible, "%d", r->gpu_pci);
    r->ngpus = r->gpu_pci >= 0;
    if (c->all_gpus)
        fill_all_gpus(c, r);
    rc = 0;
out:
    hwloc_bitmap_free(mask);
    return rc;
}

static int opts_valid(const struct bind_opts *o)
{
    return o->map >= MAP_DEFAULT && o->map <= MAP_HWTHREAD &&
           o->ppr_obj >= OBJ_NODE && o->ppr_obj <= OBJ_PU &&
           (o->map != MAP_PPR || (o->ppr >= 1 && o->ppr <= BIND_PPR_MAX)) &&
           o->pe >= 0 && o->pe <= BIND_PPR_MAX && o->bind >= BIND_DEFAULT &&
           o->bind <= BIND_HWTHREAD && o->gpu >= GPU_BIND_CLOSEST &&
           o->gpu <= GPU_BIND_NONE;
}

int bind_ppr_ranks(const struct topo *t, const struct bind_opts *o)
{
    struct ctx c = { .t = t, .o = o };
    struct err err = { "" };
    long n = 0;

    if (o->map != MAP_PPR || o->ppr_obj == OBJ_NODE || !opts_valid(o))
        return 0;
    c.h = topo_hwloc(t);
    c.core = hwloc_get_nbobjs_by_type(c.h, HWLOC_OBJ_CORE) > 0 && !unit_pu(o)
             ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
    if (build_domains(&c, obj_type(o->ppr_obj), &err) == 0)
        n = (long)o->ppr * c.ndoms;
    ctx_free(&c);
    return n > BIND_RANKS_MAX ? BIND_RANKS_MAX : (int)n;
}

int bind_node(const struct topo *t, int nlocal, const struct bind_opts *o,
              const char *granted, struct bind_rank *out, struct err *err)
{
    struct ctx c = { .t = t, .o = o, .nlocal = nlocal };
    int rc = -1;

    if (nlocal < 1 || nlocal > BIND_RANKS_MAX)
        return err_set(err, "cannot bind %d local ranks (1 to %d)", nlocal,
                       BIND_RANKS_MAX);
    if (!opts_valid(o))
        return err_set(err, "invalid binding options");
    c.h = topo_hwloc(t);
    c.core = hwloc_get_nbobjs_by_type(c.h, HWLOC_OBJ_CORE) > 0 && !unit_pu(o)
             ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
    if (ctx_gpus(&c, granted, err) < 0 || ctx_domains(&c, err) < 0 ||
        ctx_counts(&c, err) < 0 || ctx_shares(&c, err) < 0 ||
        ctx_slots(&c, err) < 0 || ctx_assign(&c, err) < 0)
        goto out;
    for (int k = 0; k < nlocal; k++)
        if (fill_rank(&c, k, &out[k], err) < 0)
            goto out;
    rc = 0;
out:
    ctx_free(&c);
    return rc;
}
