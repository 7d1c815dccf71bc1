#!/bin/sh
# t_mpirun.sh - dlrun started by a real Open MPI mpirun on this host:
# one dlrun per node (mpirun -npernode 1 dlrun --nproc-per-node N) forms
# one job of nodes x N ranks from mpirun's own PMIx server, a PyTorch DDP
# (gloo) job across two "nodes" ends with the same weights everywhere, and
# mpirun's binding of dlrun (one core) does not break dlrun's --map-by.
# Two nodes on one host: mpirun's ssh is replaced by a script that runs
# the daemon here (plm_rsh_agent), so mpirun sees nodes "nodea", "nodeb".
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
command -v mpirun >/dev/null 2>&1 || skip "skip: mpirun not installed (openmpi-bin)"
mpirun --version 2>/dev/null | grep -q 'Open MPI' || skip "skip: mpirun is not Open MPI's"
mpirun_nodes_here
SHOW='echo "rank=$RANK/$WORLD_SIZE local=$LOCAL_RANK/$LOCAL_WORLD_SIZE node=$GROUP_RANK master=$MASTER_ADDR:$MASTER_PORT ompi=${OMPI_COMM_WORLD_RANK:-none} pmix=${PMIX_RANK:-none}"'

# --- one node: mpirun -np 1 dlrun --nproc-per-node 2 (was exit 2) ---
expect_rc "mpirun -np 1 dlrun --nproc-per-node 2: per-node mode" 0 \
    within 600 mpirun -np 1 "$DLRUN" --nproc-per-node 2 sh -c "$SHOW"
expect_eq "  2 ranks in a world of 2" \
    "$(grep -c '^rank=[01]/2 local=[01]/2 node=0 ' "$TMP/out")" 2 ||
    sed 's/^/  | /' "$TMP/out" "$TMP/err"
expect_eq "  the ranks do not inherit mpirun's rank variables (no PMIx server hosted: no OMPI_*)" \
    "$(grep -c '^rank=[01]/2 .* ompi=none pmix=none$' "$TMP/out")" 2

# --- two nodes: one dlrun per node, 2 ranks each ---
NODES="--mca plm_rsh_agent $TMP/agent --mca routed direct --host nodea:1,nodeb:1 -np 2"
expect_rc "mpirun -np 2 (nodea, nodeb) dlrun --nproc-per-node 2" 0 \
    within 600 mpirun $NODES "$DLRUN" --master-addr 127.0.0.1 \
    --nproc-per-node 2 sh -c "$SHOW"
expect_eq "  4 distinct ranks in one world of 4" \
    "$(sed -n 's/^rank=\([0-3]\)\/4 .*/\1/p' "$TMP/out" | sort -u | tr -d '\n')" 0123 ||
    sed 's/^/  | /' "$TMP/out" "$TMP/err"
expect_eq "  ranks 2 and 3 on node 1, local 0 and 1" \
    "$(grep -c '^rank=[23]/4 local=[01]/2 node=1 ' "$TMP/out")" 2
expect_eq "  one rendezvous for all" \
    "$(sed -n 's/.* master=\([^ ]*\) .*/\1/p' "$TMP/out" | sort -u | wc -l | tr -d ' ')" 1

expect_rc "DDP (gloo) across the two nodes: 2 x 2 ranks" 0 \
    within 300 mpirun $NODES "$DLRUN" --master-addr 127.0.0.1 \
    --nproc-per-node 2 --oversubscribe "$PY" "$E2E/ddp_train.py"
expect_eq "  4 ranks with the same weights" \
    "$(sed -n 's/^rank [0-3]\/4 weights \([^ ]*\) ok$/\1/p' "$TMP/out" | sort | uniq -c | awk '{ print $1 }')" 4 ||
    sed 's/^/  | /' "$TMP/out" "$TMP/err"

# --- two tasks on one node and another layout: refused, says why ---
expect_rc "mpirun -np 2 on one node, --nproc-per-node 3: refused" 2 \
    within 600 mpirun --oversubscribe -np 2 "$DLRUN" --nproc-per-node 3 true
expect_grep "  names mpirun -npernode 1" "mpirun -npernode 1" "$TMP/err"

# --- mpirun binds each task to one core; dlrun binds by its own map ---
ncores=$("$DLRUN" check | sed -n 's/^topology: .* \([0-9]*\) cores.*/\1/p')
if [ "${ncores:-0}" -ge 2 ]; then
    expect_rc "mpirun -np 2 dlrun --map-by ppr:2:socket --bind-to core" 0 \
        within 600 mpirun -np 2 "$DLRUN" --map-by ppr:2:socket --bind-to core \
        --report-bindings sh -c 'grep Cpus_allowed_list /proc/self/status'
    expect_eq "  each rank on a core of its own" \
        "$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$TMP/out" | sort -u | wc -l | tr -d ' ')" 2 ||
        sed 's/^/  | /' "$TMP/out" "$TMP/err"
    expect_grep "  --report-bindings notes mpirun's binding" \
        "note: mpirun bound this task to CPUs" "$TMP/err"
else
    echo "# fewer than 2 cores: mpirun's binding not tested"
fi
done_testing
