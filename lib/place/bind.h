/* bind.h - where each local rank of a node runs: its CPUs and its GPU.
 *
 * Pure: bind_node plans on any topology (this machine, an XML file, a
 * synthetic description) and touches nothing; applying the plan
 * (sched_setaffinity in the child, CUDA_VISIBLE_DEVICES) is the caller's.
 * The rules, the defaults and examples are in docs/binding.md.
 *
 * The pipeline: --map-by splits the node's cores into domains (the node,
 * its sockets, its NUMA nodes, its cores or hardware threads,
 * or by default the places of the ranks' GPUs) and says how many ranks
 * each domain gets; the ranks of a domain share its cores in equal
 * contiguous ranges (PE=n: n cores each); --gpu-bind closest gives local
 * rank k the range inside the domain of GPU k; --bind-to turns the range
 * into the mask (one hardware thread of it, its cores, their NUMA node or
 * socket, or nothing).  Where a rank's share can be less than a
 * core (--map-by ppr:N:core, hwthread, ppr:N:hwthread, --bind-to
 * hwthread) the unit of the shares is the hardware thread, not the core.
 */
#ifndef DLRUN_BIND_H
#define DLRUN_BIND_H

#include <sched.h>
#include <stddef.h>

#include "util/err.h"
#include "place/topo.h"

enum bind_map {
    MAP_DEFAULT,    /* by GPU when GPUs are used, else MAP_SLOT */
    MAP_SLOT,       /* the node's cores in order, shared by all ranks */
    MAP_CORE,       /* one core per rank, in order (PE=1) */
    MAP_SOCKET,     /* ranks round-robin over the sockets */
    MAP_NUMA,       /* ranks round-robin over the NUMA nodes */
    MAP_PPR,        /* ppr ranks on each ppr_obj, in blocks */
    MAP_HWTHREAD,   /* one hardware thread per rank, in order */
};

/* ppr's objects (Open MPI's words: node, socket/package, numa, core,
 * hwthread). */
enum bind_obj { OBJ_NODE, OBJ_SOCKET, OBJ_NUMA, OBJ_CORE, OBJ_PU };

enum bind_to { BIND_DEFAULT, BIND_NONE, BIND_CORE, BIND_NUMA, BIND_SOCKET,
               BIND_HWTHREAD };   /* one hardware thread (PU) of the range */

enum gpu_bind {
    GPU_BIND_CLOSEST,   /* default: rank k runs next to GPU k */
    GPU_BIND_ISOLATE,   /* the same, and CUDA_VISIBLE_DEVICES = GPU k alone */
    GPU_BIND_NONE,      /* GPUs play no part */
};

/* All zero = every default. */
struct bind_opts {
    enum bind_map map;
    enum bind_obj ppr_obj;  /* MAP_PPR: per what */
    int ppr;                /* MAP_PPR: ranks per ppr_obj, >= 1 */
    int pe;                 /* cores per rank (":PE=n"); 0 = an equal share */
    enum bind_to bind;
    enum gpu_bind gpu;
    int oversubscribe;      /* allow more ranks than cores (they share) */
};

#define BIND_PPR_MAX 4096   /* largest N in ppr:N and PE=N */

/* Parse --map-by: slot, hwthread, core, socket (or package), numa, or
 * ppr:N:OBJ with OBJ one of node, socket, numa, core, hwthread; each
 * optionally followed by ":PE=n".  Sets map, ppr_obj, ppr and pe of o and
 * nothing else; o is unchanged on failure.  0 / -1 with err: Open MPI's
 * words dlrun does not do (l3cache and the other caches, node, board,
 * seq, dist) are named as such. */
int bind_parse_map_by(const char *s, struct bind_opts *o, struct err *err);

/* Parse --bind-to: hwthread, core, numa, socket (or package), none.
 * Sets o->bind; unchanged on failure.  0 / -1 with err (Open MPI's cache
 * words named as such). */
