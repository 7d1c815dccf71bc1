#!/bin/sh
# t_stall.sh - --stall-timeout on one node: a PyTorch DDP (gloo) job with
# a rank that stops inside its training loop is ended with a report (the
# Python stack of every rank, the line naming where they wait), exit 124,
# nothing left running; a job that computes without printing, and one
# that only reports progress, are not stalled; --max-restarts restarts a
# stalled job.  Timeouts below are hang guards, never speed checks.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
CLEAN="$NO_SCHED -u DLRUN_BROKER
    -u PYTHONFAULTHANDLER"
run() { env $CLEAN timeout -s KILL 900 "$DLRUN" "$@"; }
# left_running MARK: processes whose command line holds MARK
left_running() { pgrep -f "$1" | grep -v "^$$\$" | wc -l | tr -d ' '; }

# --- bad values: one line, exit 2 ---
expect_rc "--stall-timeout 5x refused" 2 run -np 1 --stall-timeout 5x true
expect_eq "one line naming the option" "$(wc -l <"$TMP/err" | tr -d ' ')" 1
expect_grep "says what it wants" "--stall-timeout '5x'.*like 600, 90s" "$TMP/err"

# --- a site profile sets it through dlrun-options, checked when read ---
printf 'profiles:\n  w:\n    scheduler: slurm\n    dlrun-options: [--stall-timeout, %s]\n' 30m >"$TMP/s.yaml"
printf 'profiles:\n  w:\n    scheduler: slurm\n    dlrun-options: [--stall-timeout, %s]\n' 5x >"$TMP/bad.yaml"
expect_rc "dlrun script: a profile's --stall-timeout" 0 "$DLRUN" script --config "$TMP/s.yaml" -P w -N 2 python3 t.py
expect_grep "  reaches the dlrun line" "^exec dlrun --stall-timeout 30m -- python3 t.py" "$TMP/out"
expect_rc "  a bad one refused" 2 "$DLRUN" script --config "$TMP/bad.yaml" -P w -N 2 python3 t.py
expect_grep "  naming it" "dlrun line: --stall-timeout '5x'" "$TMP/err"

# --- per-task mode (srun dlrun PROG): nothing watches, rank 0 says so ---
STEP="SLURM_JOB_ID=77 SLURM_STEP_ID=3 SLURM_STEP_NODELIST=$(hostname),other
    SLURM_STEP_NUM_NODES=2 SLURM_STEP_NUM_TASKS=4 SLURM_STEP_TASKS_PER_NODE=2(x2)
    SLURM_LOCALID=0 SLURM_NODEID=0"
expect_rc "per-task rank 0 runs" 0 env $CLEAN $STEP SLURM_PROCID=0 "$DLRUN" --stall-timeout 5 true
expect_grep "  and warns that nothing watches" "warning: --stall-timeout is not watched" "$TMP/err"
expect_rc "per-task rank 1 runs" 0 env $CLEAN $STEP SLURM_PROCID=1 "$DLRUN" --stall-timeout 5 true
expect_eq "  silently" "$(cat "$TMP/err")" ""

# --- native ranks that sleep: stalled, reported, restarted, exit 124 ---
expect_rc "sleeping ranks stall (exit 124)" 124 run -np 2 --oversubscribe \
    --stall-timeout 2 --max-restarts 1 sh -c 'echo "up $RANK"; exec sleep 600'
expect_grep "report: each rank's state and wait channel" \
    "rank 1 (host .*, pid [0-9]*): state S, waits in .*, CPU 0.[0-9]* s in the window, last line [0-9]* s ago: \"up 1\"" "$TMP/err"
expect_grep "a native rank's threads" "rank 0's threads (\(gdb\|eu-stack\|kernel\))" "$TMP/err"
expect_grep "a stall is a failure: the job restarts" "restarting the job (restart 1 of 1)" "$TMP/err"
expect_grep "the last line names the ranks and where" "^dlrun: stalled [0-9]* s: ranks 0, 1 (.*) in " "$TMP/err"
expect_eq "two stalls, two lines" "$(grep -c '^dlrun: stalled ' "$TMP/err")" 2
expect_eq "the stall line is the last" "$(tail -1 "$TMP/err" | cut -c1-15)" "dlrun: stalled "

