/* options.c - parsing the launcher's options (mpirun, srun and torchrun
 * spellings where one exists). */
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

enum {
    OPT_NPROC_PER_NODE = 256, OPT_HOSTFILE, OPT_MASTER_ADDR, OPT_MASTER_PORT,
    OPT_IFACE, OPT_ALLOC, OPT_KEEP_ENV, OPT_JSON, OPT_OVERSUBSCRIBE, OPT_RANK,
    OPT_OUTPUT_DIR, OPT_RANKS_FILTER, OPT_KILL_TIMEOUT, OPT_PMIX_RDV,
    OPT_MAX_RESTARTS, OPT_SUMMARY, OPT_MAP_BY, OPT_BIND_TO, OPT_GPU_BIND,
    OPT_REPORT_BINDINGS, OPT_TOPOLOGY, OPT_LAUNCHER, OPT_SSH_PORT,
    OPT_SSH_USER, OPT_SSH_IDENTITY, OPT_SSH_KNOWN_HOSTS, OPT_CONNECT_TIMEOUT,
    OPT_REMOTE_DLRUN, OPT_FANOUT, OPT_HEARTBEAT, OPT_WDIR, OPT_NODE, OPT_SPAWN,
    OPT_LIFELINE, OPT_SSH_CONFIG, OPT_RESTART, OPT_MPI,
};

