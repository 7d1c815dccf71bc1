#!/bin/sh
# t_torch_nodes_local.sh - torchrun's multi-node lines with one dlrun per
# "node" started by hand, two dlruns on this host meeting on 127.0.0.1
# (no root, no cluster: t_torch_nodes.sh runs the same across the test
# cluster's nodes): static and rendezvous modes, every rank's identity, a
# real DDP job, fail-fast across the dlruns with the rank's code, signals,
# --max-restarts of the whole group, a dlrun killed, the token.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
export DLRUN     # the ranks call dlrun kv
mark_sleep tn
export DLRUN_TOKEN=0123456789abcdef0123456789abcdef
ID='echo "$GROUP_RANK $RANK $LOCAL_RANK $WORLD_SIZE $LOCAL_WORLD_SIZE $GROUP_WORLD_SIZE $MASTER_ADDR:$MASTER_PORT $TORCHELASTIC_RUN_ID $TORCHELASTIC_RESTART_COUNT $DLRUN_BROKER"'

# both NODE_ARGS... : node 0 and node 1 in the background, outputs in
# $TMP/n0.*, $TMP/n1.*, exit codes in $TMP/n0.rc, $TMP/n1.rc
both() {
    a=$1 b=$2; shift 2
    # shellcheck disable=SC2086
    (within 300 "$DLRUN" $a "$@" >"$TMP/n0.out" 2>"$TMP/n0.err"; echo $? >"$TMP/n0.rc") &
    # shellcheck disable=SC2086
    (within 300 "$DLRUN" $b "$@" >"$TMP/n1.out" 2>"$TMP/n1.err"; echo $? >"$TMP/n1.rc") &
    wait
}
show() { for f in "$TMP"/n0.out "$TMP"/n0.err "$TMP"/n1.out "$TMP"/n1.err; do sed "s|^|  $(basename "$f"): |" "$f"; done; }

# --- static: --node-rank, --master-addr/--master-port (both spellings) ---
P=$(fixed_port)
both "--nnodes 2 --node-rank 0 --master-addr 127.0.0.1 --master-port $P" \
     "--nnodes=2 --node_rank=1 --master_addr=127.0.0.1 --master_port=$P" \
     --nproc-per-node 2 --rdzv-id job7 --no-python sh -c "$ID"
expect_eq "static: both dlruns exit 0" "$(cat "$TMP/n0.rc") $(cat "$TMP/n1.rc")" "0 0" || show
expect_eq "  node 0 runs ranks 0 1, node 1 ranks 2 3 (GROUP_RANK RANK LOCAL_RANK)" \
    "$(cat "$TMP/n0.out" "$TMP/n1.out" | awk '{ print $1, $2, $3 }' | sort -k2n | tr '\n' ,)" \
    "0 0 0,0 1 1,1 2 0,1 3 1,"
expect_eq "  WORLD_SIZE 4, LOCAL_WORLD_SIZE 2, GROUP_WORLD_SIZE 2, run id, restart 0, everywhere" \
    "$(cat "$TMP/n0.out" "$TMP/n1.out" | awk '{ print $4, $5, $6, $8, $9 }' | sort -u)" "4 2 2 job7 0"
expect_eq "  one MASTER_ADDR:PORT" "$(cat "$TMP/n0.out" "$TMP/n1.out" | awk '{ print $7 }' | sort -u | wc -l | tr -d ' ')" 1
expect_eq "  MASTER_PORT is not the rendezvous port" \
    "$(awk -v p="127.0.0.1:$P" '$7 == p' "$TMP/n0.out" "$TMP/n1.out" | wc -l | tr -d ' ')" 0
expect_eq "  one DLRUN_BROKER for the ranks (node rank 0's, not the rendezvous)" \
    "$(cat "$TMP/n0.out" "$TMP/n1.out" | awk '{ print $10 }' | sort -u | grep -v "^127.0.0.1:$P\$" | grep -c '^127.0.0.1:[0-9]*$')" 1
