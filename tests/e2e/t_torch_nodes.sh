#!/bin/sh
# needs: cluster
# t_torch_nodes.sh - torchrun's multi-node lines with one dlrun started by
# hand on each of the test cluster's nodes (network namespaces with their
# own host names; no Slurm, no ssh): a real PyTorch DDP job (gloo) across
# node1 and node2 in static and rendezvous modes with identical weights on
# every rank, a failing rank (every node's dlrun exits with its code),
# --max-restarts 1 recovering, and a node's dlrun SIGKILLed (the other
# ends, nothing is left).
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
"$PY" -c 'import torch' 2>/dev/null || skip "skip: no torch for $PY"
export DLRUN_CLUSTER_WAIT=${DLRUN_CLUSTER_WAIT:-3600}
use_cluster
# $ON N CMD...: CMD in node N's network namespace with its host name, the
# same pid all along (the script, nsenter, unshare and sh exec it)
ON=$TMP/on
cat >"$ON" <<'EOF'
#!/bin/sh
n=$1; shift
exec nsenter --net="/run/netns/dlrun-node$n" unshare --uts sh -c 'hostname "$0" && exec "$@"' "node$n" "$@"
EOF
chmod +x "$ON"
mark_sleep tnc
N1=$(getent hosts node1 | awk '{ print $1 }')
[ -n "$N1" ] || { fail "node1 has no address"; done_testing; }
export DLRUN_TOKEN=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
P=$((20000 + $$ % 9000))

# both "NODE1 ARGS" "NODE2 ARGS" COMMON...: node1's and node2's dlrun
both() {
    a=$1 b=$2; shift 2
    # shellcheck disable=SC2086
    (within 600 "$ON" 1 "$DLRUN" $a "$@" >"$TMP/n1.out" 2>"$TMP/n1.err"; echo $? >"$TMP/n1.rc") &
    # shellcheck disable=SC2086
    (within 600 "$ON" 2 "$DLRUN" $b "$@" >"$TMP/n2.out" 2>"$TMP/n2.err"; echo $? >"$TMP/n2.rc") &
    wait
}
rcs() { echo "$(cat "$TMP/n1.rc") $(cat "$TMP/n2.rc")"; }
show() { for f in n1.out n1.err n2.out n2.err; do sed "s|^|  $f: |" "$TMP/$f"; done; }

# --- static: DDP over gloo across node1 and node2 ---
P=$((P + 1))
both "--node-rank 0" "--node_rank=1" --nnodes 2 --nproc-per-node 2 \
    --master-addr "$N1" --master-port $P "$PY" "$E2E/ddp_train.py"
expect_eq "static: DDP on node1+node2, both dlruns exit 0" "$(rcs)" "0 0" || show
expect_eq "  4 ranks ok" "$(cat "$TMP/n1.out" "$TMP/n2.out" | grep -c ' ok$')" 4
expect_eq "  identical weights (one checksum)" \
    "$(cat "$TMP/n1.out" "$TMP/n2.out" | awk '/ weights / { print $4 }' | sort -u | wc -l | tr -d ' ')" 1
expect_eq "  ranks 2 and 3 on node2" "$(awk '{ print $2 }' "$TMP/n2.out" | sort | tr '\n' ' ')" "2/4 3/4 "

# --- rendezvous: node2 starts first and waits; node1 serves the endpoint ---
P=$((P + 1))
(within 600 "$ON" 2 "$DLRUN" --nnodes 2 --nproc-per-node 2 --rdzv-backend c10d \
    --rdzv-endpoint "node1:$P" --rdzv-id ddp1 "$PY" "$E2E/ddp_train.py" \
    >"$TMP/n2.out" 2>"$TMP/n2.err"; echo $? >"$TMP/n2.rc") &
sleep 2
within 600 "$ON" 1 "$DLRUN" --nnodes=2 --nproc_per_node=2 --rdzv_backend=c10d \
    --rdzv_endpoint="node1:$P" --rdzv_id=ddp1 "$PY" "$E2E/ddp_train.py" \
    >"$TMP/n1.out" 2>"$TMP/n1.err"
echo $? >"$TMP/n1.rc"; wait
expect_eq "rendezvous: DDP, both dlruns exit 0" "$(rcs)" "0 0" || show
expect_eq "  4 ranks ok, one checksum" \
    "$(cat "$TMP/n1.out" "$TMP/n2.out" | grep -c ' ok$') $(cat "$TMP/n1.out" "$TMP/n2.out" | awk '/ weights / { print $4 }' | sort -u | wc -l | tr -d ' ')" "4 1"

# --- a rank fails on node2: both dlruns exit with its code, naming it ---
P=$((P + 1))
both "--node-rank 0" "--node-rank 1" --nnodes 2 --nproc-per-node 2 \
    --master-addr "$N1" --master-port $P --no-python sh -c \
    'if [ $RANK = 3 ]; then sleep 1; exit 9; fi; exec "$0" 300' "$TMP/$MARK-sleep"
