#!/bin/sh
# t_orphans_cgroup.sh - by default, where this user may make a cgroup
# below their own (root, a delegated systemd unit, a Slurm job cgroup
# given to its user), the ranks run in a cgroup of the job's own, and a
# daemon that leaves the rank's group and session and empties its
# environment (env -i setsid: no DLRUN_JOB_MARK for the guard to find)
# still ends with the job: when it ends well, and when dlrun is killed
# with SIGKILL.  --no-cgroup and DLRUN_CGROUP=0 keep the ranks in dlrun's
# own cgroup; dlrun check says whether a run gets one.  As root, a second
# user (made here with useradd) who may not make one: -v and dlrun check
# say why and what remains.  Skipped where no cgroup can be made here.
# Processes are found by a mark in their argv; waits are hang guards.
. "$(dirname "$0")/lib.sh"
mark_sleep orphcg
S=$SLEEP
CLEAN="$NO_SCHED -u DLRUN_CGROUP"
OTHER=
# whatever a failed case left, ended with the test; the second user removed
trap 'kill -KILL $(leftovers) 2>/dev/null; [ -z "$OTHER" ] || userdel "$OTHER"; rm -rf "$TMP"' EXIT

# may this user make a cgroup below their own?  Asked of the machine, not
# of dlrun (one that makes none must fail here, not skip)
mnt=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
root=$(awk '$9 == "cgroup2" { print $4; exit }' /proc/self/mountinfo)
own=$(sed -n 's/^0:://p' /proc/self/cgroup)
[ -n "$mnt" ] || skip "skip: no cgroup v2 file system mounted"
[ -n "$own" ] || skip "skip: this shell is in no cgroup v2 cgroup"
[ "$root" = / ] || own=${own#"$root"}
base=$mnt${own%/}
mkdir "$base/dlrun-t-$$" 2>/dev/null && rmdir "$base/dlrun-t-$$" ||
    skip "skip: $base is not this user's to make a cgroup in (not root, not delegated)"
ls -d "$base"/dlrun-*-* 2>/dev/null | sort >"$TMP/before"

# the marked processes but dlrun ($pid: its argv names them too)
others() { leftovers | grep -vx "${pid:-0}"; }
# wait_count N: until exactly N of them run (hang guard: 2 minutes)
wait_count() { for _ in $(seq 1200); do [ "$(others | wc -l)" -eq "$1" ] && return; sleep 0.1; done; }
# gone_soon: until none is left, 20 s at most (the guard ends them in ms)
gone_soon() { for _ in $(seq 200); do [ -z "$(leftovers)" ] && return; sleep 0.1; done; }

env $CLEAN "$DLRUN" -np 1 sh -c "cat /proc/self/cgroup" >"$TMP/cg" 2>&1
cg=$(sed -n 's/^0:://p' "$TMP/cg")
case $cg in
*/dlrun-[0-9]*-[0-9]*)
    pass "by default the rank ran in the job's cgroup ($cg)"
    # the guard removes it as dlrun exits: poll (hang guard)
    for _ in $(seq 200); do [ ! -d "$mnt$cg" ] && break; sleep 0.1; done
    [ ! -d "$mnt$cg" ] && pass "  removed after the job" ||
        fail "  cgroup $mnt$cg left behind" ;;
*) fail "by default the rank ran in the job's cgroup"; echo "  got: $cg" ;;
esac

# the issue's case: the rank's daemon drops group, session and environment
# (at the job's end dlrun, their subreaper, also finds it: see below)
env $CLEAN "$DLRUN" -np 1 sh -c "env -i setsid sh -c '$S 1000 &'" >"$TMP/out" 2>&1
expect_eq "a daemon with an empty environment, the job ended: exit 0" "$?" 0
gone_soon
expect_eq "  the daemon ended with the job" "$(leftovers)" ""
kill -KILL $(leftovers) 2>/dev/null

