#!/bin/sh
# needs: cluster
# t_slurm.sh - dlrun inside real Slurm steps, on the four-node test cluster
# of cluster/cluster.sh (network namespaces node1..node4 on this host).
# Checks that per-task mode derives rank/world/local/node rank from the step,
# that torch's gloo all-reduce runs through it under srun, srun --mpi=pmix and
# sbatch, and that an inconsistent step environment is refused.
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3        # Debian's, the one with torch
use_cluster
NODE1_ADDR=$(getent ahostsv4 node1 | awk 'NR == 1 { print $1 }')

# Nothing here may hang CI: a stuck step is killed and fails its check.

# ranks_ok FILE: the ranks (space-separated) that printed the right sum of 4.
ranks_ok() {
    sed -n 's|^rank \([0-9]*\)/4 .* sum 10 ok$|\1|p' "$1" | sort -n | tr '\n' ' '
}

check_env_json() {
    # Each task prints "SLURM_LOCALID SLURM_NODEID" and then dlrun's JSON, so
    # the checker compares dlrun's answer with Slurm's own per task.  One
    # file per task (%t): srun forwards output in 1 KiB pieces, so long lines
    # from different tasks can interleave on a shared stdout.
    expect_rc "srun -N2 --ntasks-per-node=2 dlrun env --json" 0 \
        within 300 srun -N2 -w "node[1-2]" --ntasks-per-node=2 --output="$TMP/env.%t" \
        sh -c 'printf "%s %s " "$SLURM_LOCALID" "$SLURM_NODEID"; exec "$0" env --json' "$DLRUN"
    cat "$TMP"/env.[0-9]* >"$TMP/env.out"
    expect_rc "env --json of every task agrees with Slurm" 0 \
        "$PY" - "$TMP/env.out" "$NODE1_ADDR" <<'EOF'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
node1 = sys.argv[2]
bad = []
if len(lines) != 4:
    bad.append("want 4 lines, got %d" % len(lines))
objs = []
for ln in lines:
    parts = ln.split(" ", 2)
    if len(parts) != 3:
        bad.append("not 'LOCALID NODEID JSON': %r" % ln); continue
    localid, nodeid, js = parts
    try:
        o = json.loads(js)
    except ValueError as e:
        bad.append("not JSON (%s): %s" % (e, js)); continue
    objs.append(o)
    r = o.get("rank")
    want = {"world_size": 4, "local_world_size": 2, "local_rank": int(localid),
            "node_rank": int(nodeid), "source": "slurm-step"}
    for k, v in want.items():
        if o.get(k) != v:
            bad.append("rank %s: %s is %r, want %r" % (r, k, o.get(k), v))
    env = o.get("env", {})
    for k, v in {"MASTER_ADDR": node1, "RANK": str(r), "WORLD_SIZE": "4"}.items():
        if env.get(k) != v:
            bad.append("rank %s: env %s is %r, want %r" % (r, k, env.get(k), v))
ranks = sorted(o.get("rank") for o in objs)
if ranks != [0, 1, 2, 3]:
    bad.append("ranks are %r, want [0, 1, 2, 3]" % ranks)
if sorted(o.get("node_rank") for o in objs) != [0, 0, 1, 1]:
    bad.append("node ranks are not 0 0 1 1")
for b in bad:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
}

# expect_ranks WHAT FILE: ranks 0..3 all printed the right sum; else show FILE.
expect_ranks() {
    got=$(ranks_ok "$2")
    expect_eq "$1: ranks that summed right" "$got" "0 1 2 3 "
    [ "$got" = "0 1 2 3 " ] || sed 's/^/  | /' "$2"
}

# allreduce WHAT SRUN_ARGS...: four ranks over two nodes, each must say ok.
allreduce() {
    what=$1; shift
    expect_rc "$what" 0 within 600 srun "$@" "$DLRUN" "$PY" "$E2E/allreduce.py"
    expect_ranks "$what" "$TMP/out"
}

allreduce_batch() {
    printf '#!/bin/sh\nsrun "%s" "%s" "%s"\n' "$DLRUN" "$PY" "$E2E/allreduce.py" >"$TMP/job.sh"
    expect_rc "sbatch -N2 --ntasks-per-node=2 --wait (srun dlrun allreduce.py)" 0 \
        within 600 sbatch -N2 --ntasks-per-node=2 --wait -o "$TMP/batch.out" "$TMP/job.sh"
    expect_ranks "sbatch" "$TMP/batch.out"
}

# A step whose SLURM_STEP_NUM_TASKS disagrees with SLURM_STEP_TASKS_PER_NODE
# must be refused with exit 2 and one line on stderr.  --error keeps the
# task's stderr apart from srun's own "task 0: Exited with exit code 2".
refuse_inconsistent() {
    expect_rc "inconsistent step env: exit 2" 2 within 300 srun -N1 -n1 \
        --error="$TMP/task.err" env SLURM_STEP_NUM_TASKS=5 "$DLRUN" env
    expect_eq "inconsistent step env: one line on stderr" \
        "$(wc -l <"$TMP/task.err" | tr -d ' ')" 1
    expect_grep "inconsistent step env: names the variable" \
        'SLURM_STEP_TASKS_PER_NODE\|SLURM_STEP_NUM_TASKS' "$TMP/task.err"
}

