#!/bin/sh
# t_shrink_local.sh - --nnodes MIN:MAX in an allocation on this machine
# alone: DLRUN_RELAY_SIM_MS runs every "node"'s agent here (as
# t_spares_local.sh), so the job shrinking after node faults runs without
# the cluster, and under ASan.  Four nodes, --spares 1 --nnodes 2:3, two
# ranks a node: the agent of sim2 killed takes the spare, the agent of
# sim3 killed then shrinks the job to 2 nodes (4 ranks, every framework's
# variables following) and it ends well; a third node fault, below MIN,
# ends the job with one line and exit 125.  An salloc shell's allocation
# takes MIN:MAX too, one srun task refuses it.  Elastic --nnodes with -np
# and --spares not fewer than the job's nodes at script time are refused.
. "$(dirname "$0")/lib.sh"
CLEAN="$NO_SCHED -u DLRUN_BROKER -u DLRUN_TOKEN DLRUN_RELAY_SIM_MS=0"
mark_sleep shrink
S=$TMP/$MARK-rank.sh
# each rank logs what it was given; the ranks of attempt FINISH_AT (the
# restart count) end after a few steps, the others wait to be ended
cat >"$S" <<'EOS'
w=$(printf '%s' "$TF_CONFIG" | grep -o '"sim[0-9]*:[0-9]*"' | wc -l)
echo "$DLRUN_RESTART_COUNT $RANK $WORLD_SIZE $LOCAL_RANK $LOCAL_WORLD_SIZE $GROUP_RANK $GROUP_WORLD_SIZE $HOROVOD_SIZE $JAX_NUM_PROCESSES tf=$w [$DLRUN_EXCLUDED_NODES]" >>"$0.log"
if [ "$DLRUN_RESTART_COUNT" = "${FINISH_AT:-x}" ]; then
    for _ in 1 2 3; do "$SLEEP" 0.1; done
    exit 0
fi
while :; do "$SLEEP" 0.2; done
EOS
# logged N R: until N lines of the ranks of restart R are in, while dlrun
# ($p) runs (a hang guard: 2 minutes)
logged() {
    for _ in $(seq 1200); do
        n=$(grep -c "^$2 " "$S.log" 2>/dev/null)
        [ "${n:-0}" -ge "$1" ] && return 0
        kill -0 "$p" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}
# kill_agent NODE: SIGKILL to the agent of plan node NODE
kill_agent() {
    a=
    for _ in $(seq 600); do
        a=$(pgrep -f "agent .*--node=$1 .*$MARK" | head -n 1)
        [ -n "$a" ] && break
        sleep 0.1
    done
    [ -n "$a" ] && kill -9 "$a"
}
RUN="--tf-config yes --nproc-per-node 2 --spares 1 --nnodes 2:3 --max-restarts 3"

# --- sim2's agent killed: sim4 in; then sim3's: 2 nodes, 4 ranks ---
env $CLEAN SLEEP="$SLEEP" FINISH_AT=2 "$DLRUN" $SIM -H 'sim[1-4]' $RUN \
    --summary "$TMP/a.json" -- sh "$S" >"$TMP/a.out" 2>&1 & p=$!
logged 6 0 && kill_agent 1          # sim2: plan node 1
logged 6 1 && kill_agent 2          # sim3: node 2 of sim1,sim4,sim3
wait $p
expect_eq "two node faults: the job ends well" "$?" 0 || sed 's/^/  | /' "$TMP/a.out"
expect_grep "  sim2 excluded, sim4 in" "node sim2 excluded: its agent ended with code 137 (killed?); spare sim4 in; restarting 6 ranks, attempt 2 of 4" "$TMP/a.out"
expect_grep "  sim3 excluded: shrinking" "node sim3 excluded: its agent ended with code 137 (killed?); no spare left; shrinking to 2 nodes (4 ranks), attempt 3 of 4" "$TMP/a.out"
expect_grep "  the next submission" "excluded nodes: sim2,sim3; for the next submission: -H sim1,sim4" "$TMP/a.out"
expect_eq "  attempt 1: 6 ranks, 3 nodes" "$(grep -c '^0 [0-5] 6 [01] 2 [0-2] 3 6 6 tf=6 \[\]$' "$S.log")" 6
expect_eq "  attempt 2: the same world, sim2 out" "$(grep -c '^1 [0-5] 6 [01] 2 [0-2] 3 6 6 tf=6 \[sim2\]$' "$S.log")" 6
expect_eq "  attempt 3: WORLD_SIZE, GROUP_*, Horovod, JAX, TF_CONFIG of 4 ranks on 2 nodes" \
    "$(grep -c '^2 [0-3] 4 [01] 2 [01] 2 4 4 tf=4 \[sim2,sim3\]$' "$S.log")" 4
