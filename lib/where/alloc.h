/* alloc.h - where dlrun runs: the allocation a scheduler (or the user) gave.
 *
 * Sources are probed in a fixed order (see alloc.c): the user's, Open
 * MPI's, the schedulers' (lib/where/sched.h) and this host's; the first
 * whose detect() says yes reads the allocation.  Every source reads from an
 * environment array (environ-like, "NAME=VALUE"), never from getenv(), so
 * that tests feed it environments captured from real schedulers.
 */
#ifndef DLRUN_ALLOC_H
#define DLRUN_ALLOC_H

#include <stddef.h>

#include "util/err.h"

struct alloc_node {
    char *name;     /* owned */
    int slots;      /* ranks this node takes: tasks (Slurm step) or slots */
    int cpus;       /* CPUs the scheduler granted here, 0 when unknown */
    char *login;    /* owned or NULL: the "user" of "user@host" in a host
                       file or -H: the ssh launcher logs in as this user */
    char *addr_name;    /* owned or NULL (= name): the name to resolve for
                           the node's address, when name is an ssh_config
                           alias: its HostName */
};

/* Set when the scheduler started this process as one task of many
 * (srun, mpirun): which task it is.  *_from name the variables read. */
struct alloc_task {
    int rank, size, local_rank, local_size, node_rank;
    const char *rank_from, *size_from, *local_rank_from, *local_size_from,
        *node_rank_from;            /* static strings */
};

/* What made an allocation: what callers test (its source's name is for
 * people: messages, dlrun env, DLRUN_ALLOC). */
enum alloc_kind {
    ALLOC_OTHER,        /* filled by its caller (a group started by hand) */
    ALLOC_JOB,          /* a scheduler's job (batch script, salloc shell) */
    ALLOC_STEP,         /* one task of many its launcher started (srun) */
    ALLOC_HOSTS,        /* -H (or the head's plan, in an agent) */
    ALLOC_HOSTFILE,     /* --hostfile */
    ALLOC_MPIRUN,       /* one task of mpirun's (Open MPI, MPICH/Hydra),
                           which binds the tasks it starts */
    ALLOC_PMIX,         /* one task of a PMIx server's */
    ALLOC_LOCAL,        /* this host alone: no scheduler's variables */
};

struct sched;

struct alloc {
    const char *source;             /* static: "slurm-step", "pbs", ... */
    enum alloc_kind kind;
    const struct sched *sched;      /* static or NULL: the scheduler whose
                                       job or step it is (lib/where/sched.h) */
    int pmix_map;                   /* its launcher's PMIx server names
                                       every task's node when there is one
                                       (Open MPI's mpirun) */
    char why[256];                  /* the variables or flags that chose it */
    struct alloc_node *nodes;       /* owned, nnodes entries, in order */
    size_t nnodes, nodes_cap;
    int has_task;                   /* 1: task below describes this process */
    struct alloc_task task;
    int *task_node;                 /* owned or NULL: node index of each task */
    int *pmi_node;                  /* owned or NULL: node index of each task
                                       from the launcher's
                                       PMI_process_mapping, when only this
                                       host's name is known (plan_partial) */
    int default_ranks;              /* ranks when no -np given; 0 = all slots */
    int spread_ok;                  /* slots are only the scheduler's task
                                       count (sbatch -N4 --ntasks-per-node=1):
                                       -np may spread evenly beyond them */
    char *jobid, *stepid;           /* owned or NULL */
    char *gpus;                     /* owned or NULL: GPU ids on this node */
    const char *gpus_from;          /* static: the variable they came from */
    int gpus_pci;                   /* gpus are physical indices (PCI
                                       order), even where a device cgroup
                                       renumbers CUDA_VISIBLE_DEVICES */
    size_t *index, index_cap;       /* owned: hash of node names, for merging */
    size_t names_seen;              /* names added, merged or not (capped) */
};

/* Names one allocation may list (after expansion, repeats counted): host
 * files and -H lists cannot make dlrun work or allocate without bound. */
#define ALLOC_MAX_NAMES (1 << 20)

