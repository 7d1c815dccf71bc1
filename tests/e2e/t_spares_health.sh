#!/bin/sh
# t_spares_health.sh - --spares' health on this machine alone
# (DLRUN_RELAY_SIM_MS runs every "node"'s agent here, as t_spares_local.sh):
# the spare's agent runs from the job's start, beats and is probed, and
# the nodes of the next attempt are probed before a restart.
# - The spare's agent killed before it is needed: it is dropped with one
#   line; the node fault that follows finds no spare and restarts on the
#   same nodes; the job ends well.  Stopped (SIGSTOP), its heartbeat stops:
#   dropped after --heartbeat-timeout.
# - A node whose probe fails between attempts: the ranks' program is
#   Python and --import names a site's health module (healthmod: the
#   node's scratch folder $HEALTH_DIR/$DLRUN_NODE must be there).  Rank 1
#   removes sim2's folder and exits 1 (the program's fault); the probe
#   before the restart fails on sim2: it is excluded and sim4 comes in.
#   dlrun told to stop while it probes does not restart.
# - A spare that fails its probe from the start is dropped while the job
#   runs.  Waits are hang guards, never assertions.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "no python3"
CLEAN="$NO_SCHED -u DLRUN_BROKER -u DLRUN_TOKEN -u PYTHONPATH DLRUN_RELAY_SIM_MS=0"
mark_sleep spareshealth
S=$TMP/$MARK-step.sh
cat >"$S" <<'EOS'
f=$0.step.$RANK; s=$(cat "$f" 2>/dev/null || echo 0)
while [ "$s" -lt 30 ]; do s=$((s + 1)); echo "$s" >"$f"; sleep 0.1; done
# WAIT_FOR: end only once the head said that line (a busy machine)
if [ -n "${WAIT_FOR:-}" ]; then
    for _ in $(seq 600); do grep -q "$WAIT_FOR" "$OUT" && break; sleep 0.1; done
fi
EOS
P=$TMP/$MARK-step.py
cat >"$P" <<'EOS'
import os, sys, time
rank, restart = os.environ["RANK"], os.environ["DLRUN_RESTART_COUNT"]
f = "%s.step.%s" % (sys.argv[0], rank)
s = int(open(f).read()) if os.path.exists(f) else 0
with open(sys.argv[0] + ".log", "a") as log:
    log.write("%s %s [%s]\n" % (restart, rank, os.environ["DLRUN_EXCLUDED_NODES"]))
while s < 30:
    s += 1
    open(f, "w").write("%d\n" % s)
    if rank == "1" and restart == "0" and os.environ.get("GONE"):
        os.rmdir(os.path.join(os.environ["HEALTH_DIR"], os.environ["GONE"]))
        sys.exit(1)
    time.sleep(0.1)
# WAIT_FOR: end only once the head said that line (a busy machine)
for _ in range(600):
    if not os.environ.get("WAIT_FOR") or os.environ["WAIT_FOR"] in open(os.environ["OUT"]).read():
        break
    time.sleep(0.1)
EOS
export HEALTH_DIR="$TMP/scratch"
cat >"$TMP/healthmod.py" <<'EOS'
import os
node = os.environ.get("DLRUN_NODE", "")
if os.path.exists(os.path.join(os.environ["HEALTH_DIR"], "slow")):
    import time
    time.sleep(5)
if not os.path.isdir(os.path.join(os.environ["HEALTH_DIR"], node)):
    raise ImportError("no scratch folder on " + node)
EOS
steps_at_least() {
    for r in 0 1 2; do v=$(cat "$1.step.$r" 2>/dev/null); [ "${v:-0}" -ge "$2" ] || return 1; done
}

# --- the spare's agent killed before it is needed: dropped; no spare later ---
env $CLEAN "$DLRUN" $SIM -H 'sim[1-4]' --spares 1 --max-restarts 1 \
    --summary "$TMP/drop.json" -- sh "$S" >"$TMP/drop.out" 2>&1 & p=$!
for _ in $(seq 600); do a=$(pgrep -f "agent .*--spare-agent .*$MARK" | head -n 1); [ -n "$a" ] && break; sleep 0.1; done
[ -n "$a" ] && kill -9 "$a"
for _ in $(seq 600); do grep -q "spare sim4 dropped" "$TMP/drop.out" && break; sleep 0.1; done
for _ in $(seq 600); do a=$(pgrep -f "agent .*--node=1 .*$MARK" | head -n 1); [ -n "$a" ] && break; sleep 0.1; done
[ -n "$a" ] && kill -9 "$a"
wait $p
expect_eq "the spare's agent killed, then sim2's: the job ends well" "$?" 0 || sed 's/^/  | /' "$TMP/drop.out"
expect_grep "  the spare dropped, one line" "^dlrun: spare sim4 dropped: its agent ended with code 137 (killed?); 0 spares left$" "$TMP/drop.out"
expect_grep "  sim2's fault finds no spare" "node sim2 failed: its agent ended with code 137 (killed?); no spare left: restarting the job on the same 3 nodes (restart 1 of 1)" "$TMP/drop.out"
expect_eq "  every rank did its 30 steps" "$(cat "$S".step.* | sort -u)" 30
expect_grep "  summary: sim4 out, and why" '"excluded_nodes":\[{"host":"sim4","reason":"its agent ended with code 137 (killed?)","attempt":1,' "$TMP/drop.json"
expect_grep "  the next submission without sim4" "excluded node: sim4; for the next submission: -H sim1,sim2,sim3" "$TMP/drop.out"
rm -f "$S".*

