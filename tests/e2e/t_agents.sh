#!/bin/sh
# t_agents.sh - the head, its agents and the relays on this machine alone:
# DLRUN_RELAY_SIM_MS makes `dlrun relay` run the agent here instead of over
# ssh, so the whole multi-node machinery (tree, rendezvous through the
# broker, heartbeats, forwarded signals, lifelines, restarts, summary) runs
# without the cluster, and under ASan.  t_ssh.sh does the same over real
# ssh between the cluster's nodes.
. "$(dirname "$0")/lib.sh"
CLEAN="$NO_SCHED -u DLRUN_BROKER -u DLRUN_TOKEN DLRUN_RELAY_SIM_MS=0"
mark_sleep agents
run() { env $CLEAN "$DLRUN" $SIM "$@"; }     # not for `&`: use env directly

# --- 8 nodes, a tree of fan-out 2: every rank once, with one rendezvous ---
run -H 'sim[1-8]:2' --fanout 2 --tf-config -- sh -c \
    'echo "$RANK $LOCAL_RANK $NODE_RANK $MASTER_ADDR:$MASTER_PORT" "$(echo "$TF_CONFIG" | sed "s/,.task.*//")"' \
    >"$TMP/tree.out" 2>"$TMP/tree.err"
expect_eq "16 ranks through a tree of agents, each once" \
    "$(cut -d' ' -f1 "$TMP/tree.out" | sort -n | tr '\n' ' ')" "$(seq 0 15 | tr '\n' ' ')" ||
    sed 's/^/  | /' "$TMP/tree.err"
expect_eq "  rank 13: local rank 1 of node 6" "$(awk '$1 == 13 { print $2, $3 }' "$TMP/tree.out")" "1 6"
expect_eq "  one MASTER_PORT and one TF_CONFIG for all" "$(cut -d' ' -f4- "$TMP/tree.out" | sort -u | wc -l | tr -d ' ')" 1
expect_eq "  16 different TF_CONFIG worker ports" \
    "$(head -n 1 "$TMP/tree.out" | grep -o 'sim[0-9]*:[0-9]*' | sort -u | wc -l | tr -d ' ')" 16

# --- a failing rank deep in the tree ends everything, naming it ---
run -H 'sim[1-8]:1' --fanout 2 -- sh -c \
    '[ $RANK = 6 ] && exit 3; exec "$0" 60' "$TMP/$MARK-sleep" >"$TMP/fail.out" 2>&1
expect_eq "rank 6 exits 3: dlrun's code" "$?" 3
expect_grep "  names rank and host" "rank 6 (host sim7, pid [0-9]*) exited with code 3; stopped the job on 8 nodes" "$TMP/fail.out"
wait_gone
expect_eq "  nothing left" "$(leftovers)" ""

# --- USR1 then TERM reach every rank through the broker ---
cat >"$TMP/rec.sh" <<'EOS'
trap 'echo USR1 >"$0.usr1.$RANK"' USR1
trap 'echo TERM >"$0.term.$RANK"; exit 0' TERM
touch "$0.up.$RANK"
while :; do sleep 0.1; done
EOS
env $CLEAN "$DLRUN" $SIM -H 'sim[1-4]:2' --fanout 2 -- sh "$TMP/rec.sh" >"$TMP/sig.out" 2>&1 & p=$!
for _ in $(seq 1200); do [ "$(ls "$TMP"/rec.sh.up.* 2>/dev/null | wc -l)" -eq 8 ] && break; sleep 0.1; done
kill -USR1 $p
for _ in $(seq 1200); do [ "$(ls "$TMP"/rec.sh.usr1.* 2>/dev/null | wc -l)" -eq 8 ] && break; sleep 0.1; done
kill -TERM $p; wait $p
expect_eq "USR1 reached all 8 ranks" "$(ls "$TMP"/rec.sh.usr1.* 2>/dev/null | wc -l | tr -d ' ')" 8
expect_eq "  TERM too" "$(ls "$TMP"/rec.sh.term.* 2>/dev/null | wc -l | tr -d ' ')" 8

# --- a stopped agent (no heartbeat) ends the job ---
env $CLEAN "$DLRUN" $SIM -H 'sim[1-4]:1' --heartbeat-timeout 2 --kill-timeout 2 -- \
    "$TMP/$MARK-sleep" 60 >"$TMP/lost.out" 2>&1 & p=$!
