/* options.c - parsing the launcher's options: dlrun's own and the
 * spellings of torchrun, mpirun, mpiexec and horovodrun (the words are in
 * cmd/dialect_table.c).  A word is read whole: -host is mpirun's -host,
 * never -h; --opt=value, --opt value, -opt value and torchrun's
 * underscores (--nproc_per_node) all work. */
#include "options.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "dialect.h"
#include "launchers/launcher.h"
#include "observe/stall.h"

const char options_help[] =
    "Where and how many (default: what the scheduler gave, see `dlrun plan`):\n"
    "  -n, -np, --np N          ranks in all\n"
    "  -N, --nnodes N           use the first N nodes; without a scheduler,\n"
    "                           N or MIN:MAX nodes each started by hand with\n"
    "                           --node-rank or --rdzv-endpoint (man dlrun)\n"
    "      --nproc-per-node N   ranks on each node\n"
    "  -H, --hosts LIST         hosts and slots: h1:4,h2:4 or node[1-4]:4\n"
    "      --hostfile FILE      Open MPI, Horovod or PBS style host file\n"
    "      --alloc NAME         force the allocation source (dlrun check lists them)\n"
    "      --oversubscribe      allow more ranks than slots\n"
    "Rendezvous and environment:\n"
    "      --master-addr ADDR   MASTER_ADDR (default: rank 0's host address)\n"
    "      --master-port PORT   MASTER_PORT (default: agreed, free or derived)\n"
    "      --iface NAME         use this network interface (NCCL/GLOO_SOCKET_IFNAME)\n"
    "      --pmix-rendezvous    under srun --mpi=pmix: rank 0 publishes a free port\n"
    "                           through PMIx (not for MPI programs)\n"
    "  -x, --export VAR[=VAL]   pass or set VAR for every rank\n"
    "      --mpi WHAT           auto (host PMIx for MPI programs), pmix, none,\n"
    "                           srun (srun --mpi=pmix starts the ranks)\n"
    "      --gloo               serve Horovod's Gloo rendezvous (horovodrun --gloo)\n"
    "Binding (hwloc; default in launch mode, see docs/binding.md):\n"
    "      --map-by WHAT        slot, core, socket, numa, ppr:N:socket|numa|node[:PE=n]\n"
    "      --bind-to WHAT       core, numa, socket, none\n"
    "      --gpu-bind WHAT      closest (rank k next to GPU k), isolate, none\n"
    "      --report-bindings    print each rank's CPUs and GPU before launch\n"
    "      --topology SPEC      plan for FILE.xml or synthetic:\"package:2 core:8\"\n"
    "Output and supervision:\n"
    "  -l, --tag-output         prefix each line with [RANK] (also --label)\n"
    "      --output-dir DIR     also write DIR/rank.N/{stdout,stderr}\n"
    "      --ranks-filter LIST  show only these ranks on the console (0,3)\n"
    "      --kill-timeout SECS  SIGTERM, then SIGKILL this much later (10)\n"
    "      --max-restarts N     restart the whole job up to N times on failure\n"
    "      --stall-timeout TIME end a job whose ranks all idle this long (10m),\n"
    "                           with a report of where each rank waits\n"
    "      --summary FILE       write a JSON summary (ranks, codes, times)\n"
    "      --keep-env           do not rewrite SLURM_PROCID etc. for dlrun's ranks\n"
    "      --preflight          check every node first (dlrun check --nodes); run\n"
    "                           only when all pass (--import MOD, --all-pairs)\n"
    "Other nodes (one dlrun agent per node):\n"
    "      --launcher NAME      srun (default inside Slurm), ssh (host lists,\n"
    "                           PBS, NQSV, LSF) or local\n"
    "      --ssh-port PORT      --ssh-user USER  --ssh-identity FILE\n"
    "      --ssh-known-hosts FILE  host keys to trust (~/.ssh/known_hosts)\n"
    "      --ssh-config FILE    instead of ~/.ssh/config\n"
    "      --connect-timeout SECS  per ssh connection (10)\n"
    "      --remote-dlrun PATH  dlrun on the other nodes (this path)\n"
    "      --fanout N           agents one process starts; more form a tree (32)\n"
    "      --heartbeat-timeout SECS  a silent agent or head ends the job (10)\n"
    "      --token-file FILE    one dlrun per node by hand: the group's token\n"
    "      --wdir DIR           the ranks' working directory (this one)\n"
    "  -v, --verbose            print the steps of the start with their times\n"
    "  -h, --help               this text\n"
    "torchrun, mpirun, mpiexec and horovodrun spellings work too (-np, -host,\n"
    "--nproc_per_node, -mca K V, -genv, PROG : PROG, train.py under Python):\n"
    "man dlrun, DIALECTS.\n"
    "Exit codes: the program's; 2 bad usage or input; 126/127 cannot run PROG.\n";