# ... and dlrun killed with SIGKILL while it runs: only the job's cgroup
# holds it (no group, no mark, no subreaper left), the guard ends it
env $CLEAN "$DLRUN" -np 1 sh -c "env -i setsid sh -c '$S 1001 &'; exec $S 1002" >"$TMP/out" 2>&1 & pid=$!
wait_count 2
expect_eq "dlrun running, the rank and its emptied daemon" "$(others | wc -l | tr -d ' ')" 2
kill -KILL $pid; wait $pid 2>/dev/null
gone_soon
expect_eq "  dlrun SIGKILLed: none left" "$(leftovers)" ""
kill -KILL $(leftovers) 2>/dev/null
pid=

# turned off: the rank stays in dlrun's cgroup (this shell's)
env $CLEAN "$DLRUN" --no-cgroup -np 1 sh -c "cat /proc/self/cgroup" >"$TMP/cg" 2>&1
expect_eq "--no-cgroup: the rank in dlrun's own cgroup" "$(sed -n 's/^0:://p' "$TMP/cg")" "$(sed -n 's/^0:://p' /proc/self/cgroup)"
env $CLEAN DLRUN_CGROUP=0 "$DLRUN" -np 1 sh -c "cat /proc/self/cgroup" >"$TMP/cg" 2>&1
expect_eq "DLRUN_CGROUP=0: likewise" "$(sed -n 's/^0:://p' "$TMP/cg")" "$(sed -n 's/^0:://p' /proc/self/cgroup)"

"$DLRUN" check >"$TMP/check" 2>&1
expect_grep "dlrun check: a run here gets a cgroup" "^job cgroup: *yes, below $base " "$TMP/check"

# a user who may not make one (root's cgroup is not theirs): the ranks stay
# in dlrun's cgroup, -v says why, dlrun check says what remains
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1 &&
   command -v useradd >/dev/null 2>&1; then
    for u in $(awk -F: '/^dlrun-cg-[0-9]*:/ { print $1 }' /etc/passwd); do
        kill -0 "${u#dlrun-cg-}" 2>/dev/null || userdel "$u" 2>/dev/null
    done
    useradd --system --no-create-home --shell /usr/sbin/nologin "dlrun-cg-$$" &&
        OTHER=dlrun-cg-$$
fi
if [ -n "$OTHER" ]; then
    as_other() { (cd / && setpriv --reuid="$OTHER" --regid="$OTHER" --clear-groups env $CLEAN "$@"); }
    as_other "$DLRUN" -v -np 1 sh -c "cat /proc/self/cgroup" >"$TMP/other" 2>&1
    expect_eq "another user: the rank in dlrun's own cgroup" \
        "$(sed -n 's/^0:://p' "$TMP/other")" "$(sed -n 's/^0:://p' /proc/self/cgroup)"
    expect_grep "  -v says why" "^dlrun: +[0-9.]* s no cgroup for the job ($base is not yours to change .*): the guard ends what carries its mark$" "$TMP/other"
    as_other "$DLRUN" check >"$TMP/check" 2>&1
    expect_grep "  dlrun check says what remains" "^job cgroup: *no (.*not yours.*): .*a daemon that calls setsid and empties its environment outlives a dlrun killed with SIGKILL$" "$TMP/check"
else
    echo "# not root (or no useradd, setpriv): another user's refusal not tested"
fi

# the jobs above left no cgroup folder (others' jobs may come and go)
for _ in $(seq 200); do
    ls -d "$base"/dlrun-*-* 2>/dev/null | sort | comm -13 "$TMP/before" - |
        while read -r d; do ps -p "$(echo "$d" | sed 's/.*dlrun-\([0-9]*\)-.*/\1/')" >/dev/null || echo "$d"; done >"$TMP/left"
    [ -s "$TMP/left" ] || break
    sleep 0.1
done
expect_eq "no cgroup folder of an ended dlrun left" "$(cat "$TMP/left")" ""
done_testing
