/* dialect_opts.c - what the other tools' option words do in dlrun
 * (dialect_table.c lists them). */
#include "job/dialect.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "where/alloc.h"
#include "util/say.h"

extern char **environ;

/* The CPUs dlrun may run on: this host's slots (taskset narrows them). */
static int cpu_count(void)
{
    cpu_set_t set;
    long n;

    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

int dialect_nproc(const char *s, int *out)
{
    int gpus;

    if (strcmp(s, "cpu") == 0)
        return *out = cpu_count(), 0;
    if (strcmp(s, "gpu") != 0 && strcmp(s, "auto") != 0)
        return optp_int("--nproc-per-node", s, 1, 65536, out);
    gpus = alloc_local_gpu_count(environ);
    if (gpus > 0)
        return *out = gpus, 0;
    if (strcmp(s, "gpu") == 0)
        return say_fail(EXIT_USAGE, "--nproc-per-node gpu: no GPU is visible "
                        "here (CUDA_VISIBLE_DEVICES, /proc/driver/nvidia); "
                        "use a number or cpu"), -1;
    return *out = cpu_count(), 0;
}

/* torchrun's --nnodes N or MIN:MAX; MIN:MAX with MIN < MAX is elastic. */
static int parse_nnodes(struct options *o, const char *s)
{
    const char *colon = strchr(s, ':');
    char min[32];
    int lo, hi;

    snprintf(min, sizeof min, "%.*s", (int)(colon ? colon - s : 31), s);
    if (optp_int("--nnodes", min, 1, 1 << 24, &lo) < 0 ||
        (colon && optp_int("--nnodes", colon + 1, lo, 1 << 24, &hi) < 0))
        return -1;
    /* MIN:MAX with MIN < MAX is elastic: one dlrun per node by hand only
     * (the job refuses it elsewhere) */
    o->plan.nodes = lo;
    o->torch.nnodes_max = colon ? hi : lo;
    return 0;
}

/* torchrun's --redirects/--tee: 0-3, or a map such as 0:1,1:2. */
static int parse_std(const char *name, const char *s, int *out,
                     const int *redirects)
{
    const char *p = s;

    if (s[0] >= '0' && s[0] <= '3' && !s[1])
        return *out = s[0] - '0', 0;
    while (*p) {
        size_t digits = strspn(p, "0123456789");
        if (!digits || p[digits] != ':' || p[digits + 1] < '0' ||
            p[digits + 1] > '3' || (p[digits + 2] && p[digits + 2] != ','))
            return say_fail(EXIT_USAGE, "--%s '%s': expected 0-3 or a map "
                            "such as 0:1,1:2", name, s), -1;
        p += digits + 2 + (p[digits + 2] == ',');
    }
    *out = 0;
    /* --tee's map: the files get every stream anyway */
    if (out != redirects)
        return 0;
    return say_fail(EXIT_USAGE, "--%s '%s': a map per local rank is not "
                    "supported; give one value 0-3 for every rank, or "
                    "--output-dir DIR --ranks-filter LIST (the ranks shown "
                    "on the console)", name, s), -1;
}

/* -mca K V: OMPI_MCA_K=V; -genv NAME VALUE: NAME=VALUE (one word
 * NAME=VALUE too). */
static int export_pair(struct options *o, const char *prefix, char *v1,
                       char *v2)
{
    char *s = NULL;

    if (!v2 && !*prefix)
        return options_export(o, v1);
    if (asprintf(&s, "%s%s%s%s", prefix, v1, v2 ? "=" : "", v2 ? v2 : "") < 0 ||
        !options_keep(o, s))
        return say_fail(EXIT_FAIL, "out of memory"), -1;
    return options_export(o, s);
}

/* Hydra's -genvlist A,B: copy these variables. */
static int export_list(struct options *o, const char *list)
{
    char *copy = options_keep(o, strdup(list)), *save = NULL;

    if (!copy)
        return say_fail(EXIT_FAIL, "out of memory"), -1;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
        if (options_export(o, t) < 0)
            return -1;
    return 0;
}

static int torch_option(int code, const char *name, char *v, struct options *o)
{
    struct torch_opts *t = &o->torch;
    int std;

    switch (code) {
    case OPT_NNODES: return parse_nnodes(o, v);
    case OPT_STANDALONE:
        t->standalone = 1;
        if (!o->alloc.force)
            o->alloc.force = "local";   /* torchrun's: this host alone */
        return 0;
    case OPT_NODE_RANK:
        return optp_int("--node-rank", v, 0, 1 << 24, &t->node_rank);
    case OPT_RDZV_BACKEND: t->rdzv_backend = v; return 0;
    case OPT_RDZV_ENDPOINT: t->rdzv_endpoint = v; return 0;
    case OPT_RDZV_ID: t->run_id = v; return 0;
    case OPT_RDZV_CONF: t->rdzv_conf = v; return 0;
    case OPT_ROLE: t->role = v; return 0;
    case OPT_MODULE: t->module = 1; return 0;
    case OPT_NO_PYTHON: t->no_python = 1; return 0;
    case OPT_RUN_PATH: return 0;    /* python3 runs the path: the same */
    case OPT_LOG_DIR:
        if (!o->output_dir)
            o->output_dir = v;
        return 0;
    case OPT_REDIRECTS: return parse_std(name, v, &t->redirects, &t->redirects);
    case OPT_TEE: return parse_std(name, v, &std, &t->redirects);
    case OPT_LOCAL_ADDR: t->local_addr = v; return 0;
    case OPT_START_METHOD:
        if (strcmp(v, "spawn") && strcmp(v, "fork") && strcmp(v, "forkserver"))
            return say_fail(EXIT_USAGE, "--start-method %s: expected spawn, "
                            "fork or forkserver", v), -1;
        return 0;   /* dlrun starts each rank as a fresh process (spawn) */
    case OPT_MONITOR:
        if (atof(v) <= 0)
            return say_fail(EXIT_USAGE, "--monitor-interval %s: expected "
                            "seconds above 0", v), -1;
        return 0;   /* dlrun hears of a rank's end at once */
    default: return -1;
    }
}

int dialect_option(int code, const char *name, char *v1, char *v2,
                   struct options *o)
{
    char shown[72];

    snprintf(shown, sizeof shown, "-%s", name);
    switch (code) {
    case OPT_PER_NODE:
        return optp_int(shown, v1, 1, 65536, &o->plan.per_node);
    case OPT_MCA: return export_pair(o, "OMPI_MCA_", v1, v2);
    case OPT_GENV:
        if (strcmp(name, "env") == 0)
            o->part_env = "-env";
        return export_pair(o, "", v1, v2);
    case OPT_GENVLIST:
        if (strcmp(name, "envlist") == 0)
            o->part_env = "-envlist";
        return export_list(o, v1);
    case OPT_RANK_BY:
        if (strcmp(v1, "slot") == 0)
            return 0;
        return say_fail(EXIT_USAGE, "%s %s: dlrun numbers ranks in slot "
                        "order, node after node (--rank-by slot); use "
                        "--map-by for placement", shown, v1), -1;
    case OPT_HVD_MPI: o->mpi = MPI_PMIX; return 0;
    case OPT_GLOO: o->gloo = 1; return 0;
    case OPT_TOKEN_FILE: o->token_file = v1; return 0;
    case OPT_START_TIMEOUT:
        return optp_int(shown, v1, 1, 3600, &o->remote.connect_timeout_s);
    case OPT_ACCEPT: return 0;
    default: return torch_option(code, name, v1, o);
    }
}