expect_eq "rank 3 exits 9 on node2: both dlruns exit 9" "$(rcs)" "9 9" || show
expect_grep "  node1's dlrun names rank 3 on node2" "rank 3 (host node2, pid [0-9]*) exited with code 9; stopped the job on 2 nodes" "$TMP/n1.err"
expect_grep "  node2's too" "rank 3 (host node2, pid [0-9]*) exited with code 9" "$TMP/n2.err"
wait_gone
expect_eq "  nothing left running" "$(leftovers)" ""

# --- --max-restarts 1: the group restarts and the second attempt trains ---
P=$((P + 1))
cat >"$TMP/flaky.sh" <<EOF
if [ "\$RANK" = 1 ] && [ "\$TORCHELASTIC_RESTART_COUNT" = 0 ]; then exit 4; fi
exec "$PY" "$E2E/ddp_train.py"
EOF
both "--node-rank 0" "--node-rank 1" --nnodes 2 --nproc-per-node 2 --max-restarts 1 \
    --master-addr "$N1" --master-port $P --no-python sh "$TMP/flaky.sh"
expect_eq "--max-restarts 1: both exit 0" "$(rcs)" "0 0" || show
expect_grep "  node2 restarted with the group" "restarting the group (restart 1 of 1)" "$TMP/n2.err"
expect_eq "  the second attempt: 4 ranks ok" "$(cat "$TMP/n1.out" "$TMP/n2.out" | grep -c ' ok$')" 4

# --- node2's dlrun SIGKILLed: node1's ends, nothing left on either ---
P=$((P + 1))
(within 600 "$ON" 1 "$DLRUN" --nnodes 2 --node-rank 0 --master-addr "$N1" --master-port $P \
    --heartbeat-timeout 3 --no-python "$TMP/$MARK-sleep" 300 >"$TMP/n1.out" 2>"$TMP/n1.err"
 echo $? >"$TMP/n1.rc") &
"$ON" 2 "$DLRUN" --nnodes 2 --node-rank 1 --master-addr "$N1" --master-port $P \
    --heartbeat-timeout 3 --no-python "$TMP/$MARK-sleep" 300 >"$TMP/n2.out" 2>"$TMP/n2.err" &
pid=$!
ranks_up 2
kill -KILL $pid
wait
expect_eq "node2's dlrun killed: node1's exits 1" "$(cat "$TMP/n1.rc")" 1 || show
expect_grep "  naming node2" "lost dlrun on node2 (node rank 1)" "$TMP/n1.err"
wait_gone
expect_eq "  nothing left on either node" "$(leftovers)" ""

# --- elastic --nnodes 2:3 on node1..3: DDP with 3 nodes, then node3's
# dlrun killed mid-job: node1 and node2 restart with the smaller world
# and train again ---
P=$((P + 1))
cat >"$TMP/el.sh" <<EOF
"$PY" "$E2E/ddp_train.py" || exit 1
[ "\$TORCHELASTIC_RESTART_COUNT" -ge 1 ] || exec "$TMP/$MARK-sleep" 300
EOF
EL="--nnodes 2:3 --nproc-per-node 1 --rdzv-backend c10d --rdzv-endpoint node1:$P --rdzv-id el1 --rdzv-conf last_call_timeout=5 --max-restarts 1 --heartbeat-timeout 3 --no-python sh $TMP/el.sh"
for n in 1 2; do
    # shellcheck disable=SC2086
    (within 600 "$ON" $n "$DLRUN" $EL >"$TMP/e$n.out" 2>"$TMP/e$n.err"; echo $? >"$TMP/e$n.rc") &
done
# shellcheck disable=SC2086
"$ON" 3 "$DLRUN" $EL >"$TMP/e3.out" 2>"$TMP/e3.err" &
pid=$!
ranks_up 3
kill -KILL $pid
wait
expect_eq "elastic 2:3, node3's dlrun killed mid-job: node1 and node2 exit 0" \
    "$(cat "$TMP/e1.rc") $(cat "$TMP/e2.rc")" "0 0" ||
    for f in e1.out e1.err e2.out e2.err e3.err; do sed "s|^|  $f: |" "$TMP/$f"; done
expect_eq "  3 ranks trained with 3 nodes, then 2 with 2" \
    "$(cat "$TMP/e1.out" "$TMP/e2.out" "$TMP/e3.out" | awk '/ ok$/ { print $2 }' | sed 's|.*/||' | sort | uniq -c | awk '{ printf "%s:%s ", $2, $1 }')" "2:2 3:3 "
expect_grep "  the lost node is named" "lost dlrun on node3" "$TMP/e1.err"
wait_gone
expect_eq "  nothing left on any node" "$(leftovers)" ""

done_testing