# --- across (simulated) nodes: the agents report, the head decides ---
# DLRUN_RELAY_SIM_MS runs each node's agent here (see t_agents.sh)
sim() { env $CLEAN -u DLRUN_TOKEN DLRUN_RELAY_SIM_MS=0 timeout -s KILL 900 \
    "$DLRUN" $SIM "$@"; }
expect_rc "two nodes of sleeping ranks stall (exit 124)" 124 sim -H 'sim[1-2]:2' \
    --stall-timeout 2 -- sh -c 'echo "up $RANK"; exec sleep 600'
expect_grep "  each agent reports its node's ranks" "the ranks on sim2:" "$TMP/err"
expect_grep "  rank 3 on sim2" "rank 3 (host sim2, pid [0-9]*): state S" "$TMP/err"
expect_grep "  the head's line names every node" \
    "^dlrun: stalled 2 s: ranks 0, 1 (sim1), 2, 3 (sim2) in " "$TMP/err"
expect_eq "  the stall line is the last" "$(tail -1 "$TMP/err" | cut -c1-15)" "dlrun: stalled "
expect_rc "across nodes a stall restarts the job (--max-restarts 1)" 124 sim \
    -H 'sim[1-2]:1' --stall-timeout 2 --max-restarts 1 -- sh -c 'echo "up $RANK"; exec sleep 600'
expect_grep "  restarted" "restarting the job on 2 nodes (restart 1 of 1)" "$TMP/err"
expect_eq "  two stalls, two lines" "$(grep -c '^dlrun: stalled ' "$TMP/err")" 2
# one node busy keeps the job alive: the head needs every node quiet
expect_rc "one computing node keeps the job alive" 0 sim -H 'sim[1-2]:1' \
    --stall-timeout 2 -- sh -c '[ $RANK = 1 ] || exec sleep 6
    end=$(($(date +%s) + 9)); while [ $(date +%s) -lt $end ]; do :; done'
expect_eq "  no stall said" "$(grep -c stalled "$TMP/err")" 0

# --- a job that computes without a word for longer than the timeout ---
expect_rc "busy, silent ranks are not stalled" 0 run -np 2 --oversubscribe \
    --stall-timeout 2 $PY -c '
import time
t = time.time()
while time.time() - t < 8:
    pass'
expect_eq "no stall said" "$(grep -c stalled "$TMP/err")" 0

# --- a rank that only reports progress (dlrun_kv.progress), else sleeps ---
cat >"$TMP/prog.py" <<'EOS'
import os, sys, time
sys.path.insert(0, os.environ["KVDIR"])
import dlrun_kv
for i in range(16):
    time.sleep(0.5)
    if os.environ.get("REPORT") == "1":
        dlrun_kv.progress()
EOS
KVDIR=$TOP/contrib/python; export KVDIR
REPORT=1 expect_rc "progress alone keeps a quiet job alive" 0 run -np 2 \
    --oversubscribe --stall-timeout 3 $PY "$TMP/prog.py"
expect_eq "no stall said" "$(grep -c stalled "$TMP/err")" 0
REPORT=0 expect_rc "the same job without progress stalls" 124 run -np 2 \
    --oversubscribe --stall-timeout 3 $PY "$TMP/prog.py"

# --- the same through libdlrun's dlrun_progress(), from a thread ---
BUILD_DIR=$(cd "$(dirname "$DLRUN")" && pwd)
SAN_CFLAGS=''
ldd "$DLRUN" 2>/dev/null | grep -q libasan && SAN_CFLAGS="-fsanitize=address,undefined"
if [ -e "$BUILD_DIR/libdlrun.so" ] && command -v cc >/dev/null 2>&1 &&
   cc -std=c11 -Wall -Wextra -Werror $SAN_CFLAGS -pthread -I"$TOP/contrib/include" \
      -o "$TMP/progress" "$E2E/stall_progress.c" -L"$BUILD_DIR" -ldlrun \
      -Wl,-rpath,"$BUILD_DIR"; then
    REPORT=1 expect_rc "dlrun_progress() keeps a quiet rank alive" 0 run -np 2 \
        --oversubscribe --stall-timeout 2 "$TMP/progress" 6
    expect_eq "  no stall said" "$(grep -c stalled "$TMP/err")" 0
    REPORT=0 expect_rc "  without it the rank stalls" 124 run -np 2 \
        --oversubscribe --stall-timeout 2 "$TMP/progress" 30
