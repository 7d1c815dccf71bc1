#!/bin/sh
# t_tmpdir.sh - dlrun makes its private folders (the job's, the broker's
# and relays' sockets, PMIx's) only where no other user can rename them
# away: a TMPDIR of another user, or one world-writable without the
# sticky bit, is not used; dlrun says so in one line and uses a private
# runtime folder ($XDG_RUNTIME_DIR when ours and 0700, else /tmp/dlrun-UID).
# Another user's folder needs root (chown to nobody).
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "skip: another user's folder needs root"
CLEAN="$NO_SCHED -u DLRUN_BROKER -u DLRUN_TOKEN"
# owner and mode of a folder, as "UID MODE"
owner_mode() { stat -c '%u %a' "$1"; }
mkdir "$TMP/eve" "$TMP/run" "$TMP/open" "$TMP/sticky"
chown 65534:65534 "$TMP/eve"
chmod 777 "$TMP/eve" "$TMP/open"
chmod 1777 "$TMP/sticky"
chmod 700 "$TMP/run"

# --- another user's TMPDIR: the runtime folder instead, said once ---
expect_rc "TMPDIR another user's: the job runs" 0 env $CLEAN TMPDIR="$TMP/eve" \
    XDG_RUNTIME_DIR="$TMP/run" "$DLRUN" -np 2 sh -c 'echo "$DLRUN_BROKER"'
expect_eq "  one line from dlrun" "$(grep -c '^dlrun:' "$TMP/err")" 1
expect_grep "  it says why and what instead" \
    "^dlrun: TMPDIR=$TMP/eve: $TMP/eve belongs to uid 65534 (another user could replace dlrun's private folders there): using $TMP/run instead$" "$TMP/err"
sock=$(sed -n '1s/^unix://p' "$TMP/out")
case $sock in
"$TMP"/run/dlrun-job.*/broker.sock) pass "  the broker's socket in the runtime folder" ;;
*) fail "  the broker's socket in the runtime folder: $sock" ;;
esac
expect_eq "  nothing made in another user's folder" "$(ls -A "$TMP/eve")" ""
expect_eq "  the runtime folder: ours, 0700" "$(owner_mode "$TMP/run")" "0 700"
expect_eq "  and no job folder left in it" "$(ls -A "$TMP/run" | grep -c '^dlrun-')" 0

# the job's folder while it runs: ours, 0700, in the runtime folder
env $CLEAN TMPDIR="$TMP/eve" XDG_RUNTIME_DIR="$TMP/run" "$DLRUN" -np 1 \
    sh -c 'stat -c "%u %a" "$(dirname "${DLRUN_BROKER#unix:}")"' >"$TMP/out" 2>/dev/null
expect_eq "  the job's folder it used: ours, 0700" "$(cat "$TMP/out")" "0 700"

# --- no usable XDG_RUNTIME_DIR: /tmp/dlrun-UID ---
chmod 755 "$TMP/run"
expect_rc "a runtime folder others can read: not used" 0 env $CLEAN \
    TMPDIR="$TMP/eve" XDG_RUNTIME_DIR="$TMP/run" "$DLRUN" -np 1 sh -c 'echo "$DLRUN_BROKER"'
case $(cat "$TMP/out") in
unix:/tmp/dlrun-0/dlrun-job.*/broker.sock)
    pass "  /tmp/dlrun-0 instead"
    expect_eq "  /tmp/dlrun-0: ours, 0700" "$(owner_mode /tmp/dlrun-0)" "0 700" ;;
*) fail "  /tmp/dlrun-0 instead: $(cat "$TMP/out")" ;;
esac
chmod 700 "$TMP/run"

# --- world-writable without the sticky bit: not used either ---
expect_rc "TMPDIR world-writable, no sticky bit: the job runs" 0 env $CLEAN \
    TMPDIR="$TMP/open" XDG_RUNTIME_DIR="$TMP/run" "$DLRUN" -np 1 true
expect_grep "  the line says why" \
    "^dlrun: TMPDIR=$TMP/open: $TMP/open is writable by others without the sticky bit" "$TMP/err"
expect_eq "  nothing made there" "$(ls -A "$TMP/open")" ""

# --- a sticky one of ours: used, nothing said ---
expect_rc "TMPDIR sticky and ours: used" 0 env $CLEAN TMPDIR="$TMP/sticky" \
    XDG_RUNTIME_DIR="$TMP/run" "$DLRUN" -np 1 sh -c 'echo "$DLRUN_BROKER"'
expect_eq "  nothing said" "$(cat "$TMP/err")" ""
case $(cat "$TMP/out") in
unix:"$TMP"/sticky/dlrun-job.*/broker.sock) pass "  the job's folder in it" ;;
*) fail "  the job's folder in it: $(cat "$TMP/out")" ;;
esac

# --- the agents' relays (simulated nodes) go the same way ---
expect_rc "two simulated nodes, TMPDIR another user's" 0 env $CLEAN \
    DLRUN_RELAY_SIM_MS=0 TMPDIR="$TMP/eve" XDG_RUNTIME_DIR="$TMP/run" "$DLRUN" $SIM -H 'sim[1-2]:1' \
    -- sh -c 'echo "$DLRUN_BROKER"'
expect_eq "  every relay's socket in the runtime folder" \
    "$(grep -c "^unix:$TMP/run/dlrun-" "$TMP/out")" 2
expect_eq "  nothing made in another user's folder" "$(ls -A "$TMP/eve")" ""
expect_eq "  what dlrun said: that line once (the first node's agent)" \
    "$(grep -c '^dlrun:' "$TMP/err")/$(grep -c "^dlrun: TMPDIR=.*using $TMP/run instead$" "$TMP/err")" 1/1
done_testing
