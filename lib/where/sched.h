/* sched.h - one row per batch scheduler: everything dlrun knows of one
 * (how its jobs are found and read, how an agent finds its node, its
 * script template and directives, how a script is submitted and a job
 * requeued, which launcher starts the agents) is data in its row, and its
 * code is in its own file, lib/where/sched_NAME.c.  Callers test a row's
 * fields, never a scheduler's name.
 *
 * Adding a scheduler: lib/where/sched_NAME.c (its allocation sources and
 * its row), the row's line in sched.c's table, its fixtures
 * (tests/fixtures/NAME, tests/unit/where/t_sched_NAME.c) and its template
 * (templates/NAME.sh.in).  Nothing else names it. */
#ifndef DLRUN_SCHED_H
#define DLRUN_SCHED_H

#include <stddef.h>

#include "where/alloc.h"

/* The per-task variables a scheduler's own launcher sets (srun), which
 * frameworks read themselves (Lightning, submitit, JAX): dlrun rewrites
 * them for each rank it places.  Each a NULL-terminated list of names,
 * set in this order; static. */
struct sched_task_vars {
    const char *const *rank;
    const char *const *local_rank;
    const char *const *node_rank;
    const char *const *size;
    const char *const *tasks_per_node;
};

/* Where a scheduler's sources are probed (its row's probe):
 * TASKS + n: one whose own launcher starts tasks, which carry its
 *   variables (Slurm's srun): after -H, --hostfile and Open MPI, before
 *   PMIx and MPICH (its tasks may carry theirs too);
 * BATCH + n: one that gives nodes only (PBS): after PMIx and MPICH (an
 *   mpirun in its job gives the tasks their own), before this host.
 * n from 0 to 9. */
enum { SCHED_PROBE_TASKS = 10, SCHED_PROBE_BATCH = 30 };

struct sched {
    const char *name;           /* "slurm": --scheduler, sites.yaml's
                                   scheduler, --alloc of a script's head */
    const char *title;          /* "Slurm": in messages */

    /* --- where the job is (lib/where) --- */
    const struct alloc_source *const *sources;  /* NULL-terminated, in
                                   probing order: its job's allocation */
    int probe;                  /* where its sources come among all
                                   (alloc.c): SCHED_PROBE_TASKS + n or
                                   SCHED_PROBE_BATCH + n, the lower first */
    int starts_tasks;           /* its own launcher (srun) starts the tasks
                                   and every node's agent: a script needs
                                   neither mpirun nor a head over SSH */
    const char *job_var;        /* set in every process of its jobs */
    const char *node_var;       /* names the node to a process it started
                                   there (an agent), or NULL: the host name */
    const struct sched_task_vars *task_vars;    /* or NULL: none to rewrite */
    int cgroup_gpus;            /* its jobs may see their GPUs through a
                                   device cgroup, which renumbers
                                   CUDA_VISIBLE_DEVICES from 0: not PCI
                                   indices */
    const char *launcher;       /* the launcher (lib/launchers) that starts
                                   the agents in its jobs: "srun", "ssh" */
    const char *exclude;        /* how to leave nodes out of the next job
                                   ("sbatch/salloc --exclude="), or NULL */
    const char *no_kill;        /* the directive that keeps a job alive
                                   when one of its nodes fails ("--no-kill":
                                   dlrun script --spares), or NULL.  Not
                                   read back: from inside a job no Slurm
                                   command tells it (22.05: neither the
                                   environment nor scontrol show job) */

    /* --- a job that requeues itself without its failed nodes (--spares
     * with no spare left: lib/job/head_requeue.c); each command a
     * NULL-terminated argv in which "{id}" stands for the job id (the
     * value of job_var) and "{nodes}" for the nodes to exclude (a comma
     * list); job_show NULL: its jobs cannot --- */
    const char *const *job_show;    /* prints the job as KEY=VALUE words */
    const char *const *requeueable; /* the words job_show prints, all of
                                       them, for a job that may requeue
                                       itself; NULL-terminated */
    const char *excluded_key;       /* job_show's word of the nodes the job
                                       excludes: "ExcNodeList=" */
    const char *excluded_none;      /* its value when it excludes none */
    const char *const *const *requeue_without;  /* run in order: put the
                                       job back in its queue held, set the
                                       nodes it excludes ({nodes}: those it
                                       excluded before too), release it;
                                       NULL-terminated */

    /* --- its job scripts (lib/scripts, dlrun script and submit) --- */
    const char *template_file;  /* "slurm.sh.in", in the template folders */
    const char *directive;      /* "#SBATCH": what its directive lines start
                                   with (template name {{directive}}) */
    const char *const *submit;  /* the submitter's words before the script,
                                   NULL-terminated: { "sbatch", "--parsable" } */
    int submit_stdin;           /* the submitter reads the script on stdin
                                   (bsub), not as a file argument */
    const char *id_after;       /* the job id follows this text in what the
                                   submitter prints, or NULL: it starts it */
    const char *id_end;         /* the characters that end the job id */
    const char *requeue_signal; /* --requeue's signal when none is given */
    const char *requeue_cmd;    /* requeues the job from its script
                                   (template name {{requeue_command}}), or
                                   NULL: --requeue is refused, because... */
    const char *no_requeue;     /* ...of this ("no PJM command puts a
                                   running job back in its queue ...") */
};

/* The rows, in the order they are listed; NULL-terminated. */
const struct sched *const *sched_all(void);

/* The row called name ("slurm"), or NULL. */
const struct sched *sched_find(const char *name);

/* The scheduler whose job envp is inside (its job_var is set; the first
 * probed of several), or NULL.  envp borrowed. */
const struct sched *sched_of_env(char **envp);

/* The name the scheduler that started this process gave its node: the
 * value of the first row's node_var set in envp (SLURMD_NODENAME), or
 * NULL: none did.  Borrowed from envp. */
const char *sched_node_name(char **envp);

/* The scheduler whose allocation source is called name ("slurm-step"),
 * or NULL. */
const struct sched *sched_of_source(const char *name);

/* The rows' names (titles: their titles) of those with or without
 * starts_tasks (want: 1, 0; -1: all) into buf (size bytes, cut to fit),
 * sep between them and last before the last: "slurm|pbs|nqsv|lsf|pjm",
 * "PBS, NQSV, LSF, PJM", for messages and help texts.  Returns buf. */
const char *sched_join(char *buf, size_t size, int titles, int want,
                       const char *sep, const char *last);

/* The rows' names, "slurm, pbs, nqsv, lsf or pjm", or their titles of
 * those with or without starts_tasks (want: 1, 0; -1: all), "PBS, NQSV,
 * LSF and PJM".  Static text, made once. */
const char *sched_names(void);
const char *sched_titles(int want);

#endif
