#!/bin/sh
# needs: cluster
# t_ssh.sh - dlrun on a host list starts one agent per node over ssh (real
# OpenSSH servers in the four node namespaces), runs a real torch job, ends
# the job together when a rank fails, an agent dies, a node's network is
# cut or dlrun is killed, and refuses a host whose key it does not know.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
use_cluster
mark_sleep ssh
HOSTS=node1:2,node2:2,node3:2,node4:2

# --- where every rank ran, with what identity ---
within 300 "$DLRUN" -H $HOSTS $SSH -- sh -c \
    'echo "$RANK $LOCAL_RANK $NODE_RANK $WORLD_SIZE $(hostname) $(pwd)"' >"$TMP/where.out" 2>"$TMP/where.err"
expect_eq "8 ranks over ssh, each once" "$(cut -d' ' -f1 "$TMP/where.out" | sort -n | tr '\n' ' ')" "0 1 2 3 4 5 6 7 " ||
    sed 's/^/  | /' "$TMP/where.err"
expect_eq "  rank 5 is local rank 1 of node 2 (node3)" "$(awk '$1 == 5 { print $2, $3, $4, $5 }' "$TMP/where.out")" "1 2 8 node3"
expect_eq "  ranks run in dlrun's directory" "$(awk '{ print $6 }' "$TMP/where.out" | sort -u)" "$TMP"

# --- one rendezvous: rank 0's host and a port its agent found free; each
# TF_CONFIG worker on its own host with a port found free there ---
within 300 "$DLRUN" -H $HOSTS $SSH --tf-config -- sh -c \
    'echo "$MASTER_ADDR:$MASTER_PORT $TF_CONFIG" | sed "s/,.task.*//"' >"$TMP/rdv.out" 2>&1
expect_eq "every rank has the same MASTER_ADDR:PORT and TF_CONFIG" "$(sort -u "$TMP/rdv.out" | wc -l | tr -d ' ')" 1 ||
    sed 's/^/  | /' "$TMP/rdv.out"
expect_grep "  MASTER_ADDR is node1's address" "^$(getent hosts node1 | awk '{ print $1 }'):[0-9]* " "$TMP/rdv.out"
expect_eq "  8 workers, 2 per node, all different" \
    "$(head -n 1 "$TMP/rdv.out" | grep -o 'node[1-4]:[0-9]*' | sort -u | cut -d: -f1 | uniq -c | awk '{ printf "%s ", $1 }')" "2 2 2 2 "

# --- -x VAR carries dlrun's value to the remote ranks (as mpirun -x) ---
XV="a b\$c'd" within 300 "$DLRUN" -H $HOSTS $SSH -x XV -- sh -c 'echo "[$XV]"' >"$TMP/x.out" 2>&1
expect_eq "-x XV: dlrun's value on every node" "$(sort -u "$TMP/x.out")" "[a b\$c'd]"

# --- a real job: torch DDP over gloo across the four nodes ---
within 900 "$DLRUN" -H $HOSTS $SSH -l "$PY" "$E2E/ddp_train.py" >"$TMP/ddp.out" 2>&1
expect_eq "dlrun -H 4 nodes x2 ddp_train.py" "$?" 0
expect_eq "  8 ranks with identical weights" "$(grep -c ' ok$' "$TMP/ddp.out")" 8 ||
    sed 's/^/  | /' "$TMP/ddp.out"
expect_eq "  one checksum" "$(awk '/ weights / { print $5 }' "$TMP/ddp.out" | sort -u | wc -l | tr -d ' ')" 1

# --- a tree: --fanout 2 makes node1 and node3 start node2 and node4 ---
within 300 "$DLRUN" -H $HOSTS $SSH --fanout 2 -- sh -c 'echo "$RANK $(hostname)"' >"$TMP/tree.out" 2>&1
expect_eq "--fanout 2: all 8 ranks ran" "$(grep -c '^[0-7] node[1-4]$' "$TMP/tree.out")" 8 ||
    sed 's/^/  | /' "$TMP/tree.out"

