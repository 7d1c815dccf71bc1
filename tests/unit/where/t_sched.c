/* t_sched.c - the table of schedulers (lib/where/sched.c): every row
 * complete, the lookups by name, source and environment, the probing
 * order the rows give alloc.c, and the lists messages print. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "where/sched.h"
#include "fixture.h"
#include "tap.h"

/* The fields every row must fill, and what they must look like. */
static void row_complete(const struct sched *s)
{
    char what[400], path[256];
    size_t nsub = 0, nsrc = 0;
    int sources_ok = 1;

    snprintf(what, sizeof what, "%s: name, title, job variable, launcher",
             s->name ? s->name : "?");
    ok(s->name && *s->name && s->title && *s->title && s->job_var &&
       *s->job_var && s->launcher && *s->launcher, what);
    for (const struct alloc_source *const *src = s->sources; src && *src;
         src++, nsrc++)
        sources_ok &= (*src)->name && (*src)->detect && (*src)->read &&
                      ((*src)->kind == ALLOC_JOB || (*src)->kind == ALLOC_STEP);
    snprintf(what, sizeof what, "%s: sources, each a job's or a step's",
             s->name);
    ok(nsrc > 0 && sources_ok, what);
    snprintf(what, sizeof what, "%s: probed in its tier (starts tasks: %d)",
             s->name, s->starts_tasks);
    ok(s->starts_tasks ? s->probe >= SCHED_PROBE_TASKS &&
                         s->probe < SCHED_PROBE_TASKS + 10
                       : s->probe >= SCHED_PROBE_BATCH &&
                         s->probe < SCHED_PROBE_BATCH + 10, what);
    snprintf(path, sizeof path, "templates/%s", s->template_file);
    snprintf(what, sizeof what, "%s: its template %s is there", s->name, path);
    ok(s->template_file && access(path, R_OK) == 0, what);
    while (s->submit && s->submit[nsub])
        nsub++;
    snprintf(what, sizeof what, "%s: directive, submitter, job id's end",
             s->name);
    ok(s->directive && s->directive[0] == '#' && nsub > 0 && nsub < 6 &&
       s->id_end && *s->id_end, what);
    snprintf(what, sizeof what, "%s: a requeue signal; a requeue command or "
             "why not", s->name);
    ok(s->requeue_signal && *s->requeue_signal &&
       !s->requeue_cmd != !s->no_requeue, what);
    snprintf(what, sizeof what, "%s: requeued without nodes: all or nothing",
             s->name);
    ok(!s->job_show ? !s->requeueable && !s->excluded_key &&
                      !s->requeue_without
                    : s->requeueable && s->excluded_key && s->excluded_none &&
                      s->requeue_without && s->requeue_without[0], what);
}

static void rows(void)
{
    const struct sched *const *all = sched_all();
    int unique = 1;
    size_t n = 0;

    for (; all[n]; n++) {
        row_complete(all[n]);
        for (size_t k = 0; k < n; k++)
            unique &= strcmp(all[k]->name, all[n]->name) != 0 &&
                      all[k]->probe != all[n]->probe;
    }
    ok(n >= 5, "five schedulers at least");
    ok(unique, "names and probes unique");
}

static void lookups(void)
{
    for (const struct sched *const *s = sched_all(); *s; s++) {
        char what[96];
        int found = 1;

        snprintf(what, sizeof what, "%s found by its name and its sources",
                 (*s)->name);
        for (const struct alloc_source *const *src = (*s)->sources; *src;
             src++)
            found &= sched_of_source((*src)->name) == *s &&
                     alloc_source_find((*src)->name) == *src;
        ok(sched_find((*s)->name) == *s && found, what);
    }
    ok(!sched_find("sge") && !sched_find("Slurm") && !sched_find(""),
       "unknown names, other cases: none");
    ok(!sched_of_source("hosts") && !sched_of_source("ompi") &&
       !sched_of_source("local") && !sched_of_source("nope"),
       "the sources of no scheduler");
    ok(sched_find("slurm")->starts_tasks && sched_find("slurm")->node_var &&
       sched_find("slurm")->task_vars, "slurm: starts tasks, names the node, "
       "has task variables");
    ok(!alloc_source_find("nope") && alloc_source_find("local") ==
       &alloc_source_local, "alloc_source_find");
}

static const char *joined(const char *const *names)
{
    static char buf[512];
    size_t len = 0;

    buf[0] = '\0';
    for (; *names && len < sizeof buf; names++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s",
                                len ? " " : "", *names);
    return buf;
}

/* The scheduler and kind alloc_detect finds in env. */
static void detected(const char *const *env, const char *source,
                     const char *sched, enum alloc_kind kind)
{
    struct alloc_request req = { 0 };
    struct alloc a = { 0 };
    struct err err = { "" };
    char **envp = envp_of(env), what[128];
    int rc = alloc_detect(&req, envp, &a, &err);

    snprintf(what, sizeof what, "%s: %s, %s's", env[0], source,
             sched ? sched : "no scheduler");
    if (!ok(rc == 0 && strcmp(a.source, source) == 0 && a.kind == kind &&
            a.sched == (sched ? sched_find(sched) : NULL), what))
        printf("#   rc %d source %s: %s\n", rc, rc ? "-" : a.source, err.msg);
    alloc_free(&a);
    envp_free(envp);
}

