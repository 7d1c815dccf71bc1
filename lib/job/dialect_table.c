/* dialect_table.c - every option word dlrun reads: its own, torchrun's,
 * Open MPI's mpirun, MPICH's mpiexec (Hydra) and horovodrun's.  A word
 * another tool has and dlrun cannot honour is here too, refused with the
 * dlrun way, so that no line copied from those tools runs wrong. */
#include "job/dialect.h"

#include <string.h>

#define T DIALECT_TORCH
#define R OPTP_REFUSE

const struct optp_opt dialect_table[] = {
    /* how many, where */
    { "np", 'n', 1, D_ALL, 0, NULL },
    { "n", 'n', 1, D_ALL, 0, NULL },
    { "c", 'n', 1, D_MPIRUN, 0, NULL },
    { "ntasks", 'n', 1, D_ALL, 0, NULL },
    { "N", 'N', 1, D_ALL & ~D_MPIRUN, 0, NULL },
    { "N", OPT_PER_NODE, 1, D_MPIRUN, 0, NULL },
    { "nodes", 'N', 1, D_ALL, 0, NULL },
    { "nnodes", OPT_NNODES, 1, D_ALL, T, NULL },
    { "nproc-per-node", OPT_NPROC_PER_NODE, 1, D_ALL, T, NULL },
    { "npernode", OPT_PER_NODE, 1, D_ALL, 0, NULL },
    { "ppn", OPT_PER_NODE, 1, D_ALL, 0, NULL },
    { "ntasks-per-node", OPT_PER_NODE, 1, D_ALL, 0, NULL },
    { "H", 'H', 1, D_ALL, 0, NULL },
    { "hosts", 'H', 1, D_ALL, 0, NULL },
    { "host", 'H', 1, D_ALL, 0, NULL },
    { "hostfile", OPT_HOSTFILE, 1, D_ALL, 0, NULL },
    { "machinefile", OPT_HOSTFILE, 1, D_ALL, 0, NULL },
    { "f", OPT_HOSTFILE, 1, D_ALL, 0, NULL },
    { "default-hostfile", OPT_HOSTFILE, 1, D_ALL, 0, NULL },
    { "alloc", OPT_ALLOC, 1, D_ALL, 0, NULL },
    { "oversubscribe", OPT_OVERSUBSCRIBE, 0, D_ALL, 0, NULL },
    /* rendezvous, environment */
    { "master-addr", OPT_MASTER_ADDR, 1, D_ALL, 0, NULL },
    { "master-port", OPT_MASTER_PORT, 1, D_ALL, 0, NULL },
    { "iface", OPT_IFACE, 1, D_ALL, 0, NULL },
    { "network-interface", OPT_IFACE, 1, D_ALL, 0, NULL },
    { "pmix-rendezvous", OPT_PMIX_RDV, 0, D_ALL, 0, NULL },
    { "no-pmix-rendezvous", OPT_NO_PMIX_RDV, 0, D_ALL, 0, NULL },
    { "x", 'x', 1, D_ALL, 0, NULL },
    { "export", 'x', 1, D_ALL, 0, NULL },
    { "mca", OPT_MCA, 2, D_ALL, 0, NULL },
    { "gmca", OPT_MCA, 2, D_ALL, 0, NULL },
    { "genv", OPT_GENV, 2, D_ALL, 0, NULL },
    { "env", OPT_GENV, 2, D_ALL, 0, NULL },
    { "genvlist", OPT_GENVLIST, 1, D_ALL, 0, NULL },
    { "envlist", OPT_GENVLIST, 1, D_ALL, 0, NULL },
    { "genvall", OPT_ACCEPT, 0, D_ALL, 0, NULL },
    { "envall", OPT_ACCEPT, 0, D_ALL, 0, NULL },
    /* dlrun's --mpi MODE; without a MODE, horovodrun's flag */
    { "mpi", OPT_MPI, 1, D_ALL & ~D_HOROVODRUN, OPTP_MAYBE,
      "auto,none,pmix,srun" },
    { "mpi", OPT_HVD_MPI, 0, D_HOROVODRUN, 0, NULL },
    { "gloo", OPT_GLOO, 0, D_ALL, 0, NULL },
    { "tf-config", OPT_TF_CONFIG, 1, D_ALL, OPTP_MAYBE, "auto,yes,no" },
    { "keep-env", OPT_KEEP_ENV, 0, D_ALL, 0, NULL },
    /* binding */
    { "map-by", OPT_MAP_BY, 1, D_ALL, 0, NULL },
    { "bind-to", OPT_BIND_TO, 1, D_ALL, 0, NULL },
    { "rank-by", OPT_RANK_BY, 1, D_ALL, 0, NULL },
    { "gpu-bind", OPT_GPU_BIND, 1, D_ALL, 0, NULL },
    { "report-bindings", OPT_REPORT_BINDINGS, 0, D_ALL, 0, NULL },
    { "topology", OPT_TOPOLOGY, 1, D_ALL, 0, NULL },
    /* output, supervision */
    { "l", 'l', 0, D_ALL, 0, NULL },
    { "label", 'l', 0, D_ALL, 0, NULL },
    { "tag-output", 'l', 0, D_ALL, 0, NULL },
    { "prepend-rank", 'l', 0, D_ALL, 0, NULL },
    { "timestamp-output", OPT_TIMESTAMP, 0, D_ALL, 0, NULL },
    { "output-dir", OPT_OUTPUT_DIR, 1, D_ALL, 0, NULL },
    { "output-filename", OPT_OUTPUT_DIR, 1, D_ALL, 0, NULL },
    { "ranks-filter", OPT_RANKS_FILTER, 1, D_ALL, 0, NULL },
    { "kill-timeout", OPT_KILL_TIMEOUT, 1, D_ALL, 0, NULL },
    { "stall-timeout", OPT_STALL_TIMEOUT, 1, D_ALL, 0, NULL },
    { "straggler-factor", OPT_STRAGGLER, 1, D_ALL, 0, NULL },
    { "preflight", OPT_PREFLIGHT, 0, D_ALL, 0, NULL },
    { "no-cgroup", OPT_NO_CGROUP, 0, D_ALL, 0, NULL },
    { "import", OPT_PF_IMPORT, 1, D_ALL, 0, NULL },
    { "all-pairs", OPT_PF_ALL_PAIRS, 0, D_ALL, 0, NULL },
    { "preflight-timeout", OPT_PF_TIMEOUT, 1, D_ALL, 0, NULL },
    { "max-restarts", OPT_MAX_RESTARTS, 1, D_ALL, 0, NULL },
    { "spares", OPT_SPARES, 1, D_ALL, 0, NULL },
    { "summary", OPT_SUMMARY, 1, D_ALL, 0, NULL },
    { "json", OPT_JSON, 0, D_ALL, 0, NULL },
    { "rank", OPT_RANK, 1, D_ALL, 0, NULL },
    { "wdir", OPT_WDIR, 1, D_ALL, 0, NULL },
    { "wd", OPT_WDIR, 1, D_ALL, 0, NULL },
    { "v", OPT_VERBOSE, 0, D_ALL, 0, NULL },
    { "verbose", OPT_VERBOSE, 0, D_ALL, 0, NULL },
    { "q", OPT_ACCEPT, 0, D_ALL, 0, NULL },
    { "quiet", OPT_ACCEPT, 0, D_ALL, 0, NULL },
    { "allow-run-as-root", OPT_ACCEPT, 0, D_ALL, 0, NULL },
    { "h", OPT_HELP, 0, D_ALL, 0, NULL },
    { "help", OPT_HELP, 0, D_ALL, 0, NULL },
    /* other nodes */
    { "launcher", OPT_LAUNCHER, 1, D_ALL, 0, NULL },
    { "bootstrap", OPT_LAUNCHER, 1, D_ALL, 0, NULL },
    { "ssh-port", OPT_SSH_PORT, 1, D_ALL, 0, NULL },
    { "p", OPT_SSH_PORT, 1, D_HOROVODRUN, 0, NULL },
    { "ssh-user", OPT_SSH_USER, 1, D_ALL, 0, NULL },
    { "ssh-identity", OPT_SSH_IDENTITY, 1, D_ALL, 0, NULL },
    { "ssh-identity-file", OPT_SSH_IDENTITY, 1, D_ALL, 0, NULL },
    { "i", OPT_SSH_IDENTITY, 1, D_HOROVODRUN, 0, NULL },
    { "ssh-known-hosts", OPT_SSH_KNOWN_HOSTS, 1, D_ALL, 0, NULL },
    { "ssh-config", OPT_SSH_CONFIG, 1, D_ALL, 0, NULL },
    { "connect-timeout", OPT_CONNECT_TIMEOUT, 1, D_ALL, 0, NULL },
    { "start-timeout", OPT_START_TIMEOUT, 1, D_ALL, 0, NULL },
    { "remote-dlrun", OPT_REMOTE_DLRUN, 1, D_ALL, 0, NULL },
    { "fanout", OPT_FANOUT, 1, D_ALL, 0, NULL },
    { "heartbeat-timeout", OPT_HEARTBEAT, 1, D_ALL, 0, NULL },
    { "node", OPT_NODE, 1, D_ALL, 0, NULL },
    { "spawn", OPT_SPAWN, 1, D_ALL, 0, NULL },
    { "lifeline", OPT_LIFELINE, 0, D_ALL, 0, NULL },
    { "spare-agent", OPT_SPARE_AGENT, 0, D_ALL, 0, NULL },
    { "token-file", OPT_TOKEN_FILE, 1, D_ALL, 0, NULL },
    /* torchrun */
    { "standalone", OPT_STANDALONE, 0, D_ALL, T, NULL },
    { "node-rank", OPT_NODE_RANK, 1, D_ALL, T, NULL },
    { "rdzv-backend", OPT_RDZV_BACKEND, 1, D_ALL, T, NULL },
    { "rdzv-endpoint", OPT_RDZV_ENDPOINT, 1, D_ALL, T, NULL },
    { "rdzv-id", OPT_RDZV_ID, 1, D_ALL, T, NULL },
    { "rdzv-conf", OPT_RDZV_CONF, 1, D_ALL, T, NULL },
    { "role", OPT_ROLE, 1, D_ALL, T, NULL },
    { "m", OPT_MODULE, 0, D_ALL, T, NULL },
    { "module", OPT_MODULE, 0, D_ALL, T, NULL },
    { "no-python", OPT_NO_PYTHON, 0, D_ALL, T, NULL },
    { "run-path", OPT_RUN_PATH, 0, D_ALL, T, NULL },
    { "log-dir", OPT_LOG_DIR, 1, D_ALL, T, NULL },
    { "r", OPT_REDIRECTS, 1, D_ALL, T, NULL },
    { "redirects", OPT_REDIRECTS, 1, D_ALL, T, NULL },
    { "t", OPT_TEE, 1, D_ALL, T, NULL },
    { "tee", OPT_TEE, 1, D_ALL, T, NULL },
    { "local-addr", OPT_LOCAL_ADDR, 1, D_ALL, T, NULL },
    { "start-method", OPT_START_METHOD, 1, D_ALL, T, NULL },
    { "monitor-interval", OPT_MONITOR, 1, D_ALL, T, NULL },
    { "use-env", OPT_ACCEPT, 0, D_ALL, T, NULL },
    /* refused, naming the dlrun way */
    { "max-nodes", OPT_REFUSED, 1, D_ALL, R, "torchrun's --max-nodes "
      "(elastic): give --nnodes MIN:MAX with --rdzv-backend c10d, one dlrun "
      "per node by hand" },
    { "display-map", OPT_REFUSED, 0, D_ALL, R, "mpirun's --display-map: run "
      "`dlrun plan` with the same options to see every rank's host" },
    { "display-allocation", OPT_REFUSED, 0, D_ALL, R, "mpirun's "
      "--display-allocation: `dlrun plan` shows the allocation" },
    { "cpus-per-proc", OPT_REFUSED, 1, D_ALL, R, "mpirun's --cpus-per-proc: "
      "use --map-by ppr:N:socket:PE=n" },
    { "cpus-per-rank", OPT_REFUSED, 1, D_ALL, R, "mpirun's --cpus-per-rank: "
      "use --map-by ppr:N:socket:PE=n" },
    { "prefix", OPT_REFUSED, 1, D_ALL, R, "mpirun's --prefix: dlrun finds "
      "the program by PATH on every node; pass -x PATH or --remote-dlrun" },
    { "preload-binary", OPT_REFUSED, 0, D_ALL, R, "mpirun's --preload-binary: "
      "put the program on a shared file system" },
    { "s", OPT_REFUSED, 0, D_MPIRUN, R, "mpirun's -s (preload binary): put the "
      "program on a shared file system" },
    { "app", OPT_REFUSED, 1, D_ALL, R, "mpirun's --app FILE (MPMD): write "
      "the parts on the command line, -np 1 ./a : -np 1 ./b" },
    { "configfile", OPT_REFUSED, 1, D_ALL, R, "Hydra's -configfile (MPMD): "
      "write the parts on the command line, -np 1 ./a : -np 1 ./b" },
    { "timeout", OPT_REFUSED, 1, D_ALL, R, "mpirun's --timeout: run dlrun "
      "under timeout(1), e.g. timeout 3600 dlrun ..." },
    { "rmk", OPT_REFUSED, 1, D_ALL, R, "Hydra's -rmk: dlrun detects the "
      "scheduler itself; force one with --alloc NAME" },
    { "mpi-args", OPT_REFUSED, 1, D_ALL, R, "horovodrun's --mpi-args: "
      "dlrun starts the ranks itself; pass MCA settings with --mca K V" },
    { "hostfile-format", OPT_REFUSED, 1, D_ALL, R, "--hostfile reads "
      "Open MPI, Horovod and PBS host files as they are" },
    { "check-build", OPT_REFUSED, 0, D_ALL, R, "horovodrun's --check-build: "
      "`dlrun check` shows what dlrun finds here; Horovod's own build: "
      "python3 -c 'import horovod'" },
    { "cb", OPT_REFUSED, 0, D_ALL, R, "horovodrun's -cb (--check-build): "
      "`dlrun check` shows what dlrun finds here" },
    { "disable-cache", OPT_ACCEPT, 0, D_ALL, 0, NULL },
    { "tcp", OPT_ACCEPT, 0, D_ALL, 0, NULL },
    { NULL, 0, 0, 0, 0, NULL },
};

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');

    return s ? s + 1 : p;
}

int dialect_of(const char *argv0)
{
    const char *b = base_name(argv0 ? argv0 : "");

    if (strcmp(b, "mpirun") == 0 || strcmp(b, "mpiexec") == 0 ||
        strcmp(b, "orterun") == 0 || strcmp(b, "mpiexec.hydra") == 0)
        return D_MPIRUN;
    if (strcmp(b, "torchrun") == 0)
        return D_TORCHRUN;
    if (strcmp(b, "horovodrun") == 0)
        return D_HOROVODRUN;
    return D_DLRUN;
}
