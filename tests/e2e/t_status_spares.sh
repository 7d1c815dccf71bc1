#!/bin/sh
# t_status_spares.sh - `dlrun status` of a job with --spares, on simulated
# nodes of this machine (as t_spares_local.sh): the spare held while the
# first attempt runs; after the agent of sim2 is killed, sim2 excluded
# (its attempt and why), the spare sim4 taken in its place and none held,
# in the table and in --json.  The ranks wait for the test, so each look
# falls inside its attempt; waits are hang guards.
. "$(dirname "$0")/lib.sh"
CLEAN="$NO_SCHED -u DLRUN_BROKER -u DLRUN_TOKEN DLRUN_RELAY_SIM_MS=0"
chmod 755 "$TMP"
mkdir -m 755 "$TMP/rt"
XDG_RUNTIME_DIR=$TMP/rt     # this test's jobs alone are listed
export XDG_RUNTIME_DIR
mark_sleep stspares
S=$TMP/$MARK-rank.sh
cat >"$S" <<'EOS'
touch "$0.up.$DLRUN_RESTART_COUNT.$RANK"
for _ in $(seq 1200); do [ -e "$0.go.$DLRUN_RESTART_COUNT" ] && exit 0; sleep 0.1; done
EOS
# up N: until the three ranks of attempt N started
up() { for _ in $(seq 600); do [ "$(ls "$S.up.$1".* 2>/dev/null | wc -l)" -ge 3 ] && return 0; sleep 0.1; done; return 1; }
json_check() { python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
j = [x for x in d['jobs'] if x['pid'] == int(sys.argv[2])][0]
$1" "$TMP/st.json" "$p"; }

env $CLEAN "$DLRUN" $SIM -H 'sim[1-4]' --spares 1 --max-restarts 1 \
    -- sh "$S" >"$TMP/job.out" 2>&1 & p=$!
up 0
"$DLRUN" status >"$TMP/st.out"
expect_grep "first attempt: the spare held, none taken" "^  spares: 1 held (sim4), 0 taken$" "$TMP/st.out" ||
    sed 's/^/  | /' "$TMP/job.out"
expect_eq "  nothing excluded" "$(grep -c '^  excluded' "$TMP/st.out")" 0
"$DLRUN" status --json >"$TMP/st.json"
expect_rc "  --json: held [sim4], taken [], excluded_nodes []" 0 json_check \
    'assert j["spares"] == {"held": ["sim4"], "taken": []} and j["excluded_nodes"] == [], j'

a=
for _ in $(seq 600); do a=$(pgrep -f "agent .*--node=1 .*$MARK" | head -n 1); [ -n "$a" ] && break; sleep 0.1; done
[ -n "$a" ] && kill -9 "$a"
up 1
"$DLRUN" status >"$TMP/st.out"
expect_grep "second attempt: none held, sim4 taken" "^  spares: 0 held, 1 taken (sim4)$" "$TMP/st.out" ||
    sed 's/^/  | /' "$TMP/job.out"
expect_grep "  sim2 excluded: its attempt, why, who came in" \
    "^  excluded sim2 (attempt 1, [0-9]* s ago): its agent ended with code 137 (killed?); sim4 in its place$" "$TMP/st.out"
"$DLRUN" status --json >"$TMP/st.json"
expect_rc "  --json: held [], taken [sim4], sim2 excluded in attempt 1" 0 json_check '
assert j["spares"] == {"held": [], "taken": ["sim4"]}, j
e = j["excluded_nodes"]
assert len(e) == 1 and e[0]["host"] == "sim2" and e[0]["attempt"] == 1, e
assert e[0]["spare"] == "sim4" and e[0]["reason"].startswith("its agent ended with code 137"), e
assert e[0]["time"] > 1e9, e'
touch "$S.go.1"
wait $p
expect_eq "the job ends well" "$?" 0 || sed 's/^/  | /' "$TMP/job.out"
expect_eq "  nothing listed after it" "$("$DLRUN" status)" "no running dlrun jobs of yours on this host"
wait_gone
expect_eq "nothing left" "$(leftovers)" ""
done_testing
