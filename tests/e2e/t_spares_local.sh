#!/bin/sh
# t_spares_local.sh - --spares on this machine alone: DLRUN_RELAY_SIM_MS
# runs every "node"'s agent here (as t_agents.sh), so a node's fault and
# the spare that replaces it run without the cluster, and under ASan.
# Ranks count steps in a file and resume after a restart; the agent of
# sim2 killed with SIGKILL: sim4 takes over, the job ends well; a rank's
# SIGSEGV costs its node; an exit code costs none; --spares refused where
# it cannot hold.  t_spares.sh does the same over ssh on the cluster.
. "$(dirname "$0")/lib.sh"
CLEAN="$NO_SCHED -u DLRUN_BROKER -u DLRUN_TOKEN DLRUN_RELAY_SIM_MS=0"
mark_sleep spares
S=$TMP/$MARK-step.sh
cat >"$S" <<'EOS'
f=$0.step.$RANK; s=$(cat "$f" 2>/dev/null || echo 0)
echo "$DLRUN_RESTART_COUNT $RANK [$DLRUN_EXCLUDED_NODES]" >>"$0.log"
while [ "$s" -lt 30 ]; do
    s=$((s + 1)); echo "$s" >"$f"
    [ "$RANK" = "${SEGV_RANK:-}" ] && [ "$DLRUN_RESTART_COUNT" = 0 ] &&
        [ "$s" = 3 ] && kill -SEGV $$
    sleep 0.1
done
# after the restart, the ranks end only once the head said it saw them all
# running: on a busy machine they could finish before the agents' next
# report, and the recovery would have no end to measure
if [ "$DLRUN_RESTART_COUNT" = 1 ] && [ -n "${RECOVERED_IN:-}" ]; then
    for _ in $(seq 600); do grep -q 'recovered in' "$RECOVERED_IN" && break; sleep 0.1; done
fi
EOS
steps_at_least() {
    for r in 0 1 2; do v=$(cat "$S.step.$r" 2>/dev/null); [ "${v:-0}" -ge "$1" ] || return 1; done
}

# --- the agent of sim2 killed: sim4 in, every step done ---
env $CLEAN RECOVERED_IN="$TMP/kill.out" "$DLRUN" -v $SIM -H 'sim[1-4]' --spares 1 \
    --max-restarts 1 --summary "$TMP/kill.json" -- sh "$S" >"$TMP/kill.out" 2>&1 & p=$!
for _ in $(seq 600); do steps_at_least 3 && break; sleep 0.1; done
for _ in $(seq 600); do a=$(pgrep -f "agent .*--node=1 .*$MARK" | head -n 1); [ -n "$a" ] && break; sleep 0.1; done
[ -n "$a" ] && kill -9 "$a"
wait $p
expect_eq "agent of sim2 killed: the job ends well" "$?" 0 || sed 's/^/  | /' "$TMP/kill.out"
expect_grep "  sim2 excluded, sim4 in" "node sim2 excluded: its agent ended with code 137 (killed?); spare sim4 in; restarting 3 ranks, attempt 2 of 2" "$TMP/kill.out"
expect_eq "  every rank did its 30 steps" "$(cat "$S".step.* | sort -u)" 30
expect_eq "  the restart told sim2 is out" "$(grep -c '^1 [0-2] \[sim2\]$' "$S.log")" 3
expect_grep "  summary: sim2 excluded" '"excluded_nodes":\[{"host":"sim2",' "$TMP/kill.json"
expect_grep "  summary: rank 1 on sim4" '{"rank":1,"host":"sim4",' "$TMP/kill.json"
# the recovery's time, its parts adding up (no speed asked of this machine)
line=$(grep -o 'recovered in [0-9.]* s: detection [0-9.]* s, teardown [0-9.]* s, plan [0-9.]* s, start [0-9.]* s$' "$TMP/kill.out")
expect_eq "  -v: the recovery's line" "$(echo "$line" | wc -l)" 1
expect_eq "  its parts add up to the whole (0.1 s rounding)" "$(echo "$line" |
    awk '{ d = $3 - ($6 + $9 + $12 + $15); print (d < 0.25 && d > -0.25) }')" 1
ms=$(grep -o '"recovery_ms":[0-9]*,"detection_ms":[0-9]*,"teardown_ms":[0-9]*,"plan_ms":[0-9]*,"start_ms":[0-9]*}' "$TMP/kill.json")
expect_eq "  summary: recovery_ms = detection + teardown + plan + start" "$(echo "$ms" |
    tr -c '0-9\n' ' ' | awk '{ print ($1 == $2 + $3 + $4 + $5 && $1 > 0 && $1 < 120000) }')" 1
rm -f "$S".*

# --- SIGSEGV in rank 0: sim1's fault ---
env $CLEAN SEGV_RANK=0 "$DLRUN" $SIM -H 'sim[1-4]' --spares 1 --max-restarts 1 \
    -- sh "$S" >"$TMP/segv.out" 2>&1
expect_eq "rank 0 SIGSEGV: the job ends well" "$?" 0 || sed 's/^/  | /' "$TMP/segv.out"
expect_grep "  sim1 excluded" "node sim1 excluded: rank 0 was killed by signal 11" "$TMP/segv.out"
expect_grep "  the next submission" "excluded node: sim1; for the next submission: -H sim4,sim2,sim3" "$TMP/segv.out"
rm -f "$S".*

# --- exit 3: the program's, no spare ---
env $CLEAN "$DLRUN" $SIM -H 'sim[1-4]' --spares 1 --max-restarts 1 \
    -- sh -c 'exit 3' >"$TMP/prog.out" 2>&1
expect_eq "exit 3: dlrun ends with 3" "$?" 3
expect_grep "  restarted on the same nodes" "restarting the job on 3 nodes (restart 1 of 1)" "$TMP/prog.out"
expect_eq "  nothing excluded" "$(grep -c excluded "$TMP/prog.out")" 0

# --- refused where it cannot hold ---
expect_rc "--spares 2 of 2 nodes: refused" 2 env $CLEAN "$DLRUN" $SIM -H 'sim[1-2]' --spares 2 true
expect_grep "  says why" "spares 2: the allocation has 2 nodes" "$TMP/err"
expect_rc "--spares on this host alone: refused" 2 env $CLEAN "$DLRUN" --spares 1 true
expect_grep "  says why" "only for an allocation of several nodes" "$TMP/err"
wait_gone
expect_eq "nothing left" "$(leftovers)" ""
done_testing