static void order(void)
{
    const char *pbs_lsf[] = { "PBS_JOBID=1", "LSB_JOBID=2",
                              "PBS_NODEFILE=/nonexistent", NULL };
    const char *lsf[] = { "LSB_MCPU_HOSTS=h1 2", NULL };
    const char *pjm[] = { "PJM_JOBID=5", NULL };
    const char *step[] = { "SLURM_JOB_ID=1", "SLURM_STEP_ID=0",
                           "SLURM_STEP_NODELIST=n1", "SLURM_STEP_TASKS_PER_NODE=1",
                           "SLURM_STEP_NUM_TASKS=1", "SLURM_PROCID=0",
                           "SLURM_NODEID=0", "SLURM_LOCALID=0", NULL };
    const char *job[] = { "SLURM_JOB_ID=1", "SLURM_JOB_NODELIST=n[1-2]",
                          "PMI_RANK=0", "PMI_SIZE=1", NULL };
    const char *mpich[] = { "PMI_RANK=0", "PMI_SIZE=1", "MPI_LOCALRANKID=0",
                            "MPI_LOCALNRANKS=1", "LSB_MCPU_HOSTS=h1 2", NULL };
    const char *none[] = { "HOME=/", NULL };
    char **e;

    is_str(joined(alloc_source_names()), "hosts hostfile ompi slurm-step "
           "slurm-job flux-task flux-job pmix mpich pbs nqsv pjm lsf local",
           "probing order: the user's, Open MPI, Slurm, Flux, PMIx, MPICH, the "
           "batch schedulers, this host");
    e = envp_of(pbs_lsf);
    ok(sched_of_env(e) == sched_find("pbs"), "in a job of two: the first "
       "probed");
    envp_free(e);
    e = envp_of(none);
    ok(!sched_of_env(e), "in no job: none");
    envp_free(e);
    detected(step, "slurm-step", "slurm", ALLOC_STEP);
    detected(job, "slurm-job", "slurm", ALLOC_JOB);
    detected(mpich, "mpich", NULL, ALLOC_MPIRUN);
    detected(lsf, "lsf", "lsf", ALLOC_JOB);
    detected(pjm, "pjm", "pjm", ALLOC_JOB);
    detected(none, "local", NULL, ALLOC_LOCAL);
}

/* What a Slurm job's GPUs and node name look like to the table's users. */
static void gpus_and_node(void)
{
    const char *job[] = { "SLURM_JOB_ID=1", "SLURM_JOB_NODELIST=n1",
                          "SLURM_JOB_GPUS=2,3", "SLURMD_NODENAME=n1", NULL };
    const char *cvd[] = { "SLURM_JOB_ID=1", "SLURM_JOB_NODELIST=n1",
                          "CUDA_VISIBLE_DEVICES=0,1", NULL };
    struct alloc_request req = { 0 };
    struct alloc a = { 0 };
    struct err err = { "" };
    char **e = envp_of(job);

    ok(alloc_detect(&req, e, &a, &err) == 0 && a.gpus_pci &&
       strcmp(a.gpus, "2,3") == 0 && a.sched->cgroup_gpus,
       "SLURM_JOB_GPUS: physical indices, under a device cgroup");
    is_str(sched_node_name(e), "n1", "the node's name: SLURMD_NODENAME");
    alloc_free(&a);
    envp_free(e);
    e = envp_of(cvd);
    ok(alloc_detect(&req, e, &a, &err) == 0 && !a.gpus_pci && a.gpus,
       "CUDA_VISIBLE_DEVICES in a Slurm job: not physical indices");
    ok(!sched_node_name(e), "no node name: none");
    alloc_free(&a);
    envp_free(e);
}

static void lists(void)
{
    is_str(sched_names(), "slurm, pbs, nqsv, lsf, pjm or flux", "sched_names");
    is_str(sched_titles(0), "PBS, NQSV, LSF and PJM",
           "the titles of those that do not start tasks");
    is_str(sched_titles(1), "Slurm and Flux", "of those that do");
    is_str(sched_titles(-1), "Slurm, PBS, NQSV, LSF, PJM and Flux", "of all");
    {
        char buf[64], tiny[8];

        is_str(sched_join(buf, sizeof buf, 0, -1, "|", "|"),
               "slurm|pbs|nqsv|lsf|pjm|flux", "sched_join: the usage line's");
        is_str(sched_join(buf, sizeof buf, 1, 0, ", ", ", "),
               "PBS, NQSV, LSF, PJM", "sched_join: --launcher's");
        ok(strlen(sched_join(tiny, sizeof tiny, 0, -1, ", ", " or ")) <
           sizeof tiny, "sched_join: cut to fit");
    }
}

int main(void)
{
    rows();
    lookups();
    order();
    gpus_and_node();
    lists();
    return tap_done();
}
