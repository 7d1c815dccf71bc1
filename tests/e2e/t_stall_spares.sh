#!/bin/sh
# t_stall_spares.sh - a stall that --stall-timeout localises to one node
# is that node's fault: with --spares the node is excluded, a spare takes
# its place and the job restarts (against --max-restarts); a stall of
# every rank alike is the program's hang and costs no spare.  On this
# machine alone: DLRUN_RELAY_SIM_MS runs every "node"'s agent here (as
# t_spares_local.sh), so it runs under ASan too.  The ranks are Python:
# the stall report names each rank's frame, and the rank of sim2 waits in
# a function of its own while the others wait for a file it never writes;
# then a native rank of sim2 that spins (its stack does not move) while
# the others sleep.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "skip: no $PY"; exit 77; }
CLEAN="$NO_SCHED -u DLRUN_BROKER -u DLRUN_TOKEN -u PYTHONFAULTHANDLER
    DLRUN_RELAY_SIM_MS=0"
mark_sleep stallsp
R=$TMP/$MARK-rank.py
cat >"$R" <<'EOS'
import os, sys, time

def stuck():
    time.sleep(100000)

def wait_peer(path):
    while not os.path.exists(path):
        time.sleep(0.2)

rank, restart = os.environ["RANK"], os.environ["DLRUN_RESTART_COUNT"]
print("up", rank, restart, "[%s]" % os.environ.get("DLRUN_EXCLUDED_NODES", ""),
      flush=True)
if restart == "0":
    if rank == os.environ.get("STUCK_RANK"):
        stuck()
    wait_peer(sys.argv[1] + ".never")
EOS
run() { env $CLEAN timeout -s KILL 300 "$DLRUN" $SIM -H 'sim[1-4]' \
    --spares 1 --max-restarts 1 --stall-timeout 2 "$@"; }

# --- rank 1 (sim2) stops in a place of its own, the others wait on it ---
STUCK_RANK=1 run -- $PY "$R" "$R" >"$TMP/node.out" 2>"$TMP/node.err"
expect_eq "sim2's rank stalls alone: the job ends well" "$?" 0 ||
    sed 's/^/  | /' "$TMP/node.err"
expect_grep "  the stall line, the odd one out first" \
    "^dlrun: stalled 2 s: rank 1 (sim2) in stuck (.*rank.py:4); ranks 0 (sim1), 2 (sim3) in wait_peer" "$TMP/node.err"
expect_grep "  sim2 excluded, sim4 in" \
    "node sim2 excluded: its rank 1 stalled for 2 s in stuck (.*rank.py:4) while the others waited elsewhere (--stall-timeout); spare sim4 in; restarting 3 ranks, attempt 2 of 2" "$TMP/node.err"
expect_eq "  the restart told sim2 is out" "$(grep -c '^up [0-2] 1 \[sim2\]$' "$TMP/node.out")" 3
expect_eq "  one exclusion" "$(grep -c excluded: "$TMP/node.err")" 1

# --- every rank waits alike: the program's hang, no spare ---
run -- $PY "$R" "$R" >"$TMP/hang.out" 2>"$TMP/hang.err"
expect_eq "every rank stalls alike: the restart ends well" "$?" 0 ||
    sed 's/^/  | /' "$TMP/hang.err"
expect_grep "  the stall line: one group" \
    "^dlrun: stalled 2 s: ranks 0 (sim1), 1 (sim2), 2 (sim3) in wait_peer" "$TMP/hang.err"
expect_grep "  restarted on the same nodes" "restarting the job on 3 nodes (restart 1 of 1)" "$TMP/hang.err"
expect_eq "  nothing excluded" "$(grep -c excluded "$TMP/hang.err")" 0
expect_eq "  the restart told nothing is out" "$(grep -c '^up [0-2] 1 \[\]$' "$TMP/hang.out")" 3

# --- a native rank of sim2 spins (its stack does not move), the others
#     sleep: the same through the stacks ---
scope=$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo 0)
if ! command -v cc >/dev/null 2>&1; then
    echo "skip: no C compiler (the spinning case)"
elif [ "$scope" -ge 3 ] || { [ "$scope" -ge 1 ] && [ "$(id -u)" != 0 ]; }; then
    echo "skip: ptrace is restricted here (the spinning case)"
elif cc -O0 -o "$TMP/$MARK-spin" "$E2E/stall_spin.c"; then
    cat >"$TMP/$MARK-spin.sh" <<'EOS'
echo "up $RANK $DLRUN_RESTART_COUNT [$DLRUN_EXCLUDED_NODES]"
[ "$DLRUN_RESTART_COUNT" = 0 ] || exit 0
[ "$RANK" = 1 ] && exec "$0.bin" spin
exec "$0.sleep" 600
EOS
    mv "$TMP/$MARK-spin" "$TMP/$MARK-spin.sh.bin"
    ln -s "$SLEEP" "$TMP/$MARK-spin.sh.sleep"
    env $CLEAN timeout -s KILL 300 "$DLRUN" $SIM -H 'sim[1-4]' --spares 1         --max-restarts 1 --stall-timeout 4 -- sh "$TMP/$MARK-spin.sh"         >"$TMP/spin.out" 2>"$TMP/spin.err"
    expect_eq "sim2's rank spins alone: the job ends well" "$?" 0 ||
        sed 's/^/  | /' "$TMP/spin.err"
    expect_grep "  sim2 excluded, its stack not moving, sim4 in" \
        "node sim2 excluded: its rank 1 stalled for 4 s (stack not moving) while the others waited elsewhere (--stall-timeout); spare sim4 in; restarting 3 ranks, attempt 2 of 2" "$TMP/spin.err"
    expect_eq "  the restart told sim2 is out" "$(grep -c '^up [0-2] 1 \[sim2\]$' "$TMP/spin.out")" 3
else
    fail "cc"
fi

wait_gone
expect_eq "nothing left" "$(leftovers)" ""
done_testing
