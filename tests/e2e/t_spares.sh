#!/bin/sh
# needs: cluster
# t_spares.sh - --spares 1 over real ssh on the test cluster's four nodes
# (-H node1..node4: the ranks on three, node4 in reserve).  Ranks count
# their steps in a file of the shared folder and resume from it after a
# restart.  The agent on node2 killed with SIGKILL mid-run: node2 is
# excluded, node4 takes its ranks, the job finishes every step with exit 0,
# and stderr and the summary name node2.  A rank killed by SIGKILL is its
# node's fault too.  A rank that exits 3 on every node is the program's:
# no spare is used, the job ends with 3 after its restarts.  Waits are hang
# guards, never assertions.
. "$(dirname "$0")/lib.sh"
use_cluster
H=node1,node2,node3,node4
cat >"$TMP/step.sh" <<'EOS'
# STEPS steps of 0.1 s, the count kept in $0.step.RANK across restarts
f=$0.step.$RANK; s=$(cat "$f" 2>/dev/null || echo 0)
echo "$DLRUN_RESTART_COUNT $TORCHELASTIC_RESTART_COUNT $RANK $(hostname) [$DLRUN_EXCLUDED_NODES] $WORLD_SIZE" >>"$0.log"
while [ "$s" -lt "$STEPS" ]; do
    s=$((s + 1)); echo "$s" >"$f"
    # KILL_RANK: that rank dies of SIGKILL at step 5 of the first attempt
    [ "$RANK" = "${KILL_RANK:-}" ] && [ "$DLRUN_RESTART_COUNT" = 0 ] &&
        [ "$s" = 5 ] && kill -KILL $$
    sleep 0.1
done
EOS
# steps_at_least N RANKS: every rank counted N steps or more
steps_at_least() {
    for r in $(seq 0 $(($2 - 1))); do
        v=$(cat "$TMP/step.sh.step.$r" 2>/dev/null)
        [ "${v:-0}" -ge "$1" ] || return 1
    done
}
all_steps() { cat "$TMP"/step.sh.step.* 2>/dev/null | sort -u | tr '\n' ' '; }

# --- the agent on node2 killed: node4 takes over, every step is done ---
export STEPS=60
within 150 "$DLRUN" -H "$H" $SSH --spares 1 --max-restarts 2 \
    --heartbeat-timeout 5 --summary "$TMP/kill.json" -x STEPS \
    sh "$TMP/step.sh" >"$TMP/kill.out" 2>&1 & p=$!
for _ in $(seq 600); do steps_at_least 5 3 && break; sleep 0.1; done
for _ in $(seq 600); do a=$(agent_pid node2); [ -n "$a" ] && break; sleep 0.1; done
[ -n "$a" ] && kill -9 "$a"
wait $p
expect_eq "agent on node2 killed: the job ends well" "$?" 0 || sed 's/^/  | /' "$TMP/kill.out"
expect_grep "  one line: node2 excluded, node4 in, attempt 2 of 3" \
    "node node2 excluded: its agent ended with code 137 (killed?); spare node4 in; restarting 3 ranks, attempt 2 of 3" "$TMP/kill.out"
expect_grep "  the next submission without node2" \
    "excluded node: node2; for the next submission: -H node1,node4,node3" "$TMP/kill.out"
expect_eq "  every rank did all 60 steps" "$(all_steps)" "60 "
expect_eq "  the restart on node1, node4, node3, told node2 is out" \
    "$(awk '$1 == 1 { print $2, $3, $4, $5, $6 }' "$TMP/step.sh.log" | sort | tr '\n' ';')" \
    "1 0 node1 [node2] 3;1 1 node4 [node2] 3;1 2 node3 [node2] 3;"
expect_grep "  summary: node2 excluded" '"excluded_nodes":\[{"host":"node2","reason":"its agent ended with code 137 (killed?)","attempt":1,' "$TMP/kill.json"
expect_grep "  summary: attempt 2 on node1, node4, node3" \
    '{"attempt":2,"world_size":3,"nodes":\["node1","node4","node3"\]}' "$TMP/kill.json"
expect_grep "  summary: rank 1 ran on node4" '{"rank":1,"host":"node4","pid":[0-9]*,"exit_code":0' "$TMP/kill.json"
rm -f "$TMP"/step.sh.*

# --- a rank killed by SIGKILL (the OOM killer's signal): its node's fault ---
export STEPS=30 KILL_RANK=2
within 120 "$DLRUN" -H "$H" $SSH --spares 1 --max-restarts 1 \
    -x STEPS -x KILL_RANK sh "$TMP/step.sh" >"$TMP/oom.out" 2>&1
expect_eq "rank 2 on node3 killed by SIGKILL: the job ends well" "$?" 0 || sed 's/^/  | /' "$TMP/oom.out"
expect_grep "  node3 excluded, node4 in" \
    "node node3 excluded: rank 2 was killed by signal 9 (Killed); spare node4 in; restarting 3 ranks, attempt 2 of 2" "$TMP/oom.out"
expect_eq "  every rank did all 30 steps" "$(all_steps)" "30 "
rm -f "$TMP"/step.sh.*

# --- exit 3 everywhere: the program's fault, no spare ---
within 120 "$DLRUN" -H "$H" $SSH --spares 1 --max-restarts 1 --summary "$TMP/prog.json" \
    sh -c 'hostname >>"$0.hosts"; sleep 0.5; exit 3' "$TMP/step.sh" >"$TMP/prog.out" 2>&1
expect_eq "exit 3 on every node: dlrun ends with 3" "$?" 3
expect_grep "  restarted once on the same nodes" "restarting the job on 3 nodes (restart 1 of 1)" "$TMP/prog.out"
expect_eq "  no node excluded" "$(grep -c "excluded" "$TMP/prog.out")" 0
expect_eq "  node4 never ran a rank" "$(sort -u "$TMP/step.sh.hosts" | tr '\n' ' ')" "node1 node2 node3 "
expect_grep "  summary: none excluded" '"excluded_nodes":\[\],' "$TMP/prog.json"
done_testing