for _ in $(seq 1200); do a=$(pgrep -f "agent .*--node=2 .*$MARK" | head -n 1); [ -n "$a" ] && break; sleep 0.1; done
# never "kill 0": with no pid found, that would stop this test's own group
if [ -n "$a" ]; then sleep 1; kill -STOP "$a"; else fail "the agent of sim3 not found"; kill "$p"; fi
wait $p; rc=$?
[ -z "$a" ] || kill -CONT "$a" 2>/dev/null
expect_eq "agent of sim3 stopped: dlrun fails" "$rc" 1
expect_grep "  names the lost agent" "lost the agent on sim3: no heartbeat for 2 s" "$TMP/lost.out"
wait_gone
expect_eq "  nothing left" "$(leftovers)" ""

# --- the head stopped (as a node sees a cut link): every agent ends its
# ranks and itself while the head stays stopped; the status it sends each
# second must not hold the loop that ends the ranks for the broker's usual
# 30 s answer grace (20 s here is a hang guard: it takes about 1 s) ---
env $CLEAN "$DLRUN" $SIM -H 'sim[1-3]:1' --heartbeat-timeout 2 -- \
    "$TMP/$MARK-sleep" 600 >"$TMP/stop.out" 2>&1 & p=$!
ranks_up 3
kill -STOP $p
for _ in $(seq 600); do [ "$(grep -c 'lost the head' "$TMP/stop.out")" -eq 3 ] && break; sleep 0.1; done
expect_eq "head stopped: each agent says it lost the head" "$(grep -c 'lost the head' "$TMP/stop.out")" 3
# the stopped head itself carries the mark too
others() { leftovers | grep -vx "$p"; }
for _ in $(seq 200); do [ -z "$(others)" ] && break; sleep 0.1; done
expect_eq "  ranks and agents end while the head is stopped" "$(others)" ""
kill -CONT $p; wait $p; rc=$?
expect_eq "  the head, continued, ends the job failed" "$([ "$rc" -ne 0 ] && echo failed)" failed
# which it sees first, an agent's end or the missed beats, is a race
expect_grep "  saying its agents ended" "\(the agent on sim[1-3] ended with code 143\|lost the agent on sim[1-3]: no heartbeat for 2 s (killed, or its network is down)\); stopped the job on 3 nodes" "$TMP/stop.out"

# --- the head killed: every agent sees its lifeline close ---
env $CLEAN "$DLRUN" $SIM -H 'sim[1-4]:1' --fanout 2 -- "$TMP/$MARK-sleep" 60 >/dev/null 2>&1 & p=$!
# wait for the 4 ranks themselves (simulated relays run their agent in
# place, so counting every marked process would wait for ones never made)
ranks_up 4
expect_eq "the 4 ranks started" "$(ps -eo args= | grep -c "^$SLEEP 60")" 4
kill -9 $p
wait_gone
expect_eq "head SIGKILLed: nothing left" "$(leftovers)" ""

# --- restarts and the summary across nodes ---
run -H 'sim[1-3]:2' --max-restarts 1 --summary "$TMP/sum.json" -- sh -c \
    '[ $RANK = 4 ] && [ $DLRUN_RESTART_COUNT = 0 ] && exit 5; echo "ok $RANK $TORCHELASTIC_RESTART_COUNT"' >"$TMP/re.out" 2>&1
expect_eq "rank 4 fails once, --max-restarts 1: success" "$?" 0
expect_eq "  all 6 ranks ran again with restart count 1" "$(grep -c '^ok [0-5] 1$' "$TMP/re.out")" 6
expect_grep "  --summary: 1 restart, 6 ranks" '"restarts":1,"world_size":6,"failed_rank":-1' "$TMP/sum.json"
expect_eq "  hosts of the summary" "$(grep -o '"host":"sim[0-9]"' "$TMP/sum.json" | sort | uniq -c | awk '{ printf "%s ", $1 }')" "2 2 2 "
# --- --launcher: a bad name, or local for other hosts, is one line, exit 2 ---
expect_rc "--launcher pdsh refused" 2 env $CLEAN "$DLRUN" $SIM -H 'sim[1-2]:1' --launcher pdsh -- true
expect_eq "  one line listing the launchers" "$(cat "$TMP/err")" \
    "dlrun: --launcher pdsh: no such launcher; expected local, srun, ssh or flux"
expect_rc "--launcher local with other hosts refused" 2 env $CLEAN "$DLRUN" $SIM -H 'sim[1-2]:1' --launcher local -- true
expect_eq "  one line saying what to use" "$(cat "$TMP/err")" \
    "dlrun: --launcher local cannot run this plan: it starts ranks on this host only; use srun (inside Slurm), flux (inside Flux) or ssh"
expect_rc "--launcher fork (Hydra's local) on this host alone" 0 env $CLEAN "$DLRUN" -np 2 --launcher fork -- true
done_testing
