/* options.c - the options of run, env and plan: their help text, and
 * the parse (lib/job/runopts.c) with the help printed here. */
#include "options.h"

#include <stdio.h>

#include "where/sched.h"

/* %s: the schedulers whose jobs reach other nodes over ssh, from the
 * scheduler table. */
static const char help_text[] =
    "Where and how many (default: what the scheduler gave, see `dlrun plan`):\n"
    "  -n, -np, --np N          ranks in all\n"
    "  -N, --nnodes N           use the first N nodes; MIN:MAX in an allocation:\n"
    "                           at most MAX, shrinking to MIN after node faults;\n"
    "                           without a scheduler, N or MIN:MAX nodes each\n"
    "                           started by hand with --node-rank or\n"
    "                           --rdzv-endpoint (man dlrun)\n"
    "      --nproc-per-node N   ranks on each node\n"
    "  -H, --hosts LIST         hosts and slots: h1:4,h2:4 or node[1-4]:4\n"
    "      --hostfile FILE      Open MPI, Horovod or PBS style host file\n"
    "      --alloc NAME         force the allocation source (dlrun check lists them)\n"
    "      --oversubscribe      allow more ranks than slots\n"
    "Rendezvous and environment:\n"
    "      --master-addr ADDR   MASTER_ADDR (default: rank 0's host address)\n"
    "      --master-port PORT   MASTER_PORT (default: agreed, free or derived)\n"
    "      --iface NAME         use this network interface (NCCL/GLOO_SOCKET_IFNAME)\n"
    "      --[no-]pmix-rendezvous  under srun --mpi=pmix or mpirun: rank 0 publishes\n"
    "                           a free port through PMIx (default: unless the\n"
    "                           program uses MPI)\n"
    "  -x, --export VAR[=VAL]   pass or set VAR for every rank\n"
    "      --mpi WHAT           auto (host PMIx for MPI programs), pmix, none,\n"
    "                           srun (srun --mpi=pmix starts the ranks)\n"
    "      --gloo               serve Horovod's Gloo rendezvous (horovodrun --gloo)\n"
    "      --tf-config [WHEN]   TF_CONFIG: auto (a program importing tensorflow),\n"
    "                           yes (alone: yes), no\n"
    "Binding (hwloc; default in launch mode, see docs/binding.md):\n"
    "      --map-by WHAT        slot, hwthread, core, socket, numa,\n"
    "                           ppr:N:socket|numa|node|core|hwthread[:PE=n]\n"
    "      --bind-to WHAT       hwthread, core, numa, socket, none\n"
    "      --gpu-bind WHAT      closest (rank k next to GPU k), isolate, none\n"
    "      --report-bindings    print each rank's CPUs and GPU before launch\n"
    "      --topology SPEC      plan for FILE.xml or synthetic:\"package:2 core:8 gpu:4\"\n"
    "Output and supervision:\n"
    "  -l, --tag-output         prefix each line with [RANK] (also --label)\n"
    "      --timestamp-output   prefix each line with the time it came\n"
    "      --output-dir DIR     also write DIR/rank.N/{stdout,stderr}\n"
    "      --ranks-filter LIST  show only these ranks on the console (0,3)\n"
    "      --kill-timeout SECS  SIGTERM, then SIGKILL this much later (10)\n"
    "      --max-restarts N     restart the whole job up to N times on failure\n"
    "      --spares N           hold N of the allocation's nodes in reserve: a\n"
    "                           node fault excludes its node, a spare takes over\n"
    "      --stall-timeout TIME end a job whose ranks all idle this long (10m),\n"
    "                           with a report of where each rank waits\n"
    "      --straggler-factor F name a node F times slower than the median\n"
    "                           (steps/s of dlrun_progress; dlrun status ranks)\n"
    "      --summary FILE       write a JSON summary (ranks, codes, times)\n"
    "      --keep-env           do not rewrite SLURM_PROCID etc. for dlrun's ranks\n"
    "      --no-cgroup          no cgroup of the job's own (DLRUN_CGROUP=0)\n"
    "      --preflight          check every node first (dlrun check --nodes); run\n"
    "                           only when all pass (--import MOD, --all-pairs)\n"
    "Other nodes (one dlrun agent per node):\n"
    "      --launcher NAME      srun (default inside Slurm), ssh (host lists,\n"
    "                           %s) or local\n"
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

const char *options_help(void)
{
    static char text[8192];
    char names[128];

    if (!text[0])
        snprintf(text, sizeof text, help_text,
                 sched_join(names, sizeof names, 1, 0, ", ", ", "));
    return text;
}

int options_parse(int argc, char **argv, struct options *o, const char *usage)
{
    int rc = runopts_parse(argc, argv, o);

    if (rc == 1)
        fputs(usage, stdout);
    return rc;
}
