#!/bin/sh
# t_straggler.sh - step rates and --straggler-factor on one host: ranks
# call dlrun_progress() once a step (tests/e2e/step_rank.c), one rank (on
# one node) or one simulated node's ranks three times slower; the line
# names it once, an even job says nothing, and `dlrun status` ranks the
# slowest first; a node made slow for real, by a CPU hog on its core.
# Timeouts are hang guards, never speed checks.
. "$(dirname "$0")/lib.sh"
CLEAN="$NO_SCHED -u DLRUN_BROKER -u DLRUN_TOKEN -u SLOW DLRUN_RELAY_SIM_MS=0"
run() { env $CLEAN timeout -s KILL 300 "$DLRUN" "$@"; }
chmod 755 "$TMP"
mkdir -m 755 "$TMP/rt"
XDG_RUNTIME_DIR=$TMP/rt
export XDG_RUNTIME_DIR

# --- bad values: one line, exit 2 ---
for bad in 1 0.5 x 2y; do
    expect_rc "--straggler-factor $bad refused" 2 run -np 1 --straggler-factor "$bad" true
    one_line
done
expect_grep "  says what it wants" "--straggler-factor '2y': not a number above 1" "$TMP/err"

BUILD_DIR=$(cd "$(dirname "$DLRUN")" && pwd)
SAN_CFLAGS=''
ldd "$DLRUN" 2>/dev/null | grep -q libasan && SAN_CFLAGS="-fsanitize=address,undefined"
[ -e "$BUILD_DIR/libdlrun.so" ] && command -v cc >/dev/null 2>&1 &&
    cc -std=c11 -Wall -Wextra -Werror $SAN_CFLAGS -I"$TOP/contrib/include" \
       -o "$TMP/step" "$E2E/step_rank.c" -L"$BUILD_DIR" -ldlrun \
       -Wl,-rpath,"$BUILD_DIR" ||
    skip "skip: no cc or no $BUILD_DIR/libdlrun.so: dlrun_progress() not tested"

# job_lines PID: the lines of job PID in `dlrun status`
job_lines() { "$DLRUN" status 2>&1 | awk -v p="$1:" '/^job / { on = ($2 == p) } on'; }
# rates PID: `dlrun status` of job PID 2 s after it first shows its step
# rates (a hang guard of 60 s; the job runs on)
rates() {
    for _ in $(seq 120); do
        job_lines "$1" | grep -q "step rates per" && break
        sleep 0.5
    done
    sleep 2
    job_lines "$1" >"$TMP/st.out"
}
# first_row: host and ranks of the slowest row of the ranking
first_row() { awk '/^  HOST .*STEPS\/S/ { getline; print $1, $4; exit }' "$TMP/st.out"; }

# --- one node: the ranks compared, rank 1 three times slower ---
env $CLEAN SLOW=1 "$DLRUN" -np 4 --oversubscribe --bind-to none \
    --straggler-factor 2 "$TMP/step" 12 100 >"$TMP/out" 2>"$TMP/err" & p=$!
rates $p
wait $p
expect_eq "one node, rank 1 slow: exit 0" "$?" 0
expect_eq "  one straggler line" "$(grep -c 'straggler:' "$TMP/err")" 1
expect_grep "  naming rank 1, its rate, the median" \
    "^dlrun: straggler: rank 1 ($(hostname)) at [0-9.]* steps/s, [0-9.]*x slower than the median [0-9.]* for [0-9]* s$" "$TMP/err"
expect_grep "  dlrun status: the ranks' step rates" "step rates per rank (dlrun_progress), slowest first" "$TMP/st.out"
expect_eq "  rank 1 first" "$(first_row)" "$(hostname) 1"

# --- an even job: no line ---
expect_rc "an even job: exit 0" 0 run -np 4 --oversubscribe --bind-to none \
    --straggler-factor 2 "$TMP/step" 8 100
expect_eq "  no straggler line" "$(grep -c 'straggler:' "$TMP/err")" 0

# --- three simulated nodes (agents, the head judges): sim2's ranks slow ---
env $CLEAN SLOW=2,3 "$DLRUN" $SIM -H 'sim[1-3]:2' \
    --straggler-factor 2 "$TMP/step" 12 100 >"$TMP/out" 2>"$TMP/err" & p=$!
rates $p
wait $p
expect_eq "three nodes, sim2 slow: exit 0" "$?" 0
expect_eq "  one straggler line" "$(grep -c 'straggler:' "$TMP/err")" 1
expect_grep "  naming sim2 and its ranks" \
    "^dlrun: straggler: sim2 (ranks 2-3) at [0-9.]* steps/s, [0-9.]*x slower than the median [0-9.]* for [0-9]* s$" "$TMP/err"
expect_grep "  dlrun status: the nodes' step rates" "step rates per node" "$TMP/st.out"
expect_eq "  sim2 first" "$(first_row)" "sim2 2-3"

# --- a node made slow by a CPU hog pinned to its ranks' core: sim2's ranks
# run on CPU 0 beside a busy loop, the other nodes' on CPU 1; each step is
# CPU work.  The hog is real-time (SCHED_FIFO): a nice -20 one would share
# its task group's weight with the ranks (autogroup, cgroups) and slow the
# other CPU's ranks alike; the kernel keeps 5% of CPU 0 for the rest.  It
# ends itself after 90 s should this test be killed ---
if [ "$(id -u)" -ne 0 ] || ! command -v taskset >/dev/null 2>&1 ||
   ! taskset -c 1 true 2>/dev/null || ! chrt -f 1 true 2>/dev/null; then
    echo "# skip the CPU hog case: needs root, taskset, chrt -f and two CPUs"
    done_testing
fi
cat >"$TMP/pinned.sh" <<'EOS'
cpu=1; [ "$GROUP_RANK" = 1 ] && cpu=0
taskset -pc "$cpu" $$ >/dev/null && exec "$0.step" 12 10
EOS
cp "$TMP/step" "$TMP/pinned.sh.step"
timeout 90 chrt -f 1 taskset -c 0 sh -c 'while :; do :; done' & hog=$!
env $CLEAN STEP_CPU=1 "$DLRUN" $SIM -H 'sim[1-3]:2' \
    --straggler-factor 2 sh "$TMP/pinned.sh" >"$TMP/out" 2>"$TMP/err" & p=$!
rates $p
wait $p; rc=$?
kill "$hog"; wait "$hog" 2>/dev/null
expect_eq "sim2 beside a hog on its core: exit 0" "$rc" 0 || sed 's/^/  | /' "$TMP/err"
expect_grep "  the straggler line names sim2 and its ranks" \
    "^dlrun: straggler: sim2 (ranks 2-3) at [0-9.]* steps/s, [0-9.]*x slower than the median" "$TMP/err"
expect_eq "  sim2 first in dlrun status" "$(first_row)" "sim2 2-3" || sed 's/^/  | /' "$TMP/st.out"
done_testing