# --- the spare's agent stopped: no heartbeat, dropped; the job goes on ---
env $CLEAN WAIT_FOR="spare sim4 dropped" OUT="$TMP/stop.out" "$DLRUN" $SIM \
    -H 'sim[1-4]' --spares 1 --max-restarts 1 --heartbeat-timeout 2 \
    -- sh "$S" >"$TMP/stop.out" 2>&1 & p=$!
for _ in $(seq 600); do a=$(pgrep -f "agent .*--spare-agent .*$MARK" | head -n 1); [ -n "$a" ] && break; sleep 0.1; done
for _ in $(seq 600); do [ "$(cat "$S".step.0 2>/dev/null)" ] && break; sleep 0.1; done
sleep 1     # its first beats in: a counter that never moved is not lost
[ -n "$a" ] && kill -STOP "$a"
for _ in $(seq 600); do grep -q "spare sim4 dropped" "$TMP/stop.out" && break; sleep 0.1; done
[ -n "$a" ] && kill -CONT "$a"
wait $p
expect_eq "the spare's agent stopped: the job ends well" "$?" 0 || sed 's/^/  | /' "$TMP/stop.out"
expect_grep "  dropped: no heartbeat" "^dlrun: spare sim4 dropped: no heartbeat for 2 s; 0 spares left$" "$TMP/stop.out"
expect_eq "  no restart" "$(grep -c restarting "$TMP/stop.out")" 0
rm -f "$S".*

# --- sim2 fails the health probe between attempts: excluded, sim4 in ---
mkdir -p "$HEALTH_DIR/sim1" "$HEALTH_DIR/sim2" "$HEALTH_DIR/sim3" "$HEALTH_DIR/sim4"
env $CLEAN PYTHONPATH="$TMP" GONE=sim2 "$DLRUN" $SIM -H 'sim[1-4]' --spares 1 \
    --max-restarts 1 --import healthmod --summary "$TMP/probe.json" \
    -- python3 "$P" >"$TMP/probe.out" 2>&1
expect_eq "sim2 fails its probe after rank 1's exit 1: the job ends well" "$?" 0 || sed 's/^/  | /' "$TMP/probe.out"
expect_grep "  one line: the probe named, sim4 in" \
    "^dlrun: node sim2 excluded: probe 'python imports' failed: import healthmod: ImportError: no scratch folder on sim2; spare sim4 in; restarting 3 ranks, attempt 2 of 2$" "$TMP/probe.out"
expect_eq "  every rank did its 30 steps" "$(cat "$P".step.* | sort -u)" 30
expect_eq "  the restart told sim2 is out" "$(grep -c '^1 [0-2] \[sim2\]$' "$P.log")" 3
expect_grep "  summary: rank 1 on sim4" '{"rank":1,"host":"sim4",' "$TMP/probe.json"
expect_grep "  summary: sim2 and the probe" "\"excluded_nodes\":\[{\"host\":\"sim2\",\"reason\":\"probe 'python imports' failed: " "$TMP/probe.json"
rm -f "$P".*

# --- told to stop (SIGTERM) while the nodes are probed: no restart ---
Q=$TMP/$MARK-quit.py
printf 'import sys, time\ntime.sleep(1)\nsys.exit(1)\n' >"$Q"
mkdir -p "$HEALTH_DIR/sim2"
touch "$HEALTH_DIR/slow"
env $CLEAN PYTHONPATH="$TMP" "$DLRUN" -v $SIM -H 'sim[1-4]' --spares 1 \
    --max-restarts 3 --import healthmod -- python3 "$Q" >"$TMP/term.out" 2>&1 & p=$!
# -v: the probes' agents are the second start (their import takes 5 s)
for _ in $(seq 600); do [ "$(grep -c "agents started" "$TMP/term.out")" -ge 2 ] && break; sleep 0.1; done
sleep 0.5
kill -TERM $p
wait $p
expect_eq "SIGTERM while probing: 143" "$?" 143 || sed 's/^/  | /' "$TMP/term.out"
expect_grep "  one line" "^dlrun: stopped by signal 15 while probing the nodes: not restarting$" "$TMP/term.out"
expect_eq "  no restart" "$(grep -c 'restarting [0-9]* ranks\|restarting the job' "$TMP/term.out")" 0
rm -f "$HEALTH_DIR/slow"

# --- the spare fails its probe from the start: dropped while the job runs ---
rmdir "$HEALTH_DIR/sim4"
env $CLEAN PYTHONPATH="$TMP" WAIT_FOR="spare sim4 dropped" OUT="$TMP/bad.out" \
    "$DLRUN" $SIM -H 'sim[1-4]' --spares 1 --import healthmod \
    -- python3 "$P" >"$TMP/bad.out" 2>&1
expect_eq "a spare that fails its probe: the job ends well" "$?" 0 || sed 's/^/  | /' "$TMP/bad.out"
expect_grep "  dropped, the probe named" \
    "^dlrun: spare sim4 dropped: probe 'python imports' failed: import healthmod: ImportError: no scratch folder on sim4; 0 spares left$" "$TMP/bad.out"
rm -f "$P".*
wait_gone
expect_eq "nothing left" "$(leftovers)" ""
done_testing
