/* dialect.h - the spellings of torchrun, Open MPI's mpirun, MPICH's
 * mpiexec (Hydra) and horovodrun next to dlrun's own: one table of every
 * option word (dialect_table.c, read by lib/util/optparse), what the other
 * tools' words do (dialect_opts.c) and the torchrun rules applied after
 * parsing (dialect_torch.c, dialect_mpmd.c).  Only job/runopts.c uses
 * this. */
#ifndef DLRUN_DIALECT_H
#define DLRUN_DIALECT_H

#include "job/jobopts.h"
#include "util/optparse.h"

/* Option codes: short letters stand for themselves. */
enum {
    OPT_NPROC_PER_NODE = 256, OPT_HOSTFILE, OPT_MASTER_ADDR, OPT_MASTER_PORT,
    OPT_IFACE, OPT_ALLOC, OPT_KEEP_ENV, OPT_JSON, OPT_OVERSUBSCRIBE, OPT_RANK,
    OPT_OUTPUT_DIR, OPT_RANKS_FILTER, OPT_KILL_TIMEOUT, OPT_PMIX_RDV,
    OPT_NO_PMIX_RDV,
    OPT_MAX_RESTARTS, OPT_SUMMARY, OPT_MAP_BY, OPT_BIND_TO, OPT_GPU_BIND,
    OPT_REPORT_BINDINGS, OPT_TOPOLOGY, OPT_LAUNCHER, OPT_SSH_PORT,
    OPT_SSH_USER, OPT_SSH_IDENTITY, OPT_SSH_KNOWN_HOSTS, OPT_CONNECT_TIMEOUT,
    OPT_REMOTE_DLRUN, OPT_FANOUT, OPT_HEARTBEAT, OPT_WDIR, OPT_NODE, OPT_SPAWN,
    OPT_LIFELINE, OPT_SPARE_AGENT, OPT_SSH_CONFIG, OPT_MPI, OPT_STALL_TIMEOUT,
    OPT_PREFLIGHT, OPT_PF_IMPORT, OPT_PF_ALL_PAIRS, OPT_PF_TIMEOUT,
    OPT_VERBOSE, OPT_TIMESTAMP, OPT_TF_CONFIG, OPT_NO_CGROUP,
    OPT_SPARES, OPT_STRAGGLER,
    /* other tools' spellings */
    OPT_PER_NODE,       /* -npernode, -ppn, mpirun's -N: ranks per node */
    OPT_NNODES,         /* --nnodes N or torchrun's MIN:MAX */
    OPT_STANDALONE, OPT_NODE_RANK, OPT_RDZV_BACKEND, OPT_RDZV_ENDPOINT,
    OPT_RDZV_ID, OPT_RDZV_CONF, OPT_ROLE, OPT_MODULE, OPT_NO_PYTHON,
    OPT_RUN_PATH, OPT_LOG_DIR, OPT_REDIRECTS, OPT_TEE, OPT_LOCAL_ADDR,
    OPT_START_METHOD, OPT_MONITOR,
    OPT_MCA,            /* -mca K V: OMPI_MCA_K=V for the ranks */
    OPT_GENV,           /* Hydra's -genv/-env NAME VALUE (or NAME=VALUE) */
    OPT_GENVLIST,       /* Hydra's -genvlist A,B: copy these */
    OPT_RANK_BY, OPT_HVD_MPI, OPT_GLOO, OPT_START_TIMEOUT,
    OPT_TOKEN_FILE,     /* one dlrun per node by hand: the group's token */
    OPT_ACCEPT,         /* accepted, nothing to do here (the note says why) */
    OPT_REFUSED,        /* OPTP_REFUSE: the note names the dlrun way */
    OPT_HELP = 'h',
};

/* An entry's flag (struct optp_opt): a torchrun word, whose program
 * convention applies (train.py under Python). */
#define DIALECT_TORCH OPTP_USER

/* Every option word of run, env and plan, in the dialects D_* where each
 * meaning holds; ended by a NULL name. */
extern const struct optp_opt dialect_table[];

/* The dialect named by argv[0]'s file name (mpirun, mpiexec, torchrun,
 * horovodrun), D_DLRUN for any other name. */
int dialect_of(const char *argv0);

/* torchrun's --nproc-per-node N|auto|gpu|cpu into a count; 0 / -1 after
 * saying why. */
int dialect_nproc(const char *s, int *out);

/* After the options: torchrun's rules (--nnodes MIN:MAX, one node by hand,
 * the program under Python) and mpirun's MPMD form.  argv+prog is the
 * program; o->progv gets the argv to run (owned array, borrowed strings
 * and o->strs).  0 or the exit code after saying why. */
int dialect_finish(struct options *o, int argc, char **argv);

/* mpirun's MPMD form in the program words w (n of them): o->progv gets a
 * trampoline that runs each rank's part, o->mpmd_first the first part's
 * program, o->plan.ranks the sum (dialect_mpmd.c).  0 when w is one
 * program, 1 when MPMD, or the exit code (2) after saying why. */
int dialect_mpmd(struct options *o, char **w, int n);

/* The codes from OPT_PER_NODE on (other tools' words), named name, with
 * their values v1, v2 (borrowed from argv or NULL).  0 / -1 after
 * saying why (dialect_opts.c). */
int dialect_option(int code, const char *name, char *v1, char *v2,
                   struct options *o);

/* In job/runopts.c: an -x entry (x borrowed, kept).  0 / -1 after saying
 * why. */
int options_export(struct options *o, char *x);

#endif