else
    echo "skip: no cc or no $BUILD_DIR/libdlrun.so: dlrun_progress() not tested"
fi

# --- dlrun told to stop says in one line what it did (issue 15 §3) ---
rm -f "$TMP/out"
env $CLEAN "$DLRUN" -np 2 --oversubscribe --kill-timeout 1 sh -c \
    '[ $RANK = 1 ] && trap "" TERM; echo up; exec sleep 60' >"$TMP/out" 2>"$TMP/err" &
pid=$!
for _ in $(seq 600); do [ "$(grep -c up "$TMP/out")" = 2 ] && break; sleep 0.1; done
kill -TERM $pid; wait $pid; rc=$?
expect_eq "SIGTERM: dlrun's exit code" "$rc" 143
expect_eq "  one line" "$(cat "$TMP/err")" \
    "dlrun: SIGTERM: passed it to the 2 ranks, then SIGKILL to 1 that had not ended; exit 143"

# --- SIGPWR: the same report on demand, the job goes on ---
# (the last test's "up" lines must not count: the job below may start late)
rm -f "$TMP/out"
env $CLEAN "$DLRUN" -np 2 --oversubscribe --stall-timeout 1h sh -c \
    'echo up; exec sleep 6' >"$TMP/out" 2>"$TMP/err" &
pid=$!
for _ in $(seq 600); do [ "$(grep -c up "$TMP/out")" = 2 ] && break; sleep 0.1; done
kill -PWR $pid; wait $pid; rc=$?
expect_eq "SIGPWR: the job still ends by itself" "$rc" 0
expect_grep "  a report on demand" "^dlrun: report asked for (SIGPWR)" "$TMP/err"
expect_grep "  with the ranks' lines" "rank 1 (host .*): state " "$TMP/err"
expect_eq "  no stall" "$(grep -c stalled "$TMP/err")" 0

# --- DDP (gloo): rank 1 stops inside the loop, the others wait in the
#     all-reduce of backward ---
if ! $PY -c 'import torch.distributed' 2>/dev/null; then
    echo "skip: no torch for $PY (the DDP cases)"
    done_testing
fi
MARK=stall-ddp-$$
expect_rc "DDP job with a stuck rank ends (exit 124)" 124 run -np 3 \
    --oversubscribe --stall-timeout 5 env STALL_RANK=1 "MARK=$MARK" \
    $PY "$E2E/stall_ddp.py" "$MARK"
expect_grep "the ranks trained first" "rank 0 step 2 loss" "$TMP/out"
expect_grep "rank 1 is reported waiting on its pipe" \
    "rank 1 (host .*Python): state S, waits in .*pipe" "$TMP/err"
expect_eq "every rank's Python stack (faulthandler)" \
    "$(grep -c '^Current thread' "$TMP/err")" 3
expect_grep "the line names the stuck rank and its function" \
    "^dlrun: stalled [0-9]* s: rank 1 (.*) in stuck_forever (stall_ddp.py:[0-9]*); ranks 0, 2 (.*) in backward" "$TMP/err"
# reported within the timeout plus a generous guard of the last line
age=$(sed -n 's/.*rank 1 (host .*last line \([0-9]*\) s ago.*/\1/p' "$TMP/err")
[ -n "$age" ] && [ "$age" -lt 120 ] && pass "ended $age s after the stuck rank's last line" ||
    fail "rank 1's last line was '$age' s before the stall report"
sleep 1
expect_eq "nothing left running" "$(left_running "$MARK")" 0

# the same across two (simulated) nodes: rank 2 stops on sim2
MARK=stall-ddp-sim-$$
expect_rc "DDP across two nodes with a stuck rank ends (exit 124)" 124 sim \
    -H 'sim[1-2]:2' --stall-timeout 5 -- env STALL_RANK=2 "MARK=$MARK" \
    $PY "$E2E/stall_ddp.py" "$MARK"
expect_eq "  every rank's Python stack" "$(grep -c '^Fatal Python error: Aborted' "$TMP/err")" 4
expect_grep "  the head names the stuck rank, its node and function" \
    "^dlrun: stalled [0-9]* s: rank 2 (sim2) in stuck_forever (stall_ddp.py:[0-9]*); ranks 0, 1 (sim1), 3 (sim2) in backward" "$TMP/err"
sleep 1
expect_eq "  nothing left running" "$(left_running "$MARK")" 0

done_testing