expect_eq "  no token warning with DLRUN_TOKEN" "$(cat "$TMP/n0.err" "$TMP/n1.err" | grep -c warning)" 0
# an exported MASTER_PORT is not the ranks' (node rank 0's dlrun finds
# one, as torchrun's agent does): each dlrun says so in one line
P=$(fixed_port)
export MASTER_PORT=20000
both "--node-rank 0" "--node-rank 1" --nnodes 2 --nproc-per-node 1 \
     --master-addr 127.0.0.1 --master-port "$P" --no-python sh -c "$ID"
unset MASTER_PORT
expect_eq "MASTER_PORT=20000 exported, by hand: both exit 0" "$(cat "$TMP/n0.rc") $(cat "$TMP/n1.rc")" "0 0" || show
expect_eq "  the ranks' port is not 20000" "$(cat "$TMP/n0.out" "$TMP/n1.out" | grep -c ':20000 ')" 0
expect_eq "  one line from each dlrun" "$(cat "$TMP/n0.err" "$TMP/n1.err" | grep -c "^dlrun: MASTER_PORT=20000 in the environment is not used: node rank 0's dlrun gives the ranks")" 2

# --- a real DDP job (gloo) across the two dlruns: identical weights ---
if "$PY" -c 'import torch' 2>/dev/null; then
    P=$(fixed_port)
    both "--node-rank 0" "--node-rank 1" --nnodes 2 --nproc-per-node 2 \
         --master-addr 127.0.0.1 --master-port "$P" "$PY" "$E2E/ddp_train.py"
    expect_eq "DDP over two dlruns: both exit 0" "$(cat "$TMP/n0.rc") $(cat "$TMP/n1.rc")" "0 0" || show
    expect_eq "  4 ranks ok" "$(cat "$TMP/n0.out" "$TMP/n1.out" | grep -c ' ok$')" 4
    expect_eq "  one checksum" "$(cat "$TMP/n0.out" "$TMP/n1.out" | awk '/ weights / { print $4 }' | sort -u | wc -l | tr -d ' ')" 1
else
    echo "skip: DDP (no torch for $PY)"
fi

# --- rendezvous: c10d endpoint, node ranks assigned where they meet ---
P=$(fixed_port)
both "" "" --nnodes 2 --nproc-per-node 1 --rdzv-backend c10d \
     --rdzv-endpoint "127.0.0.1:$P" --rdzv-id r1 --no-python sh -c "$ID"
expect_eq "rendezvous: both exit 0" "$(cat "$TMP/n0.rc") $(cat "$TMP/n1.rc")" "0 0" || show
expect_eq "  node ranks 0 and 1, ranks 0 and 1" \
    "$(cat "$TMP/n0.out" "$TMP/n1.out" | awk '{ print $1 $2 }' | sort | tr '\n' ' ')" "00 11 "

# --- a rank fails on node 1: both dlruns exit with its code, naming it;
# the other ranks (sleeping 120 s) are ended: by order, not speed ---
P=$(fixed_port)
both "--node-rank 0" "--node-rank 1" --nnodes 2 --nproc-per-node 2 \
     --master-addr 127.0.0.1 --master-port "$P" --no-python sh -c \
     'if [ $RANK = 3 ]; then sleep 1; exit 7; fi; exec "$0" 120' "$TMP/$MARK-sleep"
expect_eq "rank 3 exits 7: every dlrun exits 7" "$(cat "$TMP/n0.rc") $(cat "$TMP/n1.rc")" "7 7" || show
expect_grep "  node 0 names rank 3 and its host" "rank 3 (host [^,]*, pid [0-9]*) exited with code 7; stopped the job on 2 nodes" "$TMP/n0.err"
expect_grep "  node 1 too" "rank 3 (host [^,]*, pid [0-9]*) exited with code 7" "$TMP/n1.err"
wait_gone
expect_eq "  nothing left running" "$(leftovers)" ""