int options_count(const char *opt, const char *s, int min, int max,
                  int *out)
{
    char *end = NULL;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min || v > max) {
        cmd_fail(EXIT_USAGE, "%s %s: expected a whole number from %d to %d",
                 opt, s, min, max);
        return -1;
    }
    *out = (int)v;
    return 0;
}

int options_export(struct options *o, char *x)
{
    char **v = realloc(o->exports, (size_t)(o->nexports + 2) * sizeof *v);

    if (!v || !*x || *x == '=') {
        cmd_fail(EXIT_USAGE, "-x '%s': expected VAR or VAR=VALUE", x);
        if (v)
            o->exports = v;
        return -1;
    }
    o->exports = v;
    v[o->nexports++] = x;
    v[o->nexports] = NULL;
    return 0;
}

/* --stall-timeout 10m */
static int parse_stall(struct options *o, const char *v)
{
    struct err err = { "" };

    if (stall_parse_duration("--stall-timeout", v, &o->stall_timeout_ms,
                             &err) < 0)
        return cmd_fail(EXIT_USAGE, "%s", err.msg), -1;
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
        cmd_fail(EXIT_FAIL, "out of memory");
        return -1;
    }
    for (char *t = strtok_r(copy, ",", &save); t && rc == 0;
         t = strtok_r(NULL, ",", &save))
        rc = options_count("--ranks-filter", t, 0, 1 << 24,
                         &o->ranks_filter[o->nfilter++]);
    if (rc == 0 && o->nfilter == 0) {
        cmd_fail(EXIT_USAGE, "--ranks-filter '%s': expected ranks such as 0,3",
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
        cmd_fail(EXIT_USAGE, "%s", err.msg);
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
            return cmd_fail(EXIT_USAGE, "--launcher %s: no such launcher; "
                            "expected %s", v, launcher_names()), -1;
        r->launcher = l->name;
        return 0;
    }
    case OPT_SSH_PORT:
        return options_count("--ssh-port", v, 1, 65535, &r->ssh_port);
    case OPT_SSH_USER: r->ssh_user = v; return 0;
    case OPT_SSH_IDENTITY: r->ssh_identity = v; return 0;
    case OPT_SSH_KNOWN_HOSTS: r->ssh_known_hosts = v; return 0;
    case OPT_SSH_CONFIG: r->ssh_config = v; return 0;
    case OPT_CONNECT_TIMEOUT:
        return options_count("--connect-timeout", v, 1, 3600,
                           &r->connect_timeout_s);
    case OPT_REMOTE_DLRUN: r->remote_dlrun = v; return 0;
    case OPT_FANOUT: return options_count("--fanout", v, 1, 4096, &r->fanout);
    case OPT_HEARTBEAT:
        return options_count("--heartbeat-timeout", v, 2, 86400,
                           &r->heartbeat_s);
    case OPT_WDIR: o->wdir = v; return 0;
    case OPT_NODE: return options_count("--node", v, 0, 1 << 24, &o->node);
    case OPT_SPAWN: o->spawn = v; return 0;
    case OPT_LIFELINE: o->lifeline = 1; return 0;
    default: return -1;
    }
}

static int parse_mpi(struct options *o, const char *s)
{
    static const char *const names[] = { "auto", "none", "pmix", "srun" };

    for (int i = 0; i < 4; i++)
        if (strcmp(s, names[i]) == 0) {
            o->mpi = (enum mpi_mode)i;
            return 0;
        }
    cmd_fail(EXIT_USAGE, "--mpi '%s': expected auto, pmix, none or srun", s);
    return -1;
}

