#!/bin/sh
# t_bind.sh - binding through the binary: plans on saved topologies, and
# bindings applied on this machine as the kernel reports them.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
CLEAN="-u SLURM_JOB_ID -u SLURM_STEP_ID -u PMIX_NAMESPACE -u OMPI_COMM_WORLD_RANK
    -u PMI_RANK -u PBS_NODEFILE -u LSB_MCPU_HOSTS -u NQSV_MPIOPTS -u CUDA_VISIBLE_DEVICES"
run() { env $CLEAN "$DLRUN" "$@"; }
ranks_json() { $PY -c 'import json,sys; d=json.load(sys.stdin); print(" ".join("%s/%s" % (r["cpus"], r["gpu"]) for r in d["ranks"]))'; }

# --- SQUID-like node: ppr:4:socket puts ranks 0-3 next to GPUs 0-3 on
# socket 0 (cores 0-37) and 4-7 next to GPUs 4-7 on socket 1 (38-75) ---
out=$(run plan --json --topology "$TOP/tests/topo/squid.xml" -H n1:8 --master-addr 10.0.0.1 \
    --map-by ppr:4:socket --bind-to core | ranks_json)
set -- $out
ok_socket=1
for i in 0 1 2 3 4 5 6 7; do
    eval "b=\${$((i + 1))}"
    cpus=${b%/*} gpu=${b#*/}
    lo=${cpus%%[-,]*}
    [ "$gpu" = "$i" ] || ok_socket=0
    if [ $i -lt 4 ]; then [ "$lo" -lt 38 ] || ok_socket=0; else [ "$lo" -ge 38 ] || ok_socket=0; fi
done
expect_eq "squid ppr:4:socket: rank k on GPU k, on GPU k's socket" "$ok_socket" 1 || echo "  $out"
expect_rc "ppr:4:socket with 10 ranks refused" 2 run plan --topology "$TOP/tests/topo/squid.xml" \
    -H n1:10 --master-addr 10.0.0.1 --map-by ppr:4:socket
expect_grep "  says what was asked" "ppr:4:socket" "$TMP/err"
expect_eq "  one line" "$(wc -l <"$TMP/err" | tr -d ' ')" 1
out=$(run env --topology "$TOP/tests/topo/squid.xml" -H n1:8 --master-addr 10.0.0.1 \
    --gpu-bind isolate --rank 5 | sed -n "s/^CUDA_VISIBLE_DEVICES='\([^']*\)'.*/\1/p")
expect_eq "--gpu-bind isolate: rank 5 sees GPU 5 only" "$out" 5
out=$(run plan --json --topology 'synthetic:package:1 core:4 pu:1' -H n1:6 \
    --master-addr 10.0.0.1 --bind-to core 2>&1)
case $out in *oversubscribe*) pass "more ranks than cores refused, naming --oversubscribe" ;;
*) fail "more ranks than cores: $out" ;; esac
expect_rc "bad --map-by" 2 run plan --map-by ppr:x:socket
expect_rc "bad --bind-to" 2 run plan --bind-to cache
expect_grep "  names the value" "cache" "$TMP/err"

# --- on this machine: what the kernel says each rank may use ---
n=$(nproc)
run -np "$n" --bind-to core --report-bindings sh -c \
    'echo "$RANK $(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)"' \
    >"$TMP/o" 2>"$TMP/e"
expect_eq "bind-to core: each rank on its own CPU set" \
    "$(awk '{ print $2 }' "$TMP/o" | sort -u | wc -l | tr -d ' ')" "$n"
# the report and the kernel agree, rank by rank
sed -n 's/^dlrun: rank \([0-9]*\) host [^ ]* cpus \([^ ]*\) .*/\1 \2/p' "$TMP/e" | sort >"$TMP/reported"
sort "$TMP/o" >"$TMP/actual"
expect_eq "--report-bindings matches the kernel's view" "$(cat "$TMP/reported")" "$(cat "$TMP/actual")"
all=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
out=$(run -np 2 --bind-to none sh -c 'sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status' | sort -u)
expect_eq "--bind-to none: the whole machine" "$out" "$all"
done_testing
