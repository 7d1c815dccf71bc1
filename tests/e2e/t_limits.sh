#!/bin/sh
# t_limits.sh - a job this host cannot hold is refused before any rank
# starts, with one line naming the limit (dlrun(1), LIMITS): processes
# (kernel.pid_max and the like, ulimit -u as a second user made here with
# useradd: root is exempt from it), open files (the soft limit raised to
# the hard one first), memory.
. "$(dirname "$0")/lib.sh"
CLEAN="$NO_SCHED"
MARKS=$TMP/marks
mkdir "$MARKS" && chmod 0777 "$MARKS"
chmod 0711 "$TMP"
# every rank leaves a file: none may be there after a refusal
printf '#!/bin/sh\n: >"%s/rank.$$"\n' "$MARKS" >"$TMP/mark"
chmod 0755 "$TMP/mark"
started() { ls "$MARKS" | wc -l; }
no_rank() { expect_eq "  no rank started" "$(started)" 0; rm -f "$MARKS"/*; }
run() { env $CLEAN "$DLRUN" "$@"; }

# --- far more ranks than the host holds: refused at once ---
# dlrun's own memory capped (as a guard for a binary without the check:
# the machine must not run out), and the hard limit on open files lowered
# where it is high, so that some limit is passed on any host
t0=$(date +%s)
h=$(ulimit -Hn)
nofile=$h
[ "$h" = unlimited ] || [ "$h" -gt 65536 ] && nofile=65536
# an ASan build cannot start under an address-space limit (its shadow
# memory is terabytes of reserved addresses); the normal build's pass of
# make check ran with the guard
as=--as=4000000000
ldd "$DLRUN" 2>/dev/null | grep -q libasan && as=--as=unlimited
expect_rc "-np 100000: refused, exit 2" 2 prlimit $as \
    --nofile="$nofile:$nofile" -- env $CLEAN "$DLRUN" -np 100000 \
    --bind-to none "$TMP/mark"
t1=$(date +%s)
one_line
expect_grep "  the line names what the ranks need and the limit" \
    "^dlrun: 100000 ranks on .* need .*\(processes\|open files\|memory\);.*(\(kernel\.pid_max\|kernel\.threads-max\|pids\.max\|ulimit -u\|ulimit -n\|MemAvailable\|its memory limit\)" \
    "$TMP/err"
expect_eq "  within seconds" "$([ $((t1 - t0)) -lt 20 ] && echo yes)" yes
no_rank

# --- open files: the soft limit is raised to the hard one first ---
expect_rc "ulimit -n 256 (hard too), -np 500: refused, exit 2" 2 \
    prlimit --nofile=256:256 -- env $CLEAN "$DLRUN" -np 500 --oversubscribe \
    "$TMP/mark"
one_line
expect_grep "  names the open-file limit" \
    "500 ranks on .* need about 1,032 open files in dlrun; the limit is 256 (ulimit -n; hard limit 256)" \
    "$TMP/err"
no_rank
mkdir "$TMP/outdir"
# what the check lets through runs: 2 files per rank and 32 of dlrun's
# own (4 per rank with --output-dir) are enough
expect_rc "ulimit -n 232, -np 100 (2 x 100 + 32): runs" 0 \
    prlimit --nofile=232:232 -- env $CLEAN "$DLRUN" -np 100 --oversubscribe \
    --bind-to none "$TMP/mark"
expect_eq "  all 100 ranks ran" "$(started)" 100
rm -f "$MARKS"/*
expect_rc "ulimit -n 432, -np 100 --output-dir (4 x 100 + 32): runs" 0 \
    prlimit --nofile=432:432 -- env $CLEAN "$DLRUN" -np 100 --oversubscribe \
    --bind-to none --output-dir "$TMP/outdir" "$TMP/mark"
expect_eq "  all 100 ranks ran" "$(started)" 100
rm -f "$MARKS"/*
expect_rc "ulimit -n 431, -np 100 --output-dir: refused, exit 2" 2 \
    prlimit --nofile=431:431 -- env $CLEAN "$DLRUN" -np 100 --oversubscribe \
    --bind-to none --output-dir "$TMP/outdir" "$TMP/mark"
no_rank
hard=$(ulimit -Hn)
if [ "$hard" = unlimited ] || [ "$hard" -ge 4096 ]; then
    expect_rc "ulimit -Sn 256, hard $hard: -np 500 runs (soft raised)" 0 \
        prlimit --nofile=256: -- env $CLEAN "$DLRUN" -np 500 \
        --oversubscribe --bind-to none "$TMP/mark"
    expect_eq "  all 500 ranks ran" "$(started)" 500
    rm -f "$MARKS"/*
else
    echo "skip: the hard open-file limit ($hard) is below 4096"
fi

# --- several nodes: each agent refuses its node's share, the same line ---
# (DLRUN_RELAY_SIM_MS: the agents run here, as in t_agents.sh)
expect_rc "2 nodes of 600 ranks, ulimit -n 1024: refused by the agents, exit 2" 2 \
    prlimit --nofile=1024:1024 -- env $CLEAN -u DLRUN_BROKER -u DLRUN_TOKEN \
    DLRUN_RELAY_SIM_MS=0 "$DLRUN" $SIM -H 'sim[1-2]:600' --oversubscribe \
    "$TMP/mark"
# (the first agent's refusal ends the job: the other may be stopped first)
expect_grep "  an agent names the open-file limit for its node" \
    "^dlrun: 600 ranks on sim[12] need about 1,232 open files in dlrun; the limit is 1,024 (ulimit -n" \
    "$TMP/err"
expect_grep "  the head names the agent" "the agent on sim[12] ended with code 2" \
    "$TMP/err"
no_rank

# --- ulimit -u, as a user it applies to ---
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null 2>&1; then
    echo "skip: ulimit -u needs root (to make and be a second user) and setpriv"
    done_testing
fi
U=dlrun-lim-$$
cleanup_user() { userdel "$U" 2>/dev/null; }
# a user a killed earlier run left
for old in $(cut -d: -f1 /etc/passwd | grep '^dlrun-lim-'); do
    pgrep -u "$old" >/dev/null 2>&1 || userdel "$old" 2>/dev/null
done
useradd -M -s /usr/sbin/nologin "$U" 2>/dev/null || {
    echo "skip: cannot make a second user"; done_testing; }
trap 'cleanup_user; rm -rf "$TMP"' EXIT
as_u() { setpriv --reuid="$U" --regid="$U" --clear-groups "$@"; }
expect_rc "ulimit -u 64 as $U, -np 100: refused, exit 2" 2 as_u \
    prlimit --nproc=64:64 -- env $CLEAN "$DLRUN" -np 100 --oversubscribe \
    "$TMP/mark"
one_line
expect_grep "  names the process limit" \
    "100 ranks on .* need 100 processes; your limit is 64 (ulimit -u), [0-9]* in use" \
    "$TMP/err"
no_rank
expect_rc "ulimit -u 64 as $U, -np 20: runs" 0 as_u \
    prlimit --nproc=64:64 -- env $CLEAN "$DLRUN" -np 20 --oversubscribe \
    "$TMP/mark"
expect_eq "  all 20 ranks ran" "$(started)" 20
done_testing
