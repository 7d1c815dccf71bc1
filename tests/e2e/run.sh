#!/bin/sh
# Runs every end-to-end test tests/e2e/t_*.sh with $DLRUN set to the binary
# under test.  A test exits 0 (pass), 77 (skipped, with its reason on the
# last line of output) or anything else (fail).  Output of each test goes to
# $E2E_LOG_DIR/NAME.log and is shown when it fails.
# DLRUN_E2E_NO_CLUSTER=1 skips the tests that need the Slurm/ssh cluster.
here=$(cd "$(dirname "$0")" && pwd)
: "${DLRUN:?set DLRUN to the dlrun binary}"
export DLRUN
logs=${E2E_LOG_DIR:-$(mktemp -d /tmp/dlrun-e2e.XXXXXX)}
mkdir -p "$logs"
pass=0 fail=0 skip=0
for t in "$here"/t_*.sh; do
    n=$(basename "$t" .sh)
    if [ -n "$DLRUN_E2E_NO_CLUSTER" ] && grep -q '^# needs: cluster' "$t"; then
        continue
    fi
    start=$(date +%s)
    sh "$t" >"$logs/$n.log" 2>&1; rc=$?
    secs=$(( $(date +%s) - start ))
    case $rc in
    0) pass=$((pass + 1)); echo "ok - $n (${secs}s)" ;;
    77) skip=$((skip + 1)); echo "ok - $n # SKIP $(tail -n 1 "$logs/$n.log")" ;;
    *) fail=$((fail + 1)); echo "not ok - $n (exit $rc, ${secs}s)"
       sed 's/^/#   /' "$logs/$n.log" | tail -n 60 ;;
    esac
done
echo "e2e: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
