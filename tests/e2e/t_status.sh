#!/bin/sh
# t_status.sh - `dlrun status` from another shell: a one-node job's ranks
# (from the file its dlrun keeps), a multi-node job's (simulated nodes as
# in t_agents.sh: its agents put their lines into the broker), --json, the
# file gone after the job, and another user refused.
. "$(dirname "$0")/lib.sh"
CLEAN="$NO_SCHED -u DLRUN_BROKER -u DLRUN_TOKEN DLRUN_RELAY_SIM_MS=0"
# a runtime folder of this test's own: other tests' jobs are not listed
chmod 755 "$TMP"
mkdir -m 755 "$TMP/rt"
XDG_RUNTIME_DIR=$TMP/rt
export XDG_RUNTIME_DIR
st() { "$DLRUN" status "$@"; }

# wait_ranks N: until dlrun status lists N rank lines (a hang guard)
wait_ranks() {
    for _ in $(seq 600); do
        [ "$(st | grep -c '^  [0-9]')" -ge "$1" ] && return 0; sleep 0.1
    done
    return 1
}

# --- a one-node job ---
cat >"$TMP/job.sh" <<'EOS'
echo "up $RANK"
if [ "$RANK" = 1 ]; then i=0; while [ $i -lt 100000000 ]; do i=$((i+1)); done; fi
sleep 600
EOS
env $CLEAN "$DLRUN" -np 2 --bind-to none sh "$TMP/job.sh" >"$TMP/job.out" 2>&1 & p=$!
wait_ranks 2
sleep 2     # a second sample: CPU %
st >"$TMP/st.out"
expect_grep "one-node job: its pid, 2 ranks" "^job $p: 2 ranks on 1 node" "$TMP/st.out"
expect_eq "  rank 0 and 1, each with a pid" \
    "$(awk '$1 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/ { print $1 }' "$TMP/st.out" | tr '\n' ' ')" "0 1 "
expect_eq "  rank 1 computes: CPU % above 1" "$(awk '$1 == 1 && $5 + 0 > 1 { print "busy" }' "$TMP/st.out")" busy
expect_grep "  rank 0 sleeps, printed a line" '^  0  .* S  *0\.0 .* s ago$' "$TMP/st.out"
st --json >"$TMP/st.json"
expect_rc "  --json is JSON with both ranks" 0 python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
j = [x for x in d["jobs"] if x["pid"] == int(sys.argv[2])][0]
assert [r["rank"] for r in j["ranks"]] == [0, 1], j
assert j["world_size"] == 2 and j["ranks"][1]["cpu_percent"] > 1, j
' "$TMP/st.json" "$p"
# another user: refused, not shown
if [ "$(id -u)" -eq 0 ] && command -v useradd >/dev/null 2>&1; then
    id dlrun-st >/dev/null 2>&1 || useradd -M -s /bin/sh dlrun-st
    su dlrun-st -s /bin/sh -c "XDG_RUNTIME_DIR=$TMP/rt $DLRUN status" >"$TMP/other.out" 2>&1
    expect_eq "another user pointing at the owner's folder: exit 0" "$?" 0
    expect_grep "  not theirs: their own instead, in one line" \
        "belongs to uid 0, not to you: using /tmp/dlrun-$(id -u dlrun-st) for" "$TMP/other.out"
    expect_grep "  the owner's job not shown" "no running dlrun jobs of yours" "$TMP/other.out"
    su dlrun-st -s /bin/sh -c "XDG_RUNTIME_DIR= $DLRUN status" >"$TMP/other.out" 2>&1
    expect_grep "  their own folder: no jobs" "no running dlrun jobs of yours" "$TMP/other.out"
fi
kill -TERM $p; wait $p
expect_eq "after the job: nothing listed" "$(st)" "no running dlrun jobs of yours on this host"

# --- a multi-node job (simulated nodes): the agents' lines via the broker ---
env $CLEAN "$DLRUN" $SIM -H 'sim[1-2]:2' sh -c 'echo "up $RANK"; sleep 600' >"$TMP/m.out" 2>&1 & p=$!
wait_ranks 4
st >"$TMP/st.out"
expect_grep "multi-node job: 4 ranks on 2 nodes" "^job $p: 4 ranks on 2 nodes" "$TMP/st.out"
expect_eq "  ranks with their hosts" \
    "$(awk '$1 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/ { print $1 "@" $2 }' "$TMP/st.out" | tr '\n' ' ')" \
    "0@sim1 1@sim1 2@sim2 3@sim2 "
