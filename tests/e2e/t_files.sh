#!/bin/sh
# t_files.sh - the files dlrun writes (--output-dir's rank.N/stdout and
# stderr, --summary, script -o) are never written through a link another
# local user planted, nor into a folder or file of theirs: run as root with
# a second user (made here with useradd) who plants them.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "skip: needs root (to make and be a second user)"
command -v setpriv >/dev/null 2>&1 || skip "skip: setpriv not installed"
EVIL=dlrun-evil
id "$EVIL" >/dev/null 2>&1 ||
    useradd --system --no-create-home --shell /usr/sbin/nologin "$EVIL" 2>/dev/null ||
    id "$EVIL" >/dev/null 2>&1 || skip "skip: cannot make a second user"
as_evil() { setpriv --reuid="$EVIL" --regid="$EVIL" --clear-groups "$@"; }
CLEAN="$NO_SCHED"
run() { env $CLEAN "$DLRUN" "$@"; }
chmod 0711 "$TMP"               # the second user may pass through
E=$TMP/evil                     # the second user's folder
mkdir "$E" && chown "$EVIL" "$E"
echo precious >"$TMP/victim"
intact() { expect_eq "  the link's target untouched" "$(cat "$TMP/victim")" precious; }

# --- --output-dir ---
as_evil sh -c "mkdir -p '$E/out/rank.0' && ln -s '$TMP/victim' '$E/out/rank.0/stdout'"
expect_rc "--output-dir: a folder of another user: exit 1" 1 run \
    --output-dir "$E/out" -np 1 echo pwned
expect_grep "  says why" "a folder of another user" "$TMP/err"
intact
mkdir -m 0777 "$TMP/ww"
as_evil sh -c "mkdir '$TMP/ww/rank.0' && ln -s '$TMP/victim' '$TMP/ww/rank.0/stdout'"
expect_rc "--output-dir: our folder others can write to: exit 1" 1 run \
    --output-dir "$TMP/ww" -np 1 echo pwned
expect_grep "  says why" "others can write to" "$TMP/err"
intact
mkdir -m 1777 "$TMP/sticky"     # ours and sticky (like a shared scratch)
as_evil sh -c "mkdir '$TMP/sticky/rank.0' && ln -s '$TMP/victim' '$TMP/sticky/rank.0/stdout'"
expect_rc "--output-dir: our sticky folder, rank.0 planted by another user: exit 1" 1 \
    run --output-dir "$TMP/sticky" -np 1 echo pwned
expect_grep "  names rank.0" "rank.0: a folder of another user" "$TMP/err"
intact
expect_rc "--output-dir: our sticky folder, fresh: exit 0" 0 run \
    --output-dir "$TMP/sticky/mine" -np 2 --oversubscribe sh -c 'echo "hi $RANK"'
expect_eq "  rank.1/stdout written" "$(cat "$TMP/sticky/mine/rank.1/stdout")" "hi 1"
# the path itself, or a folder on it, a link another user put in a sticky
# folder (fs.protected_symlinks, when on, stops the kernel following it
# too, with another message: the lines below are dlrun's own refusal)
mkdir "$TMP/vdir"
as_evil ln -s "$TMP/vdir" "$TMP/sticky/outlink"
expect_rc "--output-dir: the path another user's link: exit 1" 1 run \
    --output-dir "$TMP/sticky/outlink" -np 1 echo pwned
expect_grep "  says why" "sticky/outlink: a symbolic link of another user's, not followed" "$TMP/err"
one_line
expect_eq "  nothing written through it" "$(ls "$TMP/vdir")" ""
expect_rc "--log-dir: a folder on the path another user's link: exit 1" 1 run \
    --log-dir "$TMP/sticky/outlink/logs" -np 1 echo pwned
expect_grep "  says why" "sticky/outlink: a symbolic link of another user's, not followed" "$TMP/err"
expect_eq "  nothing made through it" "$(ls "$TMP/vdir")" ""
expect_rc "--summary: a folder on the path another user's link: exit 1" 1 run \
    --summary "$TMP/sticky/outlink/sum.json" -np 1 true
expect_grep "  says why" "a symbolic link another user made" "$TMP/err"
expect_eq "  nothing written through it" "$(ls "$TMP/vdir")" ""
ln -s "$TMP/vdir" "$TMP/sticky/mylink"
expect_rc "--output-dir through a link of our own: exit 0" 0 run \
    --output-dir "$TMP/sticky/mylink/out" -np 1 echo hi
expect_eq "  written to its target" "$(cat "$TMP/vdir/out/rank.0/stdout")" hi

# --- --summary ---
as_evil ln -s "$TMP/victim" "$E/sum.json"
expect_rc "--summary: a link another user made: exit 1" 1 run \
    --summary "$E/sum.json" -np 1 true
expect_grep "  says why" "a symbolic link another user made" "$TMP/err"
intact
as_evil sh -c "echo theirs >'$E/sum2.json'; chmod 666 '$E/sum2.json'"
expect_rc "--summary: a file of another user: exit 1" 1 run \
    --summary "$E/sum2.json" -np 1 true
expect_eq "  their file untouched" "$(cat "$E/sum2.json")" theirs
ln -s "$TMP/mysum.json" "$TMP/mylink.json"
expect_rc "--summary through a link of our own: exit 0" 0 run \
    --summary "$TMP/mylink.json" -np 1 true
expect_grep "  written to its target" '"exit_code":0' "$TMP/mysum.json"
expect_rc "--summary /dev/stdout: exit 0" 0 run --summary /dev/stdout -np 1 true
expect_grep "  printed" '"exit_code":0' "$TMP/out"

# --- dlrun script -o ---
as_evil ln -s "$TMP/victim" "$E/job.sh"
expect_rc "script -o: a link another user made: exit 1" 1 "$DLRUN" script \
    --scheduler slurm -N 1 -o "$E/job.sh" -- prog
expect_grep "  says why" "a symbolic link another user made" "$TMP/err"
intact
done_testing
