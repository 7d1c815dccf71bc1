/* bind.c - see bind.h; the rules are in docs/binding.md.
 *
 * bind_node runs a fixed pipeline on a struct ctx: the GPU of each rank
 * (ctx_gpus), the domains the mapping uses (ctx_domains), how many ranks
 * each gets (ctx_counts), how many cores each of those ranks gets
 * (ctx_shares), the slots, one per rank, in mapping order (ctx_slots),
 * which rank takes which slot (ctx_assign), and the masks (fill_rank).
 */
#include "bind.h"

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
};

static const struct {
    const char *name;
    enum bind_obj obj;
} obj_names[] = {
    { "socket", OBJ_SOCKET }, { "package", OBJ_SOCKET }, { "numa", OBJ_NUMA },
    { "node", OBJ_NODE },
};

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
    if (rc < 0)
        return err_set(err, "--map-by '%.64s': use slot, core, socket, numa or "
                       "ppr:N:socket|numa|node, optionally followed by :PE=n "
                       "(N, n from 1 to %d)", s ? s : "", BIND_PPR_MAX);
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
    };

    for (size_t i = 0; s && i < sizeof names / sizeof names[0]; i++)
        if (strcasecmp(s, names[i].name) == 0) {
            o->bind = names[i].to;
            return 0;
        }
    return err_set(err, "--bind-to '%.64s': use core, numa, socket or none",
                   s ? s : "");
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
    return obj == OBJ_SOCKET ? "socket" : obj == OBJ_NUMA ? "numa" : "node";
}

/* The --map-by value of o, "ppr:4:socket:PE=9", "default". */
static void map_str(const struct bind_opts *o, char *buf, size_t len)
{
    static const char *const names[] = {
        [MAP_DEFAULT] = "default", [MAP_SLOT] = "slot", [MAP_CORE] = "core",
        [MAP_SOCKET] = "socket", [MAP_NUMA] = "numa", [MAP_PPR] = "ppr",
    };
    int n = o->map == MAP_PPR
                ? snprintf(buf, len, "ppr:%d:%s", o->ppr, obj_word(o->ppr_obj))
                : snprintf(buf, len, "%s", names[o->map]);

    if (o->pe && n >= 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, ":PE=%d", o->pe);
}

void bind_opts_describe(const struct bind_opts *o, char *buf, size_t len)
{
    static const char *const to[] = {
        [BIND_DEFAULT] = "default", [BIND_NONE] = "none", [BIND_CORE] = "core",
        [BIND_NUMA] = "numa", [BIND_SOCKET] = "socket",
    };
    static const char *const gpu[] = {
        [GPU_BIND_CLOSEST] = "closest", [GPU_BIND_ISOLATE] = "isolate",
        [GPU_BIND_NONE] = "none",
    };
    char map[64];

    map_str(o, map, sizeof map);
    snprintf(buf, len, "--map-by %s --bind-to %s --gpu-bind %s%s", map,
             to[o->bind], gpu[o->gpu], o->oversubscribe ? " --oversubscribe" : "");
}

void bind_describe(const struct bind_rank *r, char *buf, size_t len)
{
    char gpu[64] = "none";

    if (r->gpu >= 0)
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
    snprintf(buf, len, "%.*s", (int)n, p);
    return 0;
}
