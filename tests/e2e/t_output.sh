#!/bin/sh
# t_output.sh - what dlrun does with the ranks' output, and supervision
# beyond fail-fast: restarts, the summary, the kill timeout, and real DDP.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
CLEAN="$NO_SCHED"
run() { env $CLEAN "$DLRUN" "$@"; }

# --- tagging, files, filter, a last line without newline ---
run -np 2 --oversubscribe -l sh -c 'echo "out $RANK"; echo "err $RANK" >&2; printf "tail $RANK"' \
    >"$TMP/o" 2>"$TMP/e"
expect_eq "tagged stdout" "$(sort "$TMP/o" | tr '\n' '|')" "[0] out 0|[0] tail 0|[1] out 1|[1] tail 1|"
expect_eq "tagged stderr" "$(sort "$TMP/e" | tr '\n' '|')" "[0] err 0|[1] err 1|"
# --timestamp-output: mpirun's date, then -l's tag; files undated
TZ=UTC run -np 2 --oversubscribe -l --timestamp-output --output-dir "$TMP/ts" \
    sh -c 'echo "out $RANK"; echo "err $RANK" >&2' >"$TMP/o" 2>"$TMP/e"
D='[A-Z][a-z][a-z] [A-Z][a-z][a-z] [ 1-3][0-9] [0-2][0-9]:[0-5][0-9]:[0-6][0-9] 20[0-9][0-9]'
expect_eq "--timestamp-output -l: date, tag, line" \
    "$(sed "s/^$D //" "$TMP/o" | sort | tr '\n' '|')" "[0] out 0|[1] out 1|"
expect_eq "  every stdout line dated" "$(grep -c "^$D \[[01]\] out" "$TMP/o")" 2
expect_eq "  every stderr line dated" "$(grep -c "^$D \[[01]\] err" "$TMP/e")" 2
expect_eq "  the files undated" "$(cat "$TMP/ts/rank.1/stdout")" "out 1"
if command -v mpirun >/dev/null 2>&1; then
    # the same date as mpirun's own: same format, same clock
    a=$(TZ=UTC mpirun --allow-run-as-root --timestamp-output -np 1 echo x 2>/dev/null | cut -c1-24)
    b=$(TZ=UTC run -np 1 --timestamp-output echo x | cut -c1-24)
    case $a in
    "") echo "# mpirun --timestamp-output printed nothing: not compared" ;;
    *) expect_eq "  mpirun's date format" "$(echo "$b" | sed "s/^$D\$/D/")$(echo "$a" | sed "s/^$D\$/D/")" "DD" ;;
    esac
fi
run -np 3 --oversubscribe --output-dir "$TMP/d" --ranks-filter 2 sh -c \
    'echo "out $RANK"; printf "raw\001\000x $RANK" >&2' >"$TMP/o" 2>"$TMP/e"
expect_eq "--ranks-filter 2: console" "$(cat "$TMP/o")" "out 2"
expect_eq "--output-dir: rank 0's stdout" "$(cat "$TMP/d/rank.0/stdout")" "out 0"
expect_eq "--output-dir: binary stderr kept byte for byte" \
    "$(od -An -c "$TMP/d/rank.1/stderr" | tr -s ' ')" " r a w 001 \0 x 1"
# four ranks write long lines fast: no line may be mixed with another
cat >"$TMP/w.sh" <<'EOS'
i=0; line=$(printf "%0500d" 0 | tr 0 "$RANK")
while [ $i -lt 400 ]; do echo "<$RANK:$line>"; i=$((i + 1)); done
EOS
run -np 4 --oversubscribe -l sh "$TMP/w.sh" >"$TMP/o"
expect_eq "1600 lines arrived" "$(wc -l <"$TMP/o" | tr -d ' ')" 1600
bad=$(grep -cvE '^\[([0-3])\] <([0-3]):([0-3])+>$' "$TMP/o")
expect_eq "no malformed or mixed line" "$bad" 0
expect_eq "every line from the rank it says" \
    "$(sed -nE 's/^\[([0-3])\] <([0-3]):.*/\1\2/p' "$TMP/o" | awk '{ if (substr($0,1,1) != substr($0,2,1)) n++ } END { print n + 0 }')" 0

