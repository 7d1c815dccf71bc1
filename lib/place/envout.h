/* envout.h - what one rank's environment gets, for every framework:
 * torchrun's names, Horovod's, TF_CONFIG, JAX's, NCCL/Gloo interface
 * hints, DLRUN_* copies, and (when dlrun places several ranks inside one
 * Slurm task) the per-task SLURM_* variables rewritten to match.
 */
#ifndef DLRUN_ENVOUT_H
#define DLRUN_ENVOUT_H

#include "where/alloc.h"
#include "util/envset.h"
#include "util/err.h"
#include "place/plan.h"
#include "place/rdv.h"

/* The longest NAME=VALUE exec passes (Linux's MAX_ARG_STRLEN, 32 pages):
 * a longer variable fails every exec with E2BIG. */
#define ENVOUT_VAR_MAX (32 * 4096)

struct envout_opts {
    const char *iface;      /* --iface: NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME */
    int keep_env;           /* --keep-env: leave SLURM_* (the scheduler's task
                               variables) alone */
    char **exports;         /* -x VAR[=VAL] entries, NULL-terminated, borrowed */
    char **envp;            /* the environment -x VAR copies from, borrowed */
    int restart;            /* how many times the job was restarted */
    int in_job;             /* inside a scheduler's job (of envp) even if
                               the source is -H (dlrun agent): rewrite its
                               task variables (SLURM_PROCID...) for ranks */
    int max_restarts;       /* --max-restarts */
    /* torchrun's names (torch.distributed.is_torchelastic_launched()) */
    const char *run_id;     /* TORCHELASTIC_RUN_ID; NULL: "none" */
    const char *role;       /* ROLE_NAME; NULL: "default" */
    const char *error_dir;  /* TORCHELASTIC_ERROR_FILE is in DIR
                               (envout_error_file); NULL: not set */
    int omp_threads;        /* OMP_NUM_THREADS when envp has none; 0: no
                               default */
    int tf_config;          /* set TF_CONFIG (every rank as a worker: its
                               size grows with the world; refused past
                               ENVOUT_VAR_MAX) */
    int ompi_names;         /* dlrun hosts the ranks' PMIx server: set Open
                               MPI's OMPI_COMM_WORLD_* too (without a server
                               Open MPI takes them for a launcher's, and
                               MPI_Init fails where it would have run) */
};

/* The file rank writes its failure into (torch's @record) under dir in
 * attempt restart: DIR/attempt.R.rank.N.json into buf (n bytes).  A new
 * name per attempt: an earlier attempt's file is not this one's cause. */
void envout_error_file(const char *dir, int restart, int rank, char *buf,
                       size_t n);

/* Fill out (caller frees with envset_free) with rank's variables.
 * 0 / -1 with err. */
int envout_rank(const struct alloc *a, const struct plan *p, int rank,
                const struct rdv *rdv, const struct envout_opts *o,
                struct envset *out, struct err *err);

/* Horovod's Gloo controller, as horovodrun --gloo sets it for every
 * rank: the rendezvous server at addr:port (HOROVOD_GLOO_RENDEZVOUS_*),
 * HOROVOD_CONTROLLER and HOROVOD_CPU_OPERATIONS "gloo", the interface
 * (HOROVOD_GLOO_IFACE, NCCL_SOCKET_IFNAME) and PYTHONUNBUFFERED=1.  The
 * rank, size, local, cross and HOSTNAME variables come from envout_rank.
 * All strings borrowed.  0 / -1 with err. */
int envout_gloo(const char *addr, int port, const char *iface,
                struct envset *out, struct err *err);

/* Slurm's compressed counts ("2(x3),1") of the ranks per plan node
 * (caller frees). */
char *envout_tasks_per_node(const struct plan *p);

#endif