# --- --max-restarts 1: the whole group restarts, the second attempt works ---
P=$(fixed_port)
both "--node-rank 0" "--node-rank 1" --nnodes 2 --nproc-per-node 2 --max-restarts 1 \
     --master-addr 127.0.0.1 --master-port "$P" --no-python sh -c \
     'echo "attempt $TORCHELASTIC_RESTART_COUNT rank $RANK"; if [ $RANK = 2 ] && [ $TORCHELASTIC_RESTART_COUNT = 0 ]; then exit 5; fi; [ $TORCHELASTIC_RESTART_COUNT = 1 ] || exec "$0" 120' "$TMP/$MARK-sleep"
expect_eq "--max-restarts 1 recovers: both exit 0" "$(cat "$TMP/n0.rc") $(cat "$TMP/n1.rc")" "0 0" || show
expect_grep "  node 0 restarts the group" "restarting the group (restart 1 of 1)" "$TMP/n0.err"
expect_grep "  node 1 too" "restarting the group (restart 1 of 1)" "$TMP/n1.err"
expect_eq "  all 4 ranks ran again with TORCHELASTIC_RESTART_COUNT=1" \
    "$(cat "$TMP/n0.out" "$TMP/n1.out" | grep -c '^attempt 1 ')" 4
P=$(fixed_port)
both "--node-rank 0" "--node-rank 1" --nnodes 2 --max-restarts 1 \
     --master-addr 127.0.0.1 --master-port "$P" --no-python sh -c \
     'if [ $TORCHELASTIC_RESTART_COUNT = 0 ]; then [ $RANK = 1 ] && "$DLRUN" kv barrier b 2 && exit 3; "$DLRUN" kv put k$RANK v && "$DLRUN" kv barrier b 2 && exec "$0" 120; fi
      for r in 0 1; do "$DLRUN" kv get k$r >/dev/null 2>&1 && echo "k$r survived"; done; "$DLRUN" kv barrier c 2' "$TMP/$MARK-sleep"
expect_eq "  across nodes, the ranks share a broker, fresh each attempt" \
    "$(cat "$TMP/n0.rc") $(cat "$TMP/n1.rc") $(cat "$TMP/n0.out" "$TMP/n1.out" | grep -c survived)" "0 0 0" || show
expect_eq "  --max-restarts 0 on one node only is refused" "$(
    P=$(fixed_port); both "--node-rank 0 --max-restarts 1" "--node-rank 1" --nnodes 2 \
        --master-addr 127.0.0.1 --master-port "$P" --no-python true
    cat "$TMP/n0.rc" "$TMP/n1.rc" | sort -u | tr '\n' ' ')" "1 "
cat "$TMP/n0.err" "$TMP/n1.err" >"$TMP/mr.err"
expect_grep "  naming the option" "has --max-restarts 0, this node 1: give every node the same" "$TMP/mr.err"

# --- SIGTERM to node 1's dlrun ends the group ---
P=$(fixed_port)
(within 300 "$DLRUN" --nnodes 2 --node-rank 0 --master-addr 127.0.0.1 --master-port "$P" \
    --no-python "$TMP/$MARK-sleep" 120 >"$TMP/n0.out" 2>"$TMP/n0.err"; echo $? >"$TMP/n0.rc") &
"$DLRUN" --nnodes 2 --node-rank 1 --master-addr 127.0.0.1 --master-port "$P" \
    --no-python "$TMP/$MARK-sleep" 120 >"$TMP/n1.out" 2>"$TMP/n1.err" &
pid=$!
ranks_up 2
kill -TERM $pid; wait $pid; echo $? >"$TMP/n1.rc"; wait
expect_eq "SIGTERM to node 1's dlrun: both exit 143" "$(cat "$TMP/n0.rc") $(cat "$TMP/n1.rc")" "143 143" || show
expect_grep "  node 0 says why" "dlrun on [^ ]* (node rank 1) was stopped by signal 15" "$TMP/n0.err"
wait_gone
expect_eq "  nothing left running" "$(leftovers)" ""

# --- node 1's dlrun SIGKILLed: node 0 loses its heartbeat, ends ---
P=$(fixed_port)
(within 300 "$DLRUN" --nnodes 2 --node-rank 0 --master-addr 127.0.0.1 --master-port "$P" \
    --heartbeat-timeout 3 --no-python "$TMP/$MARK-sleep" 120 >"$TMP/n0.out" 2>"$TMP/n0.err"; echo $? >"$TMP/n0.rc") &
