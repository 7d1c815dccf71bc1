#!/bin/sh
# t_stall_spin.sh - --stall-timeout counts ranks that spin: native ranks
# that wait forever for a flag nobody sets, polling on the CPU like an MPI
# progress engine, are reported and ended (exit 124) with the line naming
# them; the same across (simulated) nodes; ranks that compute for longer
# than the window through calls of changing depth are not; and, where
# mpicc is, MPI ranks waiting in an MPI_Comm_accept that never pairs (the
# roots asleep, the others spinning) are reported.  Timeouts are hang
# guards, never speed checks.
. "$(dirname "$0")/lib.sh"
command -v cc >/dev/null 2>&1 || skip "skip: no C compiler"
# the stacks are read through ptrace from a helper beside the ranks
scope=$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo 0)
if [ "$scope" -ge 3 ] || { [ "$scope" -ge 1 ] && [ "$(id -u)" != 0 ]; }; then
    skip "skip: ptrace is restricted here (kernel.yama.ptrace_scope=$scope)"
fi
cc -O0 -o "$TMP/stall_spin" "$E2E/stall_spin.c" || { fail "cc"; done_testing; }
CLEAN="$NO_SCHED -u DLRUN_BROKER -u PYTHONFAULTHANDLER"
run() { env $CLEAN timeout -s KILL 300 "$DLRUN" "$@"; }
sim() { env $CLEAN -u DLRUN_TOKEN DLRUN_RELAY_SIM_MS=0 timeout -s KILL 300 \
    "$DLRUN" $SIM "$@"; }
left_running() { pgrep -f "$1" | grep -v "^$$\$" | wc -l | tr -d ' '; }

# --- native ranks that spin: stalled, reported, ended, exit 124 ---
expect_rc "spinning ranks stall (exit 124)" 124 run -np 2 --oversubscribe \
    --stall-timeout 5s "$TMP/stall_spin" spin
expect_grep "  the report says each one spins" \
    "rank 1 (host .*, pid [0-9]*): state ., waits in .*, CPU [0-9.]* s in the window (its stack did not move), last line [0-9]* s ago: \"1 spin\"" "$TMP/err"
expect_grep "  the last line names the ranks" \
    "^dlrun: stalled [0-9]* s: ranks 0, 1 (.*) in (spinning)$" "$TMP/err"
expect_eq "  the stall line is the last" "$(tail -1 "$TMP/err" | cut -c1-15)" "dlrun: stalled "
expect_eq "  nothing left running" "$(left_running "$TMP/stall_spin")" 0

# --- across (simulated) nodes: each agent sees its ranks spin ---
expect_rc "spinning ranks on two nodes stall (exit 124)" 124 sim \
    -H 'sim[1-2]:1' --stall-timeout 5s -- "$TMP/stall_spin" spin
expect_grep "  the head's line names both nodes" \
    "^dlrun: stalled 5 s: ranks 0 (sim1), 1 (sim2) in (spinning)$" "$TMP/err"
expect_eq "  nothing left running" "$(left_running "$TMP/stall_spin")" 0

# --- ranks that compute, silent, for three windows: not stalled ---
expect_rc "computing ranks are not stalled" 0 run -np 2 --oversubscribe \
    --stall-timeout 5s "$TMP/stall_spin" compute 15
expect_eq "  no stall said" "$(grep -c stalled "$TMP/err")" 0

# --- MPI: an accept that never pairs ---
if command -v mpicc >/dev/null 2>&1 &&
   "$DLRUN" check | grep -q 'PMIx hosting: *yes' &&
   mpicc -O2 -o "$TMP/stall_mpi" "$E2E/stall_mpi.c"; then
    mkdir "$TMP/tmpdir"
    expect_rc "MPI ranks in an accept that never pairs stall (exit 124)" 124 \
        env $CLEAN TMPDIR="$TMP/tmpdir" timeout -s KILL 300 "$DLRUN" \
        -np 4 --oversubscribe --stall-timeout 5s "$TMP/stall_mpi"
    # the non-roots spin (on a busy machine Open MPI yields when
    # oversubscribed, and a rank may use next to no CPU: then it is idle)
    expect_grep "  the last line names the ranks that waited on the CPU" \
        "^dlrun: stalled [0-9]* s: .* in (\(spinning\|running\))" "$TMP/err"
    expect_eq "  nothing left running" "$(left_running "$TMP/stall_mpi")" 0
else
    echo "skip: the MPI case (no mpicc, or dlrun without PMIx)"
fi
done_testing