static int options_one(int c, char *v, struct options *o)
{
    switch (c) {
    case 'n': return options_count("-np", v, 1, 1 << 24, &o->plan.ranks);
    case 'N': return options_count("-N", v, 1, 1 << 24, &o->plan.nodes);
    case OPT_NPROC_PER_NODE: return dialect_nproc(v, &o->plan.per_node);
    case 'H': o->alloc.hosts = v; return 0;
    case OPT_HOSTFILE: o->alloc.hostfile = v; return 0;
    case OPT_MASTER_ADDR: o->rdv.master_addr = v; return 0;
    case OPT_MASTER_PORT:
        return options_count("--master-port", v, 1, 65535,
                           &o->rdv.master_port);
    case OPT_IFACE: o->rdv.iface = v; return 0;
    case OPT_ALLOC: o->alloc.force = v; return 0;
    case 'x': return options_export(o, v);
    case OPT_KEEP_ENV: o->keep_env = 1; return 0;
    case OPT_OVERSUBSCRIBE: o->plan.oversubscribe = 1; return 0;
    case OPT_JSON: o->json = 1; return 0;
    case OPT_RANK: return options_count("--rank", v, 0, 1 << 24, &o->rank);
    case 'l': o->tag_output = 1; return 0;
    case OPT_PMIX_RDV: o->rdv.pmix = 1; return 0;
    case OPT_MAX_RESTARTS:
        return options_count("--max-restarts", v, 0, 1000000,
                           &o->max_restarts);
    case OPT_SUMMARY: o->summary = v; return 0;
    case OPT_MAP_BY: case OPT_BIND_TO: case OPT_GPU_BIND:
        return parse_bind(c, v, o);
    case OPT_REPORT_BINDINGS: o->report_bindings = 1; return 0;
    case OPT_TOPOLOGY: o->topology = v; return 0;
    case OPT_MPI: return parse_mpi(o, v);
    case OPT_OUTPUT_DIR: o->output_dir = v; return 0;
    case OPT_LAUNCHER: case OPT_SSH_PORT: case OPT_SSH_USER:
    case OPT_SSH_IDENTITY: case OPT_SSH_KNOWN_HOSTS: case OPT_CONNECT_TIMEOUT:
    case OPT_REMOTE_DLRUN: case OPT_FANOUT: case OPT_HEARTBEAT: case OPT_WDIR:
    case OPT_NODE: case OPT_SPAWN: case OPT_LIFELINE: case OPT_SSH_CONFIG:
        return options_remote(c, v, o);
    case OPT_RANKS_FILTER: return parse_filter(o, v);
    case OPT_STALL_TIMEOUT: return parse_stall(o, v);
    case OPT_PREFLIGHT: o->preflight = 1; return 0;
    case OPT_VERBOSE: o->verbose = 1; return 0;
    case OPT_PF_IMPORT: o->pf_import = v; return 0;
    case OPT_PF_ALL_PAIRS: o->pf_all_pairs = 1; return 0;
    case OPT_PF_TIMEOUT:
        return options_count("--preflight-timeout", v, 1, 3600,
                             &o->pf_timeout_s);
    case OPT_KILL_TIMEOUT:
        if (options_count("--kill-timeout", v, 0, 86400,
                        &o->kill_timeout_ms) < 0)
            return -1;
        o->kill_timeout_ms *= 1000;
        return 0;
    default: return -1;
    }
}

/* The option word as typed, without its "=value". */
static void word_name(const char *w, char *out, size_t n)
{
    size_t len = strcspn(w, "=");

    snprintf(out, n, "%.*s", (int)(len < n ? len : n - 1), w);
}

static int unknown(const char *w, const char *name, const char *cmd)
{
    const char *near = dialect_suggest(name);
    char shown[80];

    word_name(w, shown, sizeof shown);
    if (near)
        return cmd_fail(EXIT_USAGE, "unknown option '%s'; did you mean %s%s? "
                        "(dlrun %s --help)", shown, near[1] ? "--" : "-",
                        near, cmd);
    return cmd_fail(EXIT_USAGE, "unknown option '%s' (dlrun %s --help)",
                    shown, cmd);
}

/* The table entry for the word argv[*i] (name: its normalized name) and
 * where a letter's value is attached (-n4, -xFOO=1). */