"$DLRUN" --nnodes 2 --node-rank 1 --master-addr 127.0.0.1 --master-port "$P" \
    --heartbeat-timeout 3 --no-python "$TMP/$MARK-sleep" 120 >"$TMP/n1.out" 2>"$TMP/n1.err" &
pid=$!
ranks_up 2
kill -KILL $pid; wait
expect_eq "node 1's dlrun killed: node 0 exits 1" "$(cat "$TMP/n0.rc")" 1 || show
expect_grep "  naming the lost node" "lost dlrun on [^ ]* (node rank 1): no heartbeat for 3 s" "$TMP/n0.err"
wait_gone
expect_eq "  nothing left running" "$(leftovers)" ""

# --- the node that serves (node rank 0) killed: node 1 ends too ---
P=$(fixed_port)
"$DLRUN" --nnodes 2 --node-rank 0 --master-addr 127.0.0.1 --master-port "$P" \
    --no-python "$TMP/$MARK-sleep" 120 >"$TMP/n0.out" 2>"$TMP/n0.err" &
pid=$!
(within 300 "$DLRUN" --nnodes 2 --node-rank 1 --master-addr 127.0.0.1 --master-port "$P" \
    --no-python "$TMP/$MARK-sleep" 120 >"$TMP/n1.out" 2>"$TMP/n1.err"; echo $? >"$TMP/n1.rc") &
ranks_up 2
kill -KILL $pid; wait
expect_eq "node 0's dlrun (the server) killed: node 1 exits 1" "$(cat "$TMP/n1.rc")" 1 || show
expect_grep "  saying so" "lost the group's rendezvous at 127.0.0.1:$P" "$TMP/n1.err"
wait_gone
expect_eq "  nothing left running" "$(leftovers)" ""

# --- the token: derived with a warning, from a 0600 file, never in argv ---
P=$(fixed_port)
unset DLRUN_TOKEN
both "--node-rank 0" "--node-rank 1" --nnodes 2 --master-addr 127.0.0.1 \
     --master-port "$P" --no-python sh -c 'ps -o args= -p $PPID; echo "T=$DLRUN_TOKEN"'
expect_eq "no token given: both run" "$(cat "$TMP/n0.rc") $(cat "$TMP/n1.rc")" "0 0" || show
expect_eq "  one warning line each, naming DLRUN_TOKEN" "$(cat "$TMP/n0.err" "$TMP/n1.err" | grep -c 'warning: .*anyone who can reach that port.*DLRUN_TOKEN')" 2
T=$(grep '^T=' "$TMP/n0.out" | cut -c3-)
expect_eq "  the token is in no dlrun's argv" "$(grep -c -- "$T" "$TMP/n0.out" "$TMP/n1.out" | awk -F: '{ s += $2 } END { print s }')" 2
printf '%s\n' fedcba9876543210fedcba9876543210 >"$TMP/tok"
chmod 644 "$TMP/tok"
expect_rc "--token-file others can read: refused" 2 "$DLRUN" --nnodes 2 --node-rank 1 \
    --master-addr 127.0.0.1 --master-port "$P" --token-file "$TMP/tok" --no-python true
expect_grep "  saying how to fix it" "chmod 600" "$TMP/err"
chmod 600 "$TMP/tok"
P=$(fixed_port)
both "--node-rank 0" "--node-rank 1" --nnodes 2 --master-addr 127.0.0.1 \
     --master-port "$P" --token-file "$TMP/tok" --no-python sh -c 'echo "T=$DLRUN_TOKEN"'
expect_eq "--token-file 0600: both run with its token" "$(cat "$TMP/n0.rc") $(cat "$TMP/n1.rc") $(sort -u "$TMP/n0.out" "$TMP/n1.out")" \
    "0 0 T=fedcba9876543210fedcba9876543210"
