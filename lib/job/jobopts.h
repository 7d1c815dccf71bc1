/* jobopts.h - what a job was asked to do: the options of run, env and
 * plan as job/runopts.c parsed them (dlrun's own words and the spellings
 * of torchrun, mpirun, Hydra and horovodrun), and what an agent takes
 * from its head's plan wire. */
#ifndef DLRUN_JOBOPTS_H
#define DLRUN_JOBOPTS_H

#include "where/alloc.h"
#include "place/bind.h"
#include "place/plan.h"
#include "place/rdv.h"

/* Where a spelling applies: argv[0]'s name picks the dialect where two
 * tools spell one word differently (-N, --mpi). */
enum { D_DLRUN = 1, D_TORCHRUN = 2, D_MPIRUN = 4, D_HOROVODRUN = 8,
       D_ALL = 15 };

/* Reaching other nodes: which launcher, ssh settings, the agent tree. */
struct remote_opts {
    const char *launcher;       /* --launcher srun|ssh|local; NULL: detect */
    int ssh_port;               /* --ssh-port; 0: ~/.ssh/config or 22 */
    const char *ssh_user;       /* --ssh-user */
    const char *ssh_identity;   /* --ssh-identity FILE */
    const char *ssh_known_hosts;    /* --ssh-known-hosts FILE */
    const char *ssh_config;     /* --ssh-config FILE */
    int connect_timeout_s;      /* --connect-timeout (10) */
    const char *remote_dlrun;   /* --remote-dlrun PATH; NULL: this path */
    int fanout;                 /* --fanout: agents one process starts (32) */
    int heartbeat_s;            /* --heartbeat-timeout (10) */
};
/* --mpi: who serves MPI programs' PMIx or simple PMI (docs/mpi.md). */
enum mpi_mode { MPI_AUTO, MPI_NONE, MPI_PMIX, MPI_SRUN, MPI_PMI1, MPI_PMI2 };
/* --tf-config: TF_CONFIG when the program is TensorFlow (auto), always,
 * never; job_tf_resolve turns auto into one of the others */
enum { TF_AUTO, TF_YES, TF_NO };

/* torchrun's words (job/dialect_torch.c applies them after parsing). */
struct torch_opts {
    int used;               /* a torchrun word was given: its program
                               convention applies (train.py under Python) */
    int nnodes_max;         /* --nnodes MIN:MAX's MAX, 0 when not given */
    int node_rank;          /* --node-rank, -1 when not given */
    const char *rdzv_backend, *rdzv_endpoint, *rdzv_conf;
    const char *run_id;     /* --rdzv-id: TORCHELASTIC_RUN_ID ("none") */
    const char *role;       /* --role: ROLE_NAME ("default") */
    int standalone;         /* --standalone: this host alone */
    int module;             /* -m: python3 -m PROG */
    int no_python;          /* --no-python: exec PROG as given */
    int redirects;          /* --redirects 0-3 (3: files only) */
    const char *local_addr; /* --local-addr: this node's address for the
                               others (one dlrun per node by hand) */
};

struct options {
    struct alloc_request alloc;
    struct plan_request plan;
    struct rdv_opts rdv;
    int keep_env;
    int json;
    int rank;               /* --rank (env), -1 when not given */
    int tag_output;         /* --tag-output, -l/--label */
    int timestamp_output;   /* --timestamp-output */
    const char *output_dir; /* --output-dir */
    int *ranks_filter;      /* --ranks-filter (owned), nfilter entries */
    int nfilter;
    int kill_timeout_ms;    /* --kill-timeout, default 10 s */
    int max_restarts;       /* --max-restarts */
    int spares;             /* --spares: allocation nodes held in reserve
                               for node faults (the head, lib/place/nodeset.h) */
    long stall_timeout_ms;  /* --stall-timeout, 0: not watched */
    double straggler_factor;    /* --straggler-factor, 0: nobody named */
    int preflight;          /* --preflight: check the nodes first (run);
                               agents: only report this node */
    const char *pf_import;  /* --import MOD: preflight tries it */
    int pf_all_pairs;       /* --all-pairs: every pair, not a ring */
    int pf_timeout_s;       /* --preflight-timeout (60) */
    int verbose;            /* -v: print the steps of the start */
    int no_cgroup;          /* --no-cgroup: no cgroup for the job (the
                               guard's mark alone) */
    struct bind_opts bind;  /* --map-by, --bind-to, --gpu-bind */
    int bind_given;         /* any of them was given */
    int report_bindings;    /* --report-bindings */
    const char *topology;   /* --topology FILE.xml|synthetic:..., or NULL */
    const char *bind_arg[3];    /* the --map-by, --bind-to, --gpu-bind texts */
    const char *summary;    /* --summary FILE */
    struct remote_opts remote;  /* how agents reach other nodes */
    const char *wdir;       /* --wdir: the ranks' working directory */
    /* dlrun agent only (set by the head, hidden from --help) */
    int node;               /* --node: this agent's plan node, -1 unknown */
    const char *spawn;      /* --spawn: plan nodes whose agents it starts */
    int lifeline;           /* --lifeline: stdin is the spawner's lifeline
                               (the secrets first, unless in the env) */
    int spare_agent;        /* --spare-agent: the agent of a spare node
                               held in reserve (--node: its index past the
                               plan's nodes): probe, beat, run nothing */
    char **exports;         /* -x entries (owned array, borrowed strings) */
    int nexports;
    enum mpi_mode mpi;      /* --mpi; cmd_run resolves auto before launch */
    int tf_config;          /* TF_AUTO, TF_YES, TF_NO (--tf-config) */
    int prog;               /* index in argv of the program, argc if none */
    char **progv;           /* the program to run after the dialect's rules
                               (torchrun: train.py under Python); owned
                               array of borrowed strings, NULL if none */
    char **mpmd_first;      /* mpirun's MPMD form: the first part's program
                               (decides --mpi auto); owned array, borrowed
                               strings; NULL otherwise */
    int dialect;            /* D_*: argv[0]'s tool */
    struct torch_opts torch;
    int gloo;               /* horovodrun --gloo: serve Horovod's Gloo
                               rendezvous (HOROVOD_GLOO_*) */
    const char *gloo_rdv;   /* where it is served: "ADDR,PORT,IFACE" (the
                               head's, or for agents the plan wire's) */
    const char *token_file; /* --token-file: the group's token (one dlrun
                               per node by hand) */
    const char *part_env;   /* Hydra's -env or -envlist when given ("-env"):
                               a part's own under MPMD, which dlrun refuses */
    char **strs;            /* owned strings the options point into */
    int nstrs;
};

/* Keep s (malloc'd) until options_free; returns s, or NULL (and frees s)
 * when out of memory. */
char *options_keep(struct options *o, char *s);

/* Free what o owns (not o). */
void options_free(struct options *o);

#endif
