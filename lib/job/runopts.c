/* runopts.c - reading the options of run, env and plan (runopts.h):
 * lib/util/optparse with the table of every tool's words
 * (job/dialect_table.c); dlrun's own words are set here, the other tools'
 * in job/dialect_opts.c. */
#include "job/runopts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job/dialect.h"
#include "launchers/launcher.h"
#include "observe/stall.h"
#include "util/say.h"

/* The length of x's NAME (before any '='), a valid environment variable
 * name: a letter or '_', then letters, digits and '_'; else 0. */
static size_t env_name_len(const char *x)
{
    size_t n = 0;

    if (*x != '_' && !((*x | 0x20) >= 'a' && (*x | 0x20) <= 'z'))
        return 0;
    while (x[n] == '_' || (x[n] >= '0' && x[n] <= '9') ||
           ((x[n] | 0x20) >= 'a' && (x[n] | 0x20) <= 'z'))
        n++;
    return !x[n] || x[n] == '=' ? n : 0;
}

int options_export(struct options *o, char *x)
{
    char **v = realloc(o->exports, (size_t)(o->nexports + 2) * sizeof *v);

    if (v)
        o->exports = v;
    if (!v || !*x || *x == '=')
        return say_fail(EXIT_USAGE, "-x '%s': expected VAR or VAR=VALUE", x),
               -1;
    if (!env_name_len(x))
        return say_fail(EXIT_USAGE, "-x '%s': '%.*s' is not an environment "
                        "variable name (letters, digits and _, not starting "
                        "with a digit)", x, (int)strcspn(x, "="), x), -1;
    v[o->nexports++] = x;
    v[o->nexports] = NULL;
    return 0;
}

void runopts_warn_exports(const struct options *o)
{
    for (int i = 0; i < o->nexports; i++)
        if (!strchr(o->exports[i], '=') && !getenv(o->exports[i]))
            say("warning: could not find environment variable \"%s\" "
                "(-x %s)", o->exports[i], o->exports[i]);
}

/* --stall-timeout 10m */
static int parse_stall(struct options *o, const char *v)
{
    struct err err = { "" };

    if (stall_parse_duration("--stall-timeout", v, &o->stall_timeout_ms,
                             &err) < 0)
        return say_fail(EXIT_USAGE, "%s", err.msg), -1;
    return 0;
}

/* --straggler-factor 1.5: a number above 1, at most 1000. */
static int parse_straggler(struct options *o, const char *v)
{
    char *end = NULL;
    double f = strtod(v, &end);

    if (end == v || *end || !(f > 1.0 && f <= 1000.0))
        return say_fail(EXIT_USAGE, "--straggler-factor '%s': not a number "
                        "above 1 (how many times slower than the median a "
                        "node is named, e.g. 1.5)", v), -1;
    o->straggler_factor = f;
    return 0;
}

/* "0,3,5": ranks shown on the console. */
static int parse_filter(struct options *o, const char *s)
{
    char *copy = strdup(s), *save = NULL;
    int rc = 0;

    free(o->ranks_filter);
    o->ranks_filter = calloc(strlen(s) / 2 + 1, sizeof *o->ranks_filter);
    o->nfilter = 0;
    /* "none": no rank on the console (what the head passes its agents
     * for torchrun's --redirects 3 with --log-dir) */
    if (o->ranks_filter && strcmp(s, "none") == 0)
        return free(copy), 0;
    if (!copy || !o->ranks_filter) {
        free(copy);
        say_fail(EXIT_FAIL, "out of memory");
        return -1;
    }
    for (char *t = strtok_r(copy, ",", &save); t && rc == 0;
         t = strtok_r(NULL, ",", &save))
        rc = optp_int("--ranks-filter", t, 0, 1 << 24,
                      &o->ranks_filter[o->nfilter++]);
    if (rc == 0 && o->nfilter == 0) {
        say_fail(EXIT_USAGE, "--ranks-filter '%s': expected ranks such as 0,3",
                 s);
        rc = -1;
    }
    free(copy);
    return rc;
}

static int parse_bind(int c, char *v, struct options *o)
{
    struct err err = { "" };
    int rc = c == OPT_MAP_BY ? bind_parse_map_by(v, &o->bind, &err) :
             c == OPT_BIND_TO ? bind_parse_bind_to(v, &o->bind, &err) :
             bind_parse_gpu_bind(v, &o->bind, &err);

    if (rc < 0) {
        say_fail(EXIT_USAGE, "%s", err.msg);
        return -1;
    }
    o->bind_given = 1;
    o->bind_arg[c - OPT_MAP_BY] = v;   /* the order of the enum */
    return 0;
}

