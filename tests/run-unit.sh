#!/bin/sh
# Runs each unit-test binary given, shows its TAP, and sums the results.
pass=0 fail=0
for t in "$@"; do
    echo "# $t"
    out=$("$t" 2>&1); rc=$?
    printf '%s\n' "$out"
    p=$(printf '%s\n' "$out" | grep -c '^ok ')
    f=$(printf '%s\n' "$out" | grep -c '^not ok ')
    [ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1 && echo "not ok - $t exited $rc"
    pass=$((pass + p)) fail=$((fail + f))
done
echo "unit: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