/* What the user asked for on the command line that decides the source. */
struct alloc_request {
    const char *force;              /* --alloc NAME, or NULL */
    const char *hosts;              /* -H list, or NULL */
    const char *hostfile;           /* --hostfile path, or NULL */
    int want_ranks;                 /* -np, 0 when not given */
    int want_nodes;                 /* -N, 0 when not given */
    int want_per_node;              /* --nproc-per-node, 0 when not given */
    int pmi_off;                    /* no PMI_FD session to read the node
                                       layout: the program keeps the
                                       launcher's PMI to itself (an MPI
                                       program), or nothing runs (plan) */
};

/* Probe the sources in order and read the first that applies into *a
 * (caller frees with alloc_free).  envp is borrowed.  0 / -1 with err. */
int alloc_detect(const struct alloc_request *req, char **envp, struct alloc *a,
                 struct err *err);

/* The names accepted by --alloc, in probing order, NULL-terminated. */
const char *const *alloc_source_names(void);

struct alloc_source;

/* The source called name ("slurm-job"), or NULL. */
const struct alloc_source *alloc_source_find(const char *name);

void alloc_free(struct alloc *a);   /* frees members; a may be NULL */

/* Total slots over all nodes. */
int alloc_slots(const struct alloc *a);

/* --- used by the sources (alloc_*.c) --- */

/* The value of NAME in envp, or NULL (borrowed). */
const char *alloc_getenv(char **envp, const char *name);

/* This host's GPUs: as many as CUDA_VISIBLE_DEVICES in envp lists (set
 * and empty: none), else the NVIDIA driver's (/proc/driver/nvidia/gpus),
 * else 0.  One rank per GPU by default; torchrun's --nproc-per-node gpu. */
int alloc_local_gpu_count(char **envp);

/* This task's rank, size and node layout from the PMI-1 server envp
 * names (where/pmic.h's pmic_the: the process's one connection, left
 * open): rank and size the server's, each task's node from its
 * PMI_process_mapping into a->pmi_node (owned by a), the number of nodes
 * into *nnodes, a->task's numbers from them (their *_from name PMI).  1
 * when read, 0 when the server publishes no mapping (a->task has rank
 * and size only), -1 with err. */
int alloc_pmi_layout(char **envp, struct alloc *a, int *nnodes,
                     struct err *err);

/* Parse VALUE of variable NAME as an int in [min, max]; 0 / -1 with err. */
int alloc_getint(char **envp, const char *name, int min, int max, int *out,
                 struct err *err);

/* Append a node (name copied); repeated names are merged into one node
 * with their slots added when merge is set.  Returns the node's index, or
 * -1 with err (also past ALLOC_MAX_NAMES names, and for a name that
 * cannot be a host: see hostname.h; the caller says where it came from).
 * This host's own name (gethostname) goes through alloc_this_host. */
int alloc_add_node(struct alloc *a, const char *name, int slots, int merge,
                   struct err *err);

/* This host's name (gethostname) into buf; "localhost" when the kernel's
 * name is not one that alloc_add_node takes. */
void alloc_this_host(char *buf, size_t size);

/* Nodes from a Slurm-style hostlist and tasks-per-node string; checks that
 * the counts agree and sum to ntasks (ntasks < 0: no check).  tpn NULL
 * means one slot per node.  The names of the variables are used in
 * messages.  0 / -1 with err. */
int alloc_add_hostlist(struct alloc *a, const char *list, const char *list_var,
                       const char *tpn, const char *tpn_var, int ntasks,
                       const char *ntasks_var, struct err *err);

/* Read a host file (see hostfile.h) into a.  0 / -1 with err. */
int alloc_read_hostfile(const char *path, struct alloc *a, struct err *err);

/* Each source: detect() returns 1 when its variables are present;
 * read() fills a (zeroed by the caller, source, kind, sched and pmix_map
 * set from the source's). */
struct alloc_source {
    const char *name;
    enum alloc_kind kind;
    int pmix_map;
    int (*detect)(const struct alloc_request *req, char **envp);
    int (*read)(const struct alloc_request *req, char **envp, struct alloc *a,
                struct err *err);
};

/* The sources that are no scheduler's; each scheduler's are in its row. */
extern const struct alloc_source alloc_source_hosts, alloc_source_hostfile,
    alloc_source_pmix, alloc_source_ompi, alloc_source_mpich,
    alloc_source_local;

#endif