# --- a rank fails on node3: the job ends with its code, naming it ---
# Fail-fast is asserted by order, not speed: the other ranks sleep 120 s,
# so a job that ends before that was ended by the failure.
s=$(date +%s%N)
within 300 "$DLRUN" -H $HOSTS $SSH -- sh -c \
    'if [ $RANK = 5 ]; then sleep 1; exit 3; fi; exec "$0" 120' "$TMP/$MARK-sleep" >"$TMP/fail.out" 2>&1
rc=$? ms=$(( ($(date +%s%N) - s) / 1000000 ))
expect_eq "rank 5 exits 3 on node3: dlrun's code" "$rc" 3
expect_grep "  names rank and host" "rank 5 (host node3, pid [0-9]*) exited with code 3" "$TMP/fail.out"
if [ "$ms" -lt 120000 ]; then pass "  the sleeping ranks were ended (${ms}ms; rank failed at 1s)"; else
    fail "  the job waited for the sleeping ranks (${ms}ms)"; fi
wait_gone
expect_eq "  nothing left on any node" "$(leftovers)" ""

# --- --max-restarts and --summary across nodes ---
within 600 "$DLRUN" -H $HOSTS $SSH --max-restarts 1 --summary "$TMP/sum.json" -- sh -c \
    '[ $RANK = 6 ] && [ $DLRUN_RESTART_COUNT = 0 ] && exit 4; echo "ok $RANK $TORCHELASTIC_RESTART_COUNT"' >"$TMP/restart.out" 2>&1
expect_eq "rank 6 fails once, --max-restarts 1: the job succeeds" "$?" 0
expect_grep "  restarted on every node" "restarting the job on 4 nodes (restart 1 of 1)" "$TMP/restart.out"
expect_eq "  the second attempt ran all 8 ranks with restart count 1" "$(grep -c '^ok [0-7] 1$' "$TMP/restart.out")" 8
summary() { "$PY" -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["exit_code"], d["restarts"], d["failed_rank"], len(d["ranks"]), " ".join(sorted(set(r["host"] for r in d["ranks"]))), d["ranks"][6]["exit_code"])' "$1"; }
expect_eq "  --summary: code, restarts, no failure, 8 ranks on 4 hosts" "$(summary "$TMP/sum.json")" "0 1 -1 8 node1 node2 node3 node4 0"
within 600 "$DLRUN" -H $HOSTS $SSH --summary "$TMP/sum2.json" -- sh -c '[ $RANK = 6 ] && exit 4; exec "$0" 30' "$TMP/$MARK-sleep" >/dev/null 2>&1
expect_eq "--summary of a failed job names rank 6 and its code" "$(summary "$TMP/sum2.json")" "4 0 6 8 node1 node2 node3 node4 4"
wait_gone

# --- USR1 and TERM to dlrun reach every rank on every node ---
cat >"$TMP/rec.sh" <<'EOS'
trap 'echo USR1 >"$0.usr1.$RANK"' USR1
trap 'echo TERM >"$0.term.$RANK"; exit 0' TERM
touch "$0.up.$RANK"
while :; do sleep 0.1; done
EOS
# in a tree (--fanout 2) an agent passes only the stop signals to the relays
# of the agents below it (USR1 would kill a relay); those agents get USR1
# from the broker
for tree in "" "--fanout 2"; do
rm -f "$TMP"/rec.sh.*
"$DLRUN" -H $HOSTS $SSH $tree -- sh "$TMP/rec.sh" >"$TMP/sig.out" 2>&1 & p=$!
for _ in $(seq 1200); do [ "$(ls "$TMP"/rec.sh.up.* 2>/dev/null | wc -l)" -eq 8 ] && break; sleep 0.1; done
kill -USR1 $p
for _ in $(seq 1200); do [ "$(ls "$TMP"/rec.sh.usr1.* 2>/dev/null | wc -l)" -eq 8 ] && break; sleep 0.1; done
sleep 2     # a relay that USR1 killed would fail the job meanwhile
expect_eq "  the job still runs after USR1${tree:+ ($tree)}" "$(kill -0 $p 2>/dev/null && echo yes)" yes ||
    sed 's/^/  | /' "$TMP/sig.out"
kill -TERM $p
within 300 sh -c "while kill -0 $p 2>/dev/null; do sleep 0.1; done"
expect_eq "USR1 reached the 8 ranks on 4 nodes${tree:+ ($tree)}" "$(ls "$TMP"/rec.sh.usr1.* 2>/dev/null | wc -l | tr -d ' ')" 8 ||
    sed 's/^/  | /' "$TMP/sig.out"