# The ports every task got, and where they came from: all equal, and
# through PMIx exactly when srun runs a PMIx server.
check_ports() {
    what=$1 want_from=$2; shift 2
    rm -f "$TMP"/port.*
    expect_rc "$what" 0 within 300 srun "$@" --output="$TMP/port.%t" "$DLRUN" env \
        ${DLRUN_PMIX_ARG:-} --json
    out=$(cat "$TMP"/port.* | "$PY" -c '
import json, sys
objs = [json.loads(l) for l in sys.stdin]
ports = {o["env"]["MASTER_PORT"] for o in objs}
froms = {o["from"]["MASTER_PORT"] for o in objs if o["rank"] != 0}
print(len(objs), len(ports), " | ".join(sorted(froms)))')
    set -- $out
    expect_eq "$what: 4 tasks, one MASTER_PORT" "$1 $2" "4 1"
    case $out in *"$want_from"*) pass "$what: port $want_from" ;;
    *) fail "$what: port not $want_from: $out" ;; esac
}

# Launch mode inside a batch job: dlrun starts the ranks on the one node,
# and frameworks that read SLURM_PROCID see dlrun's ranks.
launch_in_batch() {
    cat >"$TMP/launch.sh" <<EOS
#!/bin/sh
"$DLRUN" -np 2 sh -c 'echo "procid \$SLURM_PROCID rank \$RANK ntasks \$SLURM_NTASKS"'
"$DLRUN" -np 2 "$PY" "$E2E/allreduce.py"
EOS
    expect_rc "sbatch -N1 -n2: dlrun -np 2 launches" 0 \
        within 600 sbatch -N1 -n2 --wait -o "$TMP/launch.out" "$TMP/launch.sh"
    expect_eq "  SLURM_PROCID rewritten per rank" \
        "$(grep '^procid' "$TMP/launch.out" | sort | tr '\n' ' ')" \
        "procid 0 rank 0 ntasks 2 procid 1 rank 1 ntasks 2 "
    expect_eq "  torch all-reduce of 2 ranks" \
        "$(grep -c 'sum 3 ok' "$TMP/launch.out")" 2 || sed 's/^/  | /' "$TMP/launch.out"
}

# An MPI program after dlrun used Slurm's PMIx server (rank 0 published the
# port): the program's own PMIx_Init must still work.
mpi_after_pmix() {
    expect_rc "srun --mpi=pmix dlrun mpi4py" 0 within 600 srun --mpi=pmix -N2 \
        --ntasks-per-node=2 --output="$TMP/mpi.%t" "$DLRUN" "$PY" -c \
        'from mpi4py import MPI; c = MPI.COMM_WORLD; print("mpi", c.rank, c.allreduce(c.rank))'
    expect_eq "  every rank all-reduced" "$(cat "$TMP"/mpi.* | grep -c '^mpi [0-3] 6$')" 4 ||
        cat "$TMP"/mpi.*
    # forced: dlrun agrees the port through Slurm's server first, and the
    # program's PMIx client (PMIX_MCA_gds=hash from dlrun) connects again
    rm -f "$TMP"/mpi.*
    expect_rc "srun --mpi=pmix dlrun --pmix-rendezvous mpi4py" 0 within 600 srun --mpi=pmix -N2 \
        --ntasks-per-node=2 --output="$TMP/mpi.%t" "$DLRUN" --pmix-rendezvous "$PY" -c \
        'from mpi4py import MPI; c = MPI.COMM_WORLD; print("mpi", c.rank, c.allreduce(c.rank))'
    expect_eq "  every rank all-reduced" "$(cat "$TMP"/mpi.* | grep -c '^mpi [0-3] 6$')" 4 ||
        cat "$TMP"/mpi.*
}

# One dlrun per node, each starting its node's ranks (torchrun's model).
# (-w node[1-2]: the checks name node1; without it Slurm may pass over a
# node still completing the step before)
per_node() {
    expect_rc "srun -N2 --ntasks-per-node=1 dlrun --nproc-per-node 2" 0 \
        within 600 srun -N2 -w "node[1-2]" --ntasks-per-node=1 --output="$TMP/pn.%t" \
        "$DLRUN" --nproc-per-node 2 "$PY" "$E2E/allreduce.py"
    cat "$TMP"/pn.* >"$TMP/pn.out"
    expect_ranks "per-node mode" "$TMP/pn.out"
    expect_eq "  node1 ran ranks 0 and 1" "$(grep -c 'host node1 sum 10 ok' "$TMP/pn.out")" 2
}

check_env_json
per_node
check_ports "srun: derived port" "derived from job" -N2 --ntasks-per-node=2
check_ports "srun --mpi=pmix dlrun env (no MPI program): agreed by default" \
    "agreed through PMIx (program not MPI)" --mpi=pmix -N2 --ntasks-per-node=2
DLRUN_PMIX_ARG=--no-pmix-rendezvous check_ports "srun --mpi=pmix dlrun --no-pmix-rendezvous: derived" \
    "derived from job" --mpi=pmix -N2 --ntasks-per-node=2
DLRUN_PMIX_ARG=--pmix-rendezvous check_ports "srun --mpi=pmix dlrun --pmix-rendezvous: agreed port" \
    "PMIx" --mpi=pmix -N2 --ntasks-per-node=2
# MASTER_PORT exported before srun (srun passes it to every task, as the
# seeds do for their programs): the ranks get it
export MASTER_PORT=$(fixed_port)
check_ports "MASTER_PORT=$MASTER_PORT srun dlrun: the exported port" \
    "exported MASTER_PORT" -N2 --ntasks-per-node=2
unset MASTER_PORT
launch_in_batch
mpi_after_pmix
allreduce "srun -N2 --ntasks-per-node=2 dlrun allreduce.py" -N2 --ntasks-per-node=2
allreduce "srun --mpi=pmix -N2 --ntasks-per-node=2 dlrun allreduce.py" \
    --mpi=pmix -N2 --ntasks-per-node=2
allreduce_batch
refuse_inconsistent
done_testing
