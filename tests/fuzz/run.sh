#!/bin/sh
# run.sh DIR SECONDS - run every libFuzzer binary in DIR for SECONDS each.
#
# Each fuzzer NAME starts from the seed corpus tests/fuzz/corpus/NAME/ (read
# only: what it finds goes to a scratch copy) with -max_len=4096.  Prints
# "ok N - NAME" or "not ok N - NAME" (with the end of its log) per fuzzer,
# then "fuzz: N passed, N failed"; exits 1 if any crashed.  What libFuzzer
# keeps (crash-*, leak-*, slow-unit-* inputs) goes to DIR/artifacts/NAME-*;
# replay one with `DIR/NAME FILE`.
dir=${1:?usage: run.sh DIR SECONDS}
secs=${2:?usage: run.sh DIR SECONDS}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/dlrun-fuzz.XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
mkdir -p "$dir/artifacts" || exit 1
pass=0 fail=0 n=0
for bin in "$dir"/fuzz_*; do
    [ -f "$bin" ] && [ -x "$bin" ] || continue
    name=$(basename "$bin")
    n=$((n + 1))
    mkdir -p "$work/$name"
    set --
    [ -d "$here/corpus/$name" ] && set -- "$here/corpus/$name"
    "$bin" -max_len=4096 -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$dir/artifacts/$name-" "$work/$name" "$@" \
        >"$work/$name.log" 2>&1
    rc=$?
    # UBSan reports and goes on unless built with -fno-sanitize-recover.
    grep -q 'runtime error:' "$work/$name.log" && [ "$rc" -eq 0 ] && rc=1
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$name.log")
    if [ "$rc" -eq 0 ]; then
        pass=$((pass + 1))
        echo "ok $n - $name (${secs}s, ${runs:-?} runs)"
    else
        fail=$((fail + 1))
        echo "not ok $n - $name (exit $rc)"
        tail -n 30 "$work/$name.log" | sed 's/^/#   /'
    fi
done
if [ "$n" -eq 0 ]; then
    echo "not ok - no fuzz_* binaries in $dir"
    fail=1
fi
echo "fuzz: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
