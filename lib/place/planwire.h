/* planwire.h - the head's plan and the job settings its agents need, as
 * one versioned byte string (the head puts it into its broker as
 * dlrun.plan; every agent fetches it with its token).  Agents build their
 * job from it and plan nothing the head already planned; no host list,
 * rank count or -x value goes on an agent's command line, which `ps`
 * shows every user of every node.
 *
 * Format (integers little-endian):
 *   "DLPW"  u32 version (PLANWIRE_VERSION)  u32 length of the fields
 *   fields: u16 id  u32 length  that many bytes
 * A number is a u32 (at most INT_MAX), a text its bytes (no NUL).  Node:
 * u32 ranks, u16 host length, host, u16 login length, login (0: none),
 * u16 address name length, address name (0: none; an ssh alias's HostName).
 * Run: u32 node, u32 ranks: the next ranks, in rank order, are on node.
 * Filter: u32 ranks, n of them.  Nodes, runs, env and names repeat, in
 * order; every other field comes at most once.  A reader refuses another
 * version, unknown fields, lengths that do not add up and a rank table
 * that does not hold together (dlrun-broker(7), THE AGENTS' PLAN).
 *
 * Pure: no sockets, no environment. */
#ifndef DLRUN_PLANWIRE_H
#define DLRUN_PLANWIRE_H

#include <stddef.h>
#include <stdint.h>

#include "where/alloc.h"
#include "util/err.h"
#include "place/plan.h"
#include "util/strv.h"

#define PLANWIRE_VERSION 2
#define PLANWIRE_HEADER 12              /* magic, version, length */
#define PLANWIRE_MAX_NODES ALLOC_MAX_NAMES
#define PLANWIRE_MAX_RANKS (1 << 24)    /* --ranks-filter's bound too */
#define PLANWIRE_MAX_TEXT (128 * 1024)  /* one text: an environment entry */
#define PLANWIRE_MAX_SIZE (256u << 20)  /* the whole (the broker's ceiling) */

/* --mpi as the agents take it: the head resolved auto already; AUTO
 * means "it found no MPI program: host nothing and guard"; PMI1 and PMI2
 * serve the simple PMI wire. */
enum planwire_mpi { PLANWIRE_MPI_NONE, PLANWIRE_MPI_AUTO, PLANWIRE_MPI_PMIX,
                    PLANWIRE_MPI_PMI1, PLANWIRE_MPI_PMI2 };

struct planwire_node {
    char *host;             /* never NULL */
    char *login;            /* user@host's user, or NULL */
    char *addr_name;        /* the name to resolve for the node's address
                               (an ssh alias's HostName), or NULL: host */
    int nranks;             /* > 0 */
};

/* Decoded: every pointer owned (planwire_free).  Filled by a caller to
 * encode: its pointers are the caller's (borrowed by planwire_encode; no
 * planwire_free then).  Zero / NULL: not set. */
struct planwire {
    /* the rank table */
    int nnodes, nranks;
    struct planwire_node *nodes;    /* nnodes */
    int *rank_node;                 /* nranks: each rank's node */
    /* the attempt and the rendezvous */
    int restart, max_restarts;
    char *master_addr, *iface;
    int master_port;
    char *role, *run_id;            /* torchrun's ROLE_NAME, RUN_ID */
    char *gloo_rdv;                 /* horovodrun --gloo: ADDR,PORT,IFACE */
    /* binding inputs: the texts of --map-by, --bind-to, --gpu-bind */
    char *bind_arg[3];
    char *topology;
    int oversubscribe, report_bindings;
    /* the ranks' environment */
    int keep_env, tf_config;      /* tf_config: the head's TF_YES or TF_NO */
    struct strv env;        /* "NAME=VALUE": -x values taken at the head */
    struct strv names;      /* -x NAME that had no value at the head: each
                               node gives its own */
    /* output */
    int tag_output, timestamp_output, redirects;
    char *output_dir;
    int filter_given;       /* --ranks-filter: only ranks_filter on the
                               console (none when nfilter is 0) */
    int *ranks_filter, nfilter;
    /* supervision */
    int kill_timeout_ms, stall_timeout_ms, mpi;
    char *summary;
    /* preflight: the agents only report their nodes */
    int preflight, pf_timeout_s, pf_all_pairs;
    char *pf_import;
    /* other nodes: agents of a tree start more agents over ssh */
    int heartbeat_s, fanout, connect_timeout_s, ssh_port;
    char *ssh_user, *ssh_identity, *ssh_known_hosts, *ssh_config;
    char *remote_dlrun, *wdir;
};

/* Encode the plan p and w's settings (both borrowed; w's rank table is
 * not read: p's is written) into a malloc'd byte string of *len bytes
 * (the caller frees).  NULL with err when they break what a reader checks
 * (an env entry without NAME=, a text over PLANWIRE_MAX_TEXT, a number
 * out of its range), or out of memory. */
uint8_t *planwire_encode(const struct plan *p, const struct planwire *w,
                         size_t *len, struct err *err);

/* Decode len bytes of data (borrowed) into *w (zeroed here; free with
 * planwire_free, also after a failure).  0 / -1 with err naming what is
 * wrong and where (a field's id, the byte offset). */
int planwire_decode(const void *data, size_t len, struct planwire *w,
                    struct err *err);

/* The allocation and the plan of a decoded w, as the head made them:
 * source "hosts", one node per plan node with its ranks as slots and its
 * login; the plan's rank tables from w (self -1, self_node -1).  a and p
 * are zeroed here; free them with alloc_free and plan_free (also after a
 * failure); p's host names borrow a's.  0 / -1 with err. */
int planwire_plan(const struct planwire *w, struct alloc *a, struct plan *p,
                  struct err *err);

/* Free what planwire_decode allocated; w may be NULL. */
void planwire_free(struct planwire *w);

#endif