static const struct optdef *find_word(const struct options *o, const char *w,
                                      char *name, size_t n, char **attached)
{
    const char *body = w + (w[1] == '-' ? 2 : 1);
    const struct optdef *d;
    char one[2] = { body[0], '\0' };

    word_name(body, name, n);
    for (char *p = name; *p; p++)
        if (*p == '_')
            *p = '-';
    *attached = NULL;
    d = dialect_find(name, o->dialect);
    if (d || w[1] == '-' || !body[0] || !body[1])
        return d;
    d = dialect_find(one, o->dialect);
    if (!d || d->nargs != 1)
        return NULL;
    *attached = (char *)body + 1 + (body[1] == '=');
    return d;
}

/* --mpi WHAT is dlrun's; horovodrun's --mpi takes no value. */
static int is_mpi_mode(const char *s)
{
    return s && (strcmp(s, "auto") == 0 || strcmp(s, "none") == 0 ||
                 strcmp(s, "pmix") == 0 || strcmp(s, "srun") == 0);
}

/* The values of d from argv at *i (advanced past them). */
static int take_values(const struct optdef *d, int argc, char **argv, int *i,
                       char *attached, char **v)
{
    char *w = argv[*i], *eq = attached ? attached : strchr(w, '=');
    char shown[80];

    word_name(w, shown, sizeof shown);
    (*i)++;
    if (d->nargs == 0) {
        if (eq && !attached)
            return cmd_fail(EXIT_USAGE, "%s takes no value (got '%s')", shown,
                            eq + 1);
        return 0;
    }
    v[0] = eq ? eq + (attached ? 0 : 1) : *i < argc ? argv[(*i)++] : NULL;
    /* -genv NAME VALUE, or NAME=VALUE in one word */
    if (v[0] && d->nargs == 2 && !strchr(v[0], '='))
        v[1] = *i < argc ? argv[(*i)++] : NULL;
    if (!v[0] || (d->nargs == 2 && !strchr(v[0], '=') && !v[1]))
        return cmd_fail(EXIT_USAGE, "missing value for '%s' (it takes %s)",
                        shown, d->nargs == 2 ? "NAME VALUE" : "a value");
    return 0;
}

/* One option word at argv[*i] and its values; *i moves past them.  0, 1
 * for help, or the exit code after printing. */
static int parse_word(struct options *o, int argc, char **argv, int *i,
                      const char *usage)
{
    char name[64], *attached = NULL, *v[2] = { NULL, NULL };
    const struct optdef *d = find_word(o, argv[*i], name, sizeof name,
                                       &attached);
    int c, rc;

    if (!d)
        return unknown(argv[*i], name, argv[0]);
    c = d->code;
    if (c == OPT_MPI && !strchr(argv[*i], '=') &&
        !is_mpi_mode(*i + 1 < argc ? argv[*i + 1] : NULL)) {
        c = OPT_HVD_MPI;    /* horovodrun's flag: the next word is the program */
        (*i)++;
    } else if ((rc = take_values(d, argc, argv, i, attached, v)) != 0) {
        return rc;
    }
    if (c == OPT_HELP)
        return fputs(usage, stdout), 1;
    if (c == OPT_REFUSE || c == OPT_REFUSE_ARG)
        return cmd_fail(EXIT_USAGE, "%s", d->note);
    o->torch.used |= d->torch;
    rc = c < OPT_PER_NODE ? options_one(c, v[0], o)
                          : dialect_option(c, name, v[0], v[1], o);
    return rc < 0 ? EXIT_USAGE : rc;
}

int options_parse(int argc, char **argv, struct options *o, const char *usage)
{
    int i = 1, rc = 0;

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
    while (i < argc && rc == 0) {
        if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        }
        if (argv[i][0] != '-' || !argv[i][1])
            break;      /* the program */
        rc = parse_word(o, argc, argv, &i, usage);
    }
    if (rc != 0)
        goto out;   /* the callers return at once: nothing of o is kept */
    /* mpirun's --map-by ppr:N:node: N ranks on each node */
    if (o->bind.map == MAP_PPR && o->bind.ppr_obj == OBJ_NODE &&
        !o->plan.per_node)
        o->plan.per_node = o->bind.ppr;
    o->bind.oversubscribe = o->plan.oversubscribe;
    o->alloc.want_ranks = o->plan.ranks;
    o->alloc.want_nodes = o->plan.nodes;
    o->alloc.want_per_node = o->plan.per_node;
    o->prog = i;
    rc = dialect_finish(o, argc, argv);
out:
    if (rc != 0)
        options_free(o);
    return rc;
}