static int options_remote(int c, char *v, struct options *o)
{
    struct remote_opts *r = &o->remote;

    switch (c) {
    case OPT_LAUNCHER: {
        const struct launcher *l = launcher_find(v);   /* Hydra's names too */
        if (!l)
            return say_fail(EXIT_USAGE, "--launcher %s: no such launcher; "
                            "expected %s", v, launcher_names()), -1;
        r->launcher = l->name;
        return 0;
    }
    case OPT_SSH_PORT:
        return optp_int("--ssh-port", v, 1, 65535, &r->ssh_port);
    case OPT_SSH_USER: r->ssh_user = v; return 0;
    case OPT_SSH_IDENTITY: r->ssh_identity = v; return 0;
    case OPT_SSH_KNOWN_HOSTS: r->ssh_known_hosts = v; return 0;
    case OPT_SSH_CONFIG: r->ssh_config = v; return 0;
    case OPT_CONNECT_TIMEOUT:
        return optp_int("--connect-timeout", v, 1, 3600,
                        &r->connect_timeout_s);
    case OPT_REMOTE_DLRUN: r->remote_dlrun = v; return 0;
    case OPT_FANOUT: return optp_int("--fanout", v, 1, 4096, &r->fanout);
    case OPT_HEARTBEAT:
        return optp_int("--heartbeat-timeout", v, 2, 86400,
                        &r->heartbeat_s);
    case OPT_WDIR: o->wdir = v; return 0;
    case OPT_NODE: return optp_int("--node", v, 0, 1 << 24, &o->node);
    case OPT_SPAWN: o->spawn = v; return 0;
    case OPT_LIFELINE: o->lifeline = 1; return 0;
    case OPT_SPARE_AGENT: o->spare_agent = 1; return 0;
    default: return -1;
    }
}

static int parse_mpi(struct options *o, const char *s)
{
    static const char *const names[] = { "auto", "none", "pmix", "srun",
                                         "pmi1", "pmi2" };

    for (int i = 0; i < 6; i++)
        if (strcmp(s, names[i]) == 0) {
            o->mpi = (enum mpi_mode)i;
            return 0;
        }
    say_fail(EXIT_USAGE, "--mpi '%s': expected auto, pmix, pmi1, pmi2, none or "
             "srun", s);
    return -1;
}

/* --tf-config [auto|yes|no]: alone, yes */
static int parse_tf(struct options *o, const char *s)
{
    static const char *const names[] = { "auto", "yes", "no" };

    for (int i = 0; s && i < 3; i++)
        if (strcmp(s, names[i]) == 0) {
            o->tf_config = i;
            return 0;
        }
    if (!s || !*s) {
        o->tf_config = TF_YES;
        return 0;
    }
    say_fail(EXIT_USAGE, "--tf-config '%s': expected auto, yes or no", s);
    return -1;
}

/* --kill-timeout SECS */
static int parse_kill(struct options *o, const char *v)
{
    if (optp_int("--kill-timeout", v, 0, 86400, &o->kill_timeout_ms) < 0)
        return -1;
    o->kill_timeout_ms *= 1000;
    return 0;
}