kill -TERM $p; wait $p
expect_eq "  gone after the job" "$(st)" "no running dlrun jobs of yours on this host"

# --- -v: the steps in order; agents slow to come up (a relay that takes
# 3 s): after 2 s the head names the nodes it still waits for ---
env $CLEAN DLRUN_RELAY_SIM_MS=3000 "$DLRUN" -v $SIM -H 'sim[1-3]:1' true >"$TMP/v.out" 2>&1
expect_eq "-v with slow agents: exit 0" "$?" 0
# (ranks of true: the head's last look as the job ends sees the steps a
# short job passed between two looks; the first 6 steps, --mpi=auto's
# decision among them, not the lines that say why a port or TF_CONFIG)
expect_eq "  the steps in order" "$(sed -n 's/^dlrun: +[0-9.]* s \([a-z][a-z-]*\|--mpi\)[ =:].*/\1/p' "$TMP/v.out" | head -n 6 | tr '\n' ' ')" \
    "allocation plan --mpi agents agents rendezvous " || sed 's/^/  | /' "$TMP/v.out"
expect_grep "  the nodes waited for, named" "^dlrun: waiting for the agents on sim1, sim2, sim3 ([0-9]* s; 0 of 3 nodes up)" "$TMP/v.out"
env $CLEAN DLRUN_RELAY_SIM_MS=3000 "$DLRUN" $SIM -H 'sim[1-2]:1' true >"$TMP/nv.out" 2>&1
expect_grep "  without -v too" "^dlrun: waiting for the agents on sim1, sim2" "$TMP/nv.out"
if grep -q '^dlrun: +' "$TMP/nv.out"; then fail "  no steps without -v"; else pass "  no steps without -v"; fi

# --- a mistyped option: one line naming the right one ---
expect_rc "status --jsn" 2 "$DLRUN" status --jsn
expect_eq "  did you mean --json" "$(cat "$TMP/err")" \
    "dlrun: unknown option '--jsn'; did you mean --json? (dlrun status --help)"

# --- /tmp/dlrun-UID made first by another user: a job and dlrun status
# both fall back to the same private folder (in the home), each saying so
# in one line ---
if [ "$(id -u)" -eq 0 ] && command -v useradd >/dev/null 2>&1; then
    V=dlrun-stv S=dlrun-sts
    gone_users() { userdel "$V" 2>/dev/null; userdel "$S" 2>/dev/null; }
    gone_users
    trap 'gone_users; rm -rf "$TMP"' EXIT
    useradd -M -s /bin/sh "$V" && useradd -M -s /bin/sh "$S"
    vu=$(id -u "$V")
    rm -rf "/tmp/dlrun-$vu"
    mkdir -m 700 "$TMP/vhome" && chown "$V" "$TMP/vhome"
    as_v() { setpriv --reuid="$V" --regid="$V" --clear-groups env -u XDG_RUNTIME_DIR \
        HOME="$TMP/vhome" "$@"; }
    setpriv --reuid="$S" --regid="$S" --clear-groups mkdir -m 700 "/tmp/dlrun-$vu"
    (cd / && exec setpriv --reuid="$V" --regid="$V" --clear-groups env -u XDG_RUNTIME_DIR \
        $CLEAN HOME="$TMP/vhome" "$DLRUN" -np 1 --bind-to none sh -c 'echo up; sleep 600') \
        >"$TMP/v.out" 2>&1 & vp=$!
    for _ in $(seq 300); do
        as_v "$DLRUN" status >"$TMP/vst.out" 2>&1 && grep -q '^job ' "$TMP/vst.out" && break
        sleep 0.1
    done
    expect_grep "another user's /tmp/dlrun-UID: the job listed" "^job [0-9]*: 1 rank" "$TMP/vst.out"
    expect_grep "  dlrun status says where, in one line" \
        "^dlrun: /tmp/dlrun-$vu belongs to uid $(id -u "$S"), not to you: using $TMP/vhome/.cache/dlrun/run-" \
        "$TMP/vst.out"
    kill -TERM "$vp"
    wait "$vp"
    expect_grep "  the job said the same line" "^dlrun: /tmp/dlrun-$vu belongs to uid" "$TMP/v.out"
    rm -rf "/tmp/dlrun-$vu"
    gone_users
fi

# --- a folder others can read is refused ---
chmod 755 "$TMP/rt/dlrun"
expect_rc "a runtime folder others can read: refused" 2 "$DLRUN" status
expect_grep "  says how to fix it" "chmod 700" "$TMP/err"
done_testing