expect_eq "  TERM too" "$(ls "$TMP"/rec.sh.term.* 2>/dev/null | wc -l | tr -d ' ')" 8 ||
    sed 's/^/  | /' "$TMP/sig.out"
done

# --- the agent on node2 is killed: the job ends, naming the node ---
"$DLRUN" -H $HOSTS $SSH -- "$TMP/$MARK-sleep" 60 >"$TMP/agent.out" 2>&1 & p=$!
for _ in $(seq 1200); do [ "$(leftovers | wc -l)" -ge 17 ] && break; sleep 0.1; done
for _ in $(seq 1200); do a=$(agent_pid node2); [ -n "$a" ] && break; sleep 0.1; done
kill -9 "${a:-0}"
within 300 sh -c "while kill -0 $p 2>/dev/null; do sleep 0.1; done"; wait $p; rc=$?
expect_eq "agent on node2 killed: dlrun fails" "$rc" 137
expect_grep "  names the node" "agent on node2 ended with code 137" "$TMP/agent.out"
wait_gone
expect_eq "  nothing left on any node" "$(leftovers)" ""

# --- node3's network is cut: heartbeats stop, both sides end ---
"$DLRUN" -H $HOSTS $SSH --heartbeat-timeout 3 --kill-timeout 2 -- \
    "$TMP/$MARK-sleep" 60 >"$TMP/cut.out" 2>&1 & p=$!
for _ in $(seq 1200); do [ "$(leftovers | wc -l)" -ge 17 ] && break; sleep 0.1; done
sleep 1
ip netns exec dlrun-node3 ip link set eth0 down
s=$(date +%s%N)
# the ranks sleep 60 s: ending before that is the heartbeat's doing
within 600 sh -c "while kill -0 $p 2>/dev/null; do sleep 0.1; done"; wait $p; rc=$?
ms=$(( ($(date +%s%N) - s) / 1000000 ))
expect_eq "network of node3 cut: dlrun fails" "$rc" 1
expect_grep "  lost the agent on node3" "lost the agent on node3: no heartbeat for 3 s" "$TMP/cut.out"
if [ "$ms" -lt 60000 ]; then pass "  noticed before the ranks' end (${ms}ms, heartbeat timeout 3s)"; else
    fail "  only when the ranks ended (${ms}ms)"; fi
wait_gone
expect_eq "  node3's agent ended its ranks by itself" "$(leftovers)" ""
ip netns exec dlrun-node3 ip link set eth0 up

# --- dlrun killed with SIGKILL: every agent ends its ranks ---
"$DLRUN" -H $HOSTS $SSH -- "$TMP/$MARK-sleep" 60 >"$TMP/kill.out" 2>&1 & p=$!
for _ in $(seq 1200); do [ "$(leftovers | wc -l)" -ge 17 ] && break; sleep 0.1; done
kill -9 $p
wait_gone
expect_eq "head SIGKILLed: nothing left on any node" "$(leftovers)" ""

# --- host keys are never accepted silently ---
within 300 "$DLRUN" -H $HOSTS --ssh-identity "$DLRUN_TEST_SSH_KEY" \
    --ssh-known-hosts "$DLRUN_TEST_KNOWN_HOSTS_PARTIAL" -- "$TMP/$MARK-sleep" 30 >"$TMP/key.out" 2>&1
expect_eq "node4's key unknown: refused with ssh's code" "$?" 255
expect_grep "  says why and how to fix" "ssh node4: host key SHA256:.* is not in .*known_hosts.partial: refusing" "$TMP/key.out"
wait_gone
expect_eq "  the other nodes' ranks ended" "$(leftovers)" ""
within 300 "$DLRUN" -H node1:1,node2:1 --ssh-known-hosts "$DLRUN_TEST_KNOWN_HOSTS" \
    --ssh-identity /nonexistent-key -- true >"$TMP/auth.out" 2>&1
rc=$?
if [ "$rc" -ne 0 ]; then pass "no usable key: fails ($rc)"; else fail "no usable key: exit 0"; fi
expect_grep "  never asks for a password" "no key was accepted for user root" "$TMP/auth.out"
done_testing