P=$(fixed_port)
(within 300 "$DLRUN" --nnodes 2 --node-rank 0 --master-addr 127.0.0.1 --master-port "$P" \
    --rdzv-conf join_timeout=5 --token-file "$TMP/tok" --no-python true >"$TMP/n0.out" 2>"$TMP/n0.err"; echo $? >"$TMP/n0.rc") &
DLRUN_TOKEN=00000000000000000000000000000000 within 300 "$DLRUN" --nnodes 2 --node-rank 1 \
    --master-addr 127.0.0.1 --master-port "$P" --rdzv-conf join_timeout=5 --no-python true \
    >"$TMP/n1.out" 2>"$TMP/n1.err"
echo $? >"$TMP/n1.rc"; wait
expect_eq "another token cannot join: both fail" "$(cat "$TMP/n0.rc") $(cat "$TMP/n1.rc")" "1 1" || show
expect_grep "  the outsider names the token" "DLRUN_TOKEN" "$TMP/n1.err"
expect_grep "  node 0 says who did not join" "node rank 1 did not join within 5 s" "$TMP/n0.err"

# --- two dlruns with one node rank ---
P=$(fixed_port)
export DLRUN_TOKEN=0123456789abcdef0123456789abcdef
both "--node-rank 0 --rdzv-conf join_timeout=5" "--node-rank 0 --rdzv-conf join_timeout=5" \
     --nnodes 2 --master-addr 127.0.0.1 --master-port "$P" --no-python true
cat "$TMP/n0.err" "$TMP/n1.err" >"$TMP/twice.err"
expect_grep "node rank 0 twice: refused" "node rank 0 has joined already" "$TMP/twice.err"

# --- elastic --nnodes 1:2: one node starts alone after the last call; a
# second joining restarts the group with both; the second killed, the
# first goes on alone (each change a restart) ---
P=$(fixed_port)
EL="--nnodes 1:2 --nproc-per-node 1 --rdzv-backend c10d --rdzv-endpoint 127.0.0.1:$P --rdzv-conf last_call_timeout=1 --max-restarts 2 --heartbeat-timeout 3 --no-python"
# shellcheck disable=SC2086
(within 300 "$DLRUN" $EL sh -c 'echo "a $TORCHELASTIC_RESTART_COUNT $RANK $WORLD_SIZE"; [ $TORCHELASTIC_RESTART_COUNT = 2 ] || exec "$0" 120' "$TMP/$MARK-sleep" \
    >"$TMP/n0.out" 2>"$TMP/n0.err"; echo $? >"$TMP/n0.rc") &
ranks_up 1
# shellcheck disable=SC2086
"$DLRUN" $EL sh -c 'echo "b $TORCHELASTIC_RESTART_COUNT $RANK $WORLD_SIZE"; exec "$0" 120' "$TMP/$MARK-sleep" >"$TMP/n1.out" 2>"$TMP/n1.err" &
pid=$!
for _ in $(seq 600); do grep -q "^b 1 " "$TMP/n1.out" && break; sleep 0.1; done
kill -KILL $pid; wait
expect_eq "elastic 1:2: the first node goes on to the end" "$(cat "$TMP/n0.rc")" 0 || show
expect_eq "  alone, then with the second, then alone (restart, rank, world)" \
    "$(cat "$TMP/n0.out" "$TMP/n1.out" | sort | tr '\n' ,)" "a 0 0 1,a 1 0 2,a 2 0 1,b 1 1 2,"
expect_grep "  a joining node restarts the group" "a node is waiting to join the group of 1" "$TMP/n0.err"
expect_grep "  a lost one too" "lost dlrun on [^ ]* (node rank 1)" "$TMP/n0.err"
wait_gone
expect_eq "  nothing left running" "$(leftovers)" ""

expect_rc "etcd backend: refused naming c10d" 2 "$DLRUN" --nnodes 2 --rdzv-backend etcd \
    --rdzv-endpoint 127.0.0.1:2379 --no-python true
expect_grep "  names the dlrun way" "rdzv-backend c10d" "$TMP/err"

done_testing