# --- restarts and the summary ---
# rank 1 fails only after rank 0 has written its line (else fail-fast may
# stop rank 0 first, a race the test must not depend on)
run -np 2 --oversubscribe --max-restarts 2 --summary "$TMP/s.json" sh -c \
    'echo "r $RANK $TORCHELASTIC_RESTART_COUNT"
     if [ $RANK = 0 ]; then touch "$0.$DLRUN_RESTART_COUNT"; exit 0; fi
     while [ ! -e "$0.$DLRUN_RESTART_COUNT" ]; do sleep 0.01; done
     [ $DLRUN_RESTART_COUNT -lt 2 ] && exit 4; exit 0' "$TMP/r0done" \
    >"$TMP/o" 2>"$TMP/e"
expect_eq "restarted twice, then succeeded" "$?" 0
expect_eq "  restart counts seen" "$(sort "$TMP/o" | tr '\n' '|')" "r 0 0|r 0 1|r 0 2|r 1 0|r 1 1|r 1 2|"
expect_eq "  two restart lines" "$(grep -c 'restarting the job' "$TMP/e")" 2
expect_eq "  summary" "$($PY -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["exit_code"], d["restarts"], [r["exit_code"] for r in d["ranks"]])' "$TMP/s.json")" "0 2 [0, 0]"
run -np 2 --oversubscribe --max-restarts 1 --summary "$TMP/s.json" sh -c 'exit 9' 2>"$TMP/e"
expect_eq "restarts used up: the failing rank's code" "$?" 9
expect_eq "  summary names the failure" "$($PY -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["exit_code"], d["restarts"], d["failed_rank"] in (0, 1))' "$TMP/s.json")" "9 1 True"

# --- a rank that ignores SIGTERM is killed after --kill-timeout ---
# Asserted by outcome and order, not by speed: the stubborn rank is gone
# when dlrun returns, and dlrun waited at least the kill timeout for it.
start=$(date +%s%N)
run -np 2 --oversubscribe --kill-timeout 1 sh -c \
    'if [ $RANK = 0 ]; then sleep 0.3; exit 6; fi; trap "" TERM; echo $$ >"$0"; while :; do sleep 0.1; done' \
    "$TMP/stubborn" 2>"$TMP/e"
rc=$? ms=$(( ($(date +%s%N) - start) / 1000000 ))
expect_eq "SIGTERM ignored: exit code of the failing rank" "$rc" 6
if [ -s "$TMP/stubborn" ] && ! kill -0 "$(cat "$TMP/stubborn")" 2>/dev/null; then
    pass "  the rank that ignored SIGTERM was killed"; else fail "  the stubborn rank is still there"; fi
if [ "$ms" -ge 1000 ]; then pass "  not before the kill timeout (${ms}ms)"; else fail "  killed after ${ms}ms"; fi

# --- a second SIGINT within a second kills at once (srun's convention) ---
env $CLEAN "$DLRUN" -np 2 --oversubscribe --kill-timeout 30 sh -c \
    'trap "" INT TERM; echo up >"$0.$RANK"; while :; do sleep 0.1; done' "$TMP/up" &
pid=$!
for i in $(seq 1200); do [ -f "$TMP/up.0" ] && [ -f "$TMP/up.1" ] && break; sleep 0.05; done
start=$(date +%s)
kill -INT $pid; sleep 0.3; kill -INT $pid; wait $pid
rc=$? secs=$(( $(date +%s) - start ))
expect_eq "double INT: ranks killed (137)" "$rc" 137
# "at once" means: without waiting out the 30 s kill timeout
if [ "$secs" -lt 30 ]; then pass "  at once (${secs}s, kill timeout 30s)"; else fail "  took ${secs}s"; fi

# --- real DDP training: every rank ends with the same weights ---
run -np 4 --oversubscribe $PY "$E2E/ddp_train.py" >"$TMP/o" 2>&1
expect_eq "DDP on gloo, 4 ranks" "$?" 0
expect_eq "  identical weights on every rank" "$(grep -c ' ok$' "$TMP/o")" 4 || cat "$TMP/o"
expect_eq "  one checksum" "$(awk '{ print $4 }' "$TMP/o" | sort -u | wc -l | tr -d ' ')" 1
done_testing