expect_eq "  attempt 3: ranks 0 to 3, once each" "$(grep '^2 ' "$S.log" | cut -d' ' -f2 | sort | tr '\n' ' ')" "0 1 2 3 "
expect_grep "  summary: the world sizes shrink" '"attempts":\[{"attempt":1,"world_size":6,"nodes":\["sim1","sim2","sim3"\]},{"attempt":2,"world_size":6,"nodes":\["sim1","sim4","sim3"\]},{"attempt":3,"world_size":4,"nodes":\["sim1","sim4"\]}\]' "$TMP/a.json"
expect_grep "  summary: both excluded" '"excluded_nodes":\[{"host":"sim2",.*{"host":"sim3","reason":"its agent ended with code 137 (killed?)","attempt":2,' "$TMP/a.json"
expect_grep "  summary: world_size 4, exit 0" '"exit_code":0,"restarts":2,"world_size":4,' "$TMP/a.json"
rm -f "$S".*

# --- a third node fault, with 2 nodes left of MIN 2: the end ---
env $CLEAN SLEEP="$SLEEP" "$DLRUN" $SIM -H 'sim[1-4]' $RUN \
    --summary "$TMP/b.json" -- sh "$S" >"$TMP/b.out" 2>&1 & p=$!
logged 6 0 && kill_agent 1
logged 6 1 && kill_agent 2
logged 4 2 && kill_agent 0          # sim1
wait $p
expect_eq "below MIN: exit 125" "$?" 125 || sed 's/^/  | /' "$TMP/b.out"
expect_grep "  one line: what, where, how to fix" "^dlrun: node sim1 excluded: its agent ended with code 137 (killed?); no spare left and 1 node remains, fewer than --nnodes 2:3's minimum: the job ends; run it again on more nodes or with a lower MIN$" "$TMP/b.out"
expect_eq "  no fourth attempt" "$(grep -c '^3 ' "$S.log")" 0
expect_grep "  the next submission: the node left" "excluded nodes: sim2,sim3,sim1; for the next submission: -H sim4" "$TMP/b.out"
expect_grep "  summary: exit 125, sim1 excluded in attempt 3" '"exit_code":125,.*{"host":"sim1","reason":"its agent ended with code 137 (killed?)","attempt":3,' "$TMP/b.json"
rm -f "$S".*

# --- a program fault at MIN never shrinks ---
env $CLEAN "$DLRUN" $SIM -H 'sim[1-2]' --nnodes 2:3 --max-restarts 1 \
    -- sh -c 'exit 3' >"$TMP/prog.out" 2>&1
expect_eq "exit 3 at MIN: dlrun ends with 3" "$?" 3
expect_grep "  restarted on the same nodes" "restarting the job on 2 nodes (restart 1 of 1)" "$TMP/prog.out"
expect_eq "  nothing excluded" "$(grep -c excluded "$TMP/prog.out")" 0

# --- under Slurm (the captured environments of an salloc -N2 shell and of
# one srun task in it): the job's allocation shrinks; one task of a step
# is no allocation dlrun starts ---
FIX=$TOP/tests/fixtures/slurm
expect_rc "salloc -N2: --nnodes 1:2 planned on both nodes" 0 env -i PATH="$PATH" $(grep -v '^#' "$FIX/salloc-N2.env") "$DLRUN" plan --nnodes 1:2 --nproc-per-node 2 --max-restarts 1 true
expect_grep "  4 ranks on 2 nodes" "^layout: *4 ranks on 2 nodes" "$TMP/out"
expect_rc "an srun task: --nnodes 1:2 refused" 2 env -i PATH="$PATH" $(grep -v '^#' "$FIX/salloc-step-rank0.env") "$DLRUN" plan --nnodes 1:2 --nproc-per-node 2 true
expect_grep "  names where" "(elastic): only in an allocation .*, not slurm-step; else give --nnodes N" "$TMP/err"

# --- refused ---
expect_rc "--nnodes 2:3 with -np: refused" 2 env $CLEAN "$DLRUN" $SIM -H 'sim[1-4]' --nnodes 2:3 -np 4 true
expect_grep "  says why" "give --nproc-per-node instead of -np" "$TMP/err"
expect_rc "--nnodes 4:5 --spares 1 on 4 nodes: refused" 2 env $CLEAN "$DLRUN" $SIM -H 'sim[1-4]' --nnodes 4:5 --spares 1 true
expect_grep "  says why" "fewer than 4 to run on" "$TMP/err"
expect_rc "dlrun script -N 1 --spares 1: refused" 2 env $CLEAN "$DLRUN" script -N 1 --spares 1 --scheduler slurm python t.py
expect_eq "  in one line" "$(cat "$TMP/err")" "dlrun: --spares 1: the job asks for 1 node; hold fewer in reserve than it has, or ask for more nodes (-N)"
wait_gone
expect_eq "nothing left" "$(leftovers)" ""
done_testing