int bind_parse_bind_to(const char *s, struct bind_opts *o, struct err *err);

/* Parse --gpu-bind: closest, isolate, none.  Sets o->gpu; unchanged on
 * failure.  0 / -1 with err. */
int bind_parse_gpu_bind(const char *s, struct bind_opts *o, struct err *err);

#define BIND_CPUS_MAX 256

struct bind_rank {
    cpu_set_t mask;             /* for sched_setaffinity; empty = do not bind */
    char cpus[BIND_CPUS_MAX];   /* the mask as a list, "0-8" or "48-55,176-183";
                                   "" when not bound; ends in "..." if cut */
    int gpu;                    /* index among the usable GPUs (cuda:N when
                                   CUDA_VISIBLE_DEVICES lists them), -1 none */
    int gpu_pci;                /* the same GPU's index in PCI order among all
                                   of the node's GPUs, -1 none */
    char gpu_busid[32];         /* "0000:07:00.0", "" none */
    char visible[64];           /* --gpu-bind isolate: CUDA_VISIBLE_DEVICES
                                   when the parent has none (gpu_pci, or
                                   every GPU's for ngpus > 1); "" otherwise
                                   (leave it alone) */
    int ngpus;                  /* GPUs the rank drives: 0, 1, or every
                                   usable GPU when it is the node's only
                                   rank (TF MirroredStrategy, one process
                                   driving all GPUs); gpu is the first */
    char gpu_list[64];          /* ngpus > 1: the usable indices, "0,1,2,3";
                                   "" otherwise */
};

/* Plan nlocal local ranks (local ranks 0..nlocal-1) on one node of
 * topology t.  granted: the GPUs the scheduler granted, as a comma list of
 * indices in PCI order ("2,3", ranges "0-3" too), in the order CUDA will
 * number them; NULL = every GPU of t, "" = none.  out: nlocal entries,
 * caller-provided, all filled on success (contents undefined on failure).
 * Local rank k uses usable GPU k mod their count; a node's only rank
 * uses all of them, on the cores of every one's socket or NUMA node (by
 * default; an explicit --map-by keeps its place).  0 / -1 with err, e.g.
 * "--map-by ppr:4:socket asks for 8 ranks on this node's 2 sockets but 10
 * were planned: ...". */
int bind_node(const struct topo *t, int nlocal, const struct bind_opts *o,
              const char *granted, struct bind_rank *out, struct err *err);

/* The ranks o's --map-by ppr:N:OBJ asks for on a node of topology t (N
 * times the node's OBJs, as bind_node counts them), which is how many
 * mpirun starts when no -np is given; 0 when o is no ppr or per node. */
int bind_ppr_ranks(const struct topo *t, const struct bind_opts *o);

/* CUDA_VISIBLE_DEVICES for rank r under --gpu-bind isolate, into buf (len
 * bytes).  inherited: the CUDA_VISIBLE_DEVICES the ranks would inherit
 * (Slurm sets it), NULL or "" if none.  With inherited, its entry number
 * r->gpu (Slurm's list under cgroups is "0,1" for granted GPUs "4,5"), or
 * its first r->ngpus entries for a rank that drives several;
 * without, r->visible.  "" when r->visible is "" (do not set it).
 * 0 / -1 with err when inherited has too few entries. */
int bind_visible(const struct bind_rank *r, const char *inherited, char *buf,
                 size_t len, struct err *err);

/* One line for --report-bindings, without rank and host, into buf:
 * "cpus 0-8 gpu 0 (0000:07:00.0)", "cpus none gpu none", with
 * " CUDA_VISIBLE_DEVICES=N" under isolate. */
void bind_describe(const struct bind_rank *r, char *buf, size_t len);

/* The options as dlrun flags, "--map-by ppr:4:socket --bind-to core
 * --gpu-bind closest" (defaults shown as "default"), into buf. */
void bind_opts_describe(const struct bind_opts *o, char *buf, size_t len);

#endif