static const struct option longopts[] = {
    { "np", required_argument, NULL, 'n' },
    { "ntasks", required_argument, NULL, 'n' },
    { "nnodes", required_argument, NULL, 'N' },
    { "nodes", required_argument, NULL, 'N' },
    { "nproc-per-node", required_argument, NULL, OPT_NPROC_PER_NODE },
    { "nproc_per_node", required_argument, NULL, OPT_NPROC_PER_NODE },
    { "hosts", required_argument, NULL, 'H' },
    { "host", required_argument, NULL, 'H' },
    { "hostfile", required_argument, NULL, OPT_HOSTFILE },
    { "machinefile", required_argument, NULL, OPT_HOSTFILE },
    { "master-addr", required_argument, NULL, OPT_MASTER_ADDR },
    { "master_addr", required_argument, NULL, OPT_MASTER_ADDR },
    { "master-port", required_argument, NULL, OPT_MASTER_PORT },
    { "master_port", required_argument, NULL, OPT_MASTER_PORT },
    { "iface", required_argument, NULL, OPT_IFACE },
    { "alloc", required_argument, NULL, OPT_ALLOC },
    { "export", required_argument, NULL, 'x' },
    { "keep-env", no_argument, NULL, OPT_KEEP_ENV },
    { "oversubscribe", no_argument, NULL, OPT_OVERSUBSCRIBE },
    { "json", no_argument, NULL, OPT_JSON },
    { "rank", required_argument, NULL, OPT_RANK },
    { "tag-output", no_argument, NULL, 'l' },
    { "label", no_argument, NULL, 'l' },
    { "output-dir", required_argument, NULL, OPT_OUTPUT_DIR },
    { "ranks-filter", required_argument, NULL, OPT_RANKS_FILTER },
    { "kill-timeout", required_argument, NULL, OPT_KILL_TIMEOUT },
    { "pmix-rendezvous", no_argument, NULL, OPT_PMIX_RDV },
    { "max-restarts", required_argument, NULL, OPT_MAX_RESTARTS },
    { "max_restarts", required_argument, NULL, OPT_MAX_RESTARTS },
    { "summary", required_argument, NULL, OPT_SUMMARY },
    { "map-by", required_argument, NULL, OPT_MAP_BY },
    { "bind-to", required_argument, NULL, OPT_BIND_TO },
    { "gpu-bind", required_argument, NULL, OPT_GPU_BIND },
    { "report-bindings", no_argument, NULL, OPT_REPORT_BINDINGS },
    { "topology", required_argument, NULL, OPT_TOPOLOGY },
    { "launcher", required_argument, NULL, OPT_LAUNCHER },
    { "ssh-port", required_argument, NULL, OPT_SSH_PORT },
    { "ssh-user", required_argument, NULL, OPT_SSH_USER },
    { "ssh-identity", required_argument, NULL, OPT_SSH_IDENTITY },
    { "ssh-known-hosts", required_argument, NULL, OPT_SSH_KNOWN_HOSTS },
    { "ssh-config", required_argument, NULL, OPT_SSH_CONFIG },
    { "connect-timeout", required_argument, NULL, OPT_CONNECT_TIMEOUT },
    { "remote-dlrun", required_argument, NULL, OPT_REMOTE_DLRUN },
    { "fanout", required_argument, NULL, OPT_FANOUT },
    { "heartbeat-timeout", required_argument, NULL, OPT_HEARTBEAT },
    { "wdir", required_argument, NULL, OPT_WDIR },
    { "node", required_argument, NULL, OPT_NODE },
    { "spawn", required_argument, NULL, OPT_SPAWN },
    { "lifeline", no_argument, NULL, OPT_LIFELINE },
    { "restart", required_argument, NULL, OPT_RESTART },
    { "mpi", required_argument, NULL, OPT_MPI },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

const char options_help[] =
    "Where and how many (default: what the scheduler gave, see `dlrun plan`):\n"
    "  -n, -np, --np N          ranks in all\n"
    "  -N, --nnodes N           use the first N nodes\n"
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
    "      --summary FILE       write a JSON summary (ranks, codes, times)\n"
    "      --keep-env           do not rewrite SLURM_PROCID etc. for dlrun's ranks\n"
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
    "      --wdir DIR           the ranks' working directory (this one)\n"
    "  -h, --help               this text\n"
    "Exit codes: the program's; 2 bad usage or input; 126/127 cannot run PROG.\n";

static int parse_count(const char *opt, const char *s, int min, int max,
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

static int add_export(struct options *o, char *x)
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

/* "0,3,5": ranks shown on the console. */
static int parse_filter(struct options *o, const char *s)
{
    char *copy = strdup(s), *save = NULL;
    int rc = 0;

    free(o->ranks_filter);
    o->ranks_filter = calloc(strlen(s) / 2 + 1, sizeof *o->ranks_filter);
    o->nfilter = 0;
    if (!copy || !o->ranks_filter) {
        free(copy);
        cmd_fail(EXIT_FAIL, "out of memory");
        return -1;
    }
    for (char *t = strtok_r(copy, ",", &save); t && rc == 0;
         t = strtok_r(NULL, ",", &save))
        rc = parse_count("--ranks-filter", t, 0, 1 << 24,
                         &o->ranks_filter[o->nfilter++]);
    if (rc == 0 && o->nfilter == 0) {
        cmd_fail(EXIT_USAGE, "--ranks-filter '%s': expected ranks such as 0,3",
                 s);
        rc = -1;
    }
    free(copy);
    return rc;
}

static int parse_bind(int c, struct options *o)
{
    struct err err = { "" };
    int rc = c == OPT_MAP_BY ? bind_parse_map_by(optarg, &o->bind, &err) :
             c == OPT_BIND_TO ? bind_parse_bind_to(optarg, &o->bind, &err) :
             bind_parse_gpu_bind(optarg, &o->bind, &err);

    if (rc < 0) {
        cmd_fail(EXIT_USAGE, "%s", err.msg);
        return -1;
    }
    o->bind_given = 1;
    o->bind_arg[c - OPT_MAP_BY] = optarg;   /* the order of the enum */
    return 0;
}

static int options_remote(int c, struct options *o)
{
    struct remote_opts *r = &o->remote;

    switch (c) {
    case OPT_LAUNCHER:
        if (strcmp(optarg, "srun") && strcmp(optarg, "ssh") &&
            strcmp(optarg, "local"))
            return cmd_fail(EXIT_USAGE, "--launcher %s: expected srun, ssh "
                            "or local", optarg), -1;
        r->launcher = optarg;
        return 0;
    case OPT_SSH_PORT:
        return parse_count("--ssh-port", optarg, 1, 65535, &r->ssh_port);
    case OPT_SSH_USER: r->ssh_user = optarg; return 0;
    case OPT_SSH_IDENTITY: r->ssh_identity = optarg; return 0;
    case OPT_SSH_KNOWN_HOSTS: r->ssh_known_hosts = optarg; return 0;
    case OPT_SSH_CONFIG: r->ssh_config = optarg; return 0;
    case OPT_CONNECT_TIMEOUT:
        return parse_count("--connect-timeout", optarg, 1, 3600,
                           &r->connect_timeout_s);
    case OPT_REMOTE_DLRUN: r->remote_dlrun = optarg; return 0;
    case OPT_FANOUT: return parse_count("--fanout", optarg, 1, 4096, &r->fanout);
    case OPT_HEARTBEAT:
        return parse_count("--heartbeat-timeout", optarg, 2, 86400,
                           &r->heartbeat_s);
    case OPT_WDIR: o->wdir = optarg; return 0;
    case OPT_NODE: return parse_count("--node", optarg, 0, 1 << 24, &o->node);
    case OPT_SPAWN: o->spawn = optarg; return 0;
    case OPT_LIFELINE: o->lifeline = 1; return 0;
    case OPT_RESTART:
        return parse_count("--restart", optarg, 0, 1000000, &o->restart);
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

static int options_one(int c, struct options *o)
{
    switch (c) {
    case 'n': return parse_count("-np", optarg, 1, 1 << 24, &o->plan.ranks);
    case 'N': return parse_count("-N", optarg, 1, 1 << 24, &o->plan.nodes);
    case OPT_NPROC_PER_NODE:
        return parse_count("--nproc-per-node", optarg, 1, 65536,
                           &o->plan.per_node);
    case 'H': o->alloc.hosts = optarg; return 0;
    case OPT_HOSTFILE: o->alloc.hostfile = optarg; return 0;
    case OPT_MASTER_ADDR: o->rdv.master_addr = optarg; return 0;
    case OPT_MASTER_PORT:
        return parse_count("--master-port", optarg, 1, 65535,
                           &o->rdv.master_port);
    case OPT_IFACE: o->rdv.iface = optarg; return 0;
    case OPT_ALLOC: o->alloc.force = optarg; return 0;
    case 'x': return add_export(o, optarg);
    case OPT_KEEP_ENV: o->keep_env = 1; return 0;
    case OPT_OVERSUBSCRIBE: o->plan.oversubscribe = 1; return 0;
    case OPT_JSON: o->json = 1; return 0;
    case OPT_RANK: return parse_count("--rank", optarg, 0, 1 << 24, &o->rank);
    case 'l': o->tag_output = 1; return 0;
    case OPT_PMIX_RDV: o->rdv.pmix = 1; return 0;
    case OPT_MAX_RESTARTS:
        return parse_count("--max-restarts", optarg, 0, 1000000,
                           &o->max_restarts);
    case OPT_SUMMARY: o->summary = optarg; return 0;
    case OPT_MAP_BY: case OPT_BIND_TO: case OPT_GPU_BIND:
        return parse_bind(c, o);
    case OPT_REPORT_BINDINGS: o->report_bindings = 1; return 0;
    case OPT_TOPOLOGY: o->topology = optarg; return 0;
    case OPT_MPI: return parse_mpi(o, optarg);
    case OPT_OUTPUT_DIR: o->output_dir = optarg; return 0;
    case OPT_LAUNCHER: case OPT_SSH_PORT: case OPT_SSH_USER:
    case OPT_SSH_IDENTITY: case OPT_SSH_KNOWN_HOSTS: case OPT_CONNECT_TIMEOUT:
    case OPT_REMOTE_DLRUN: case OPT_FANOUT: case OPT_HEARTBEAT: case OPT_WDIR:
    case OPT_NODE: case OPT_SPAWN: case OPT_LIFELINE: case OPT_SSH_CONFIG:
    case OPT_RESTART:
        return options_remote(c, o);
    case OPT_RANKS_FILTER: return parse_filter(o, optarg);
    case OPT_KILL_TIMEOUT:
        if (parse_count("--kill-timeout", optarg, 0, 86400,
                        &o->kill_timeout_ms) < 0)
            return -1;
        o->kill_timeout_ms *= 1000;
        return 0;
    default: return -1;
    }
}

int options_parse(int argc, char **argv, struct options *o, const char *usage)
{
    int c;

    memset(o, 0, sizeof *o);
    o->rank = -1;
    o->kill_timeout_ms = 10000;
    o->node = -1;
    o->remote.connect_timeout_s = 10;
    o->remote.fanout = 32;
    o->remote.heartbeat_s = 10;
    optind = 1;
    opterr = 0;
    for (;;) {
        /* mpirun spells it -np: one dash, two letters */
        if (optind < argc && strcmp(argv[optind], "-np") == 0)
            argv[optind] = "--np";
        c = getopt_long(argc, argv, "+n:N:H:x:hl", longopts, NULL);
        if (c == -1)
            break;
        if (c == 'h') {
            fputs(usage, stdout);
            return 1;
        }
        if (c == '?' || c == ':') {
            return cmd_fail(EXIT_USAGE, "%s: %s '%s' (see dlrun %s --help)",
                            argv[0], c == '?' && (optopt == 0 || strchr("nNHx", optopt) == NULL) ?
                            "unknown option" : "missing value for",
                            argv[optind - 1],
                            argv[0]);
        }
        if (options_one(c, o) < 0)
            return EXIT_USAGE;
    }
    o->bind.oversubscribe = o->plan.oversubscribe;
    o->alloc.want_ranks = o->plan.ranks;
    o->alloc.want_nodes = o->plan.nodes;
    o->alloc.want_per_node = o->plan.per_node;
    o->prog = optind;
    return 0;
}

void options_free(struct options *o)
{
    free(o->exports);
    free(o->ranks_filter);
    o->exports = NULL;
    o->ranks_filter = NULL;
}