static int options_one(int c, char *v, struct options *o)
{
    switch (c) {
    case 'n': return optp_int("-np", v, 1, 1 << 24, &o->plan.ranks);
    case 'N': return optp_int("-N", v, 1, 1 << 24, &o->plan.nodes);
    case OPT_NPROC_PER_NODE: return dialect_nproc(v, &o->plan.per_node);
    case 'H': o->alloc.hosts = v; return 0;
    case OPT_HOSTFILE: o->alloc.hostfile = v; return 0;
    case OPT_MASTER_ADDR: o->rdv.master_addr = v; return 0;
    case OPT_MASTER_PORT:
        return optp_int("--master-port", v, 1, 65535,
                        &o->rdv.master_port);
    case OPT_IFACE: o->rdv.iface = v; return 0;
    case OPT_ALLOC: o->alloc.force = v; return 0;
    case 'x': return options_export(o, v);
    case OPT_KEEP_ENV: o->keep_env = 1; return 0;
    case OPT_OVERSUBSCRIBE: o->plan.oversubscribe = 1; return 0;
    case OPT_JSON: o->json = 1; return 0;
    case OPT_RANK: return optp_int("--rank", v, 0, 1 << 24, &o->rank);
    case 'l': o->tag_output = 1; return 0;
    case OPT_TIMESTAMP: o->timestamp_output = 1; return 0;
    case OPT_PMIX_RDV: o->rdv.pmix = RDV_PMIX_ON; return 0;
    case OPT_NO_PMIX_RDV: o->rdv.pmix = RDV_PMIX_OFF; return 0;
    case OPT_MAX_RESTARTS:
        return optp_int("--max-restarts", v, 0, 1000000,
                        &o->max_restarts);
    case OPT_SPARES:
        return optp_int("--spares", v, 0, 1000000, &o->spares);
    case OPT_SUMMARY: o->summary = v; return 0;
    case OPT_MAP_BY: case OPT_BIND_TO: case OPT_GPU_BIND:
        return parse_bind(c, v, o);
    case OPT_REPORT_BINDINGS: o->report_bindings = 1; return 0;
    case OPT_TOPOLOGY: o->topology = v; return 0;
    case OPT_MPI: return parse_mpi(o, v);
    case OPT_TF_CONFIG: return parse_tf(o, v);
    case OPT_OUTPUT_DIR: o->output_dir = v; return 0;
    case OPT_LAUNCHER: case OPT_SSH_PORT: case OPT_SSH_USER:
    case OPT_SSH_IDENTITY: case OPT_SSH_KNOWN_HOSTS: case OPT_CONNECT_TIMEOUT:
    case OPT_REMOTE_DLRUN: case OPT_FANOUT: case OPT_HEARTBEAT: case OPT_WDIR:
    case OPT_NODE: case OPT_SPAWN: case OPT_LIFELINE: case OPT_SPARE_AGENT:
    case OPT_SSH_CONFIG:
        return options_remote(c, v, o);
    case OPT_RANKS_FILTER: return parse_filter(o, v);
    case OPT_STALL_TIMEOUT: return parse_stall(o, v);
    case OPT_STRAGGLER: return parse_straggler(o, v);
    case OPT_PREFLIGHT: o->preflight = 1; return 0;
    case OPT_NO_CGROUP: o->no_cgroup = 1; return 0;
    case OPT_VERBOSE: o->verbose = 1; return 0;
    case OPT_PF_IMPORT: o->pf_import = v; return 0;
    case OPT_PF_ALL_PAIRS: o->pf_all_pairs = 1; return 0;
    case OPT_PF_TIMEOUT:
        return optp_int("--preflight-timeout", v, 1, 3600,
                        &o->pf_timeout_s);
    case OPT_KILL_TIMEOUT: return parse_kill(o, v);
    default: return -1;
    }
}

/* One option from the parser: dlrun's own set here, the others' in
 * dialect_opts.c.  0, 1 for help, or the exit code after saying why. */
static int run_option(void *ctx, const struct optp_hit *h)
{
    struct options *o = ctx;
    int c = h->opt->code, rc;

    if (c == OPT_MPI && !h->v[0])
        c = OPT_HVD_MPI;    /* horovodrun's flag: the next word is the program */
    if (c == OPT_HELP)
        return 1;
    if (h->opt->flags & DIALECT_TORCH)
        o->torch.used = 1;
    /* Hydra's own spellings (dlrun's are --hosts, --ppn): its dealing */
    if (strcmp(h->shown, "-hosts") == 0 || strcmp(h->shown, "-ppn") == 0)
        o->plan.deal = 1;
    rc = c < OPT_PER_NODE ? options_one(c, h->v[0], o)
                          : dialect_option(c, h->name, h->v[0], h->v[1], o);
    return rc < 0 ? EXIT_USAGE : rc;
}

static void defaults(struct options *o)
{
    memset(o, 0, sizeof *o);
    o->rank = -1;
    o->kill_timeout_ms = 10000;
    o->node = -1;
    o->remote.connect_timeout_s = 10;
    o->remote.fanout = 32;
    o->remote.heartbeat_s = 10;
    o->pf_timeout_s = 60;
    o->torch.node_rank = -1;
    o->dialect = dialect_of(program_invocation_name);
}

int runopts_parse(int argc, char **argv, struct options *o)
{
    struct optp p = { dialect_table, argv[0], 0, 0, NULL };
    int first = argc, rc;

    defaults(o);
    p.dialect = (unsigned)o->dialect;
    rc = optp_parse(&p, argc, argv, &first, run_option, o);
    if (rc != 0)
        goto out;   /* the callers return at once: nothing of o is kept */
    /* mpirun's --map-by ppr:N:node: N ranks on each node */
    if (o->bind.map == MAP_PPR && o->bind.ppr_obj == OBJ_NODE &&
        !o->plan.per_node)
        o->plan.per_node = o->bind.ppr;
    o->plan.oversubscribe |= o->plan.deal;  /* Hydra never refuses */
    o->bind.oversubscribe = o->plan.oversubscribe;
    o->alloc.want_ranks = o->plan.ranks;
    /* --nnodes MIN:MAX asks for up to MAX (an interactive step's one task
     * then means the job's allocation, as with -N MAX) */
    o->alloc.want_nodes = o->torch.nnodes_max > o->plan.nodes ?
                          o->torch.nnodes_max : o->plan.nodes;
    o->alloc.want_per_node = o->plan.per_node;
    o->prog = first;
    rc = dialect_finish(o, argc, argv);
out:
    if (rc != 0)
        options_free(o);
    return rc;
}
