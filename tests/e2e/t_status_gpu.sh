#!/bin/sh
# t_status_gpu.sh - `dlrun status` shows each rank's GPU use when NVML is
# there: a stand-in libnvidia-ml.so.1 (nvml_stub/: 2 GPUs, 37 % and 1000
# MiB used, 81 % and 3000 MiB) found through DLRUN_NVML_LIBRARY and
# LD_LIBRARY_PATH, a 2-rank job whose CUDA_VISIBLE_DEVICES dlrun planned
# (a saved topology with GPUs, --gpu-bind isolate): rank k shows GPU k's
# numbers, in the table and in --json; without the library, or when its
# init fails, no GPU column and no error.
. "$(dirname "$0")/lib.sh"
command -v cc >/dev/null 2>&1 || skip "skip: no C compiler"
CLEAN="$NO_SCHED
       -u DLRUN_BROKER -u DLRUN_TOKEN -u CUDA_VISIBLE_DEVICES
       -u DLRUN_NVML_LIBRARY"
GPUS="--topology $TOP/tests/topo/squid.xml --bind-to none --gpu-bind isolate"
chmod 755 "$TMP"
mkdir -m 755 "$TMP/rt" "$TMP/lib"
XDG_RUNTIME_DIR=$TMP/rt
export XDG_RUNTIME_DIR
cc -std=c11 -O2 -Wall -Wextra -Werror -fPIC -shared -Wl,-soname,libnvidia-ml.so.1 \
    -o "$TMP/lib/libnvidia-ml.so.1" "$E2E/nvml_stub/stub_nvml.c" ||
    { fail "building the stand-in NVML"; done_testing; }
st() { env $CLEAN "$@" "$DLRUN" status; }

# job VAR=VALUE...: a 2-rank job of sleeping ranks under that environment,
# its pid in $p once status lists both ranks (a hang guard)
job() {
    env $CLEAN "$@" "$DLRUN" -np 2 $GPUS sh -c 'echo "up $RANK"; sleep 600' \
        >"$TMP/job.out" 2>&1 &
    p=$!
    for _ in $(seq 600); do
        [ "$(st | grep -c '^  [0-9]')" -ge 2 ] && return 0; sleep 0.1
    done
    fail "the job's ranks never listed"; sed 's/^/  | /' "$TMP/job.out"
}
stop() { kill -TERM $p; wait $p; }
# until_shown PATTERN: until dlrun status shows a line matching it (the
# first sample may come before a rank's exec; a hang guard)
until_shown() {
    for _ in $(seq 600); do st | grep -q "$1" && return 0; sleep 0.1; done
    return 1
}

# --- the stand-in found through LD_LIBRARY_PATH ---
job LD_LIBRARY_PATH="$TMP/lib"
until_shown '^  0 .* 37\.0 ' && until_shown '^  1 .* 81\.0 '
st >"$TMP/st.out"
expect_grep "with NVML: a GPU% and a GPU MEM column" "RSS  *GPU% GPU MEM  *RESTARTS" "$TMP/st.out" ||
    sed 's/^/  | /' "$TMP/st.out"
expect_eq "  rank 0 on GPU 0, rank 1 on GPU 1: their numbers" \
    "$(awk '$1 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/ { print $1 ":" $8 ":" $9 $10 }' "$TMP/st.out" | tr '\n' ' ')" \
    "0:37.0:1000MiB 1:81.0:2.9GiB " || sed 's/^/  | /' "$TMP/st.out"
"$DLRUN" status --json >"$TMP/st.json"
expect_rc "  --json: gpu_percent and gpu_mem_kb per rank" 0 python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
j = [x for x in d["jobs"] if x["pid"] == int(sys.argv[2])][0]
got = [(r["rank"], r["gpu_percent"], r["gpu_mem_kb"]) for r in j["ranks"]]
assert got == [(0, 37.0, 1024000), (1, 81.0, 3072000)], got
' "$TMP/st.json" "$p"
stop

# --- named by DLRUN_NVML_LIBRARY; the GPU a rank sees by its UUID ---
job DLRUN_NVML_LIBRARY="$TMP/lib/libnvidia-ml.so.1"
until_shown '^  0 .* 37\.0 ' && until_shown '^  1 .* 81\.0 '
expect_eq "DLRUN_NVML_LIBRARY: the same numbers" \
    "$(st | awk '$1 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/ { print $1 ":" $8 }' | tr '\n' ' ')" \
    "0:37.0 1:81.0 "
stop
env $CLEAN CUDA_VISIBLE_DEVICES=GPU-stub-1 DLRUN_NVML_LIBRARY="$TMP/lib/libnvidia-ml.so.1" \
    "$DLRUN" -np 1 --bind-to none --gpu-bind none sh -c 'sleep 600' >"$TMP/job.out" 2>&1 & p=$!
until_shown '^  0 .* 81\.0 '
st >"$TMP/st.out"
expect_grep "CUDA_VISIBLE_DEVICES=GPU-stub-1 (a UUID): GPU 1's use" \
    '^  0 .* 81\.0 2\.9 GiB ' "$TMP/st.out" || sed 's/^/  | /' "$TMP/st.out"
stop

# --- a multi-node job (simulated nodes, as in t_status.sh): each agent
# samples its node's GPUs and puts the numbers into the broker; no
# CUDA_VISIBLE_DEVICES (--gpu-bind none): every GPU of the node, the mean
# of 37 and 81 % and 1000 + 3000 MiB ---
env $CLEAN DLRUN_RELAY_SIM_MS=0 DLRUN_NVML_LIBRARY="$TMP/lib/libnvidia-ml.so.1" \
    "$DLRUN" --bind-to none --gpu-bind none --master-addr 127.0.0.1 --iface lo -H 'sim[1-2]:1' \
    sh -c 'echo "up $RANK"; sleep 600' >"$TMP/job.out" 2>&1 & p=$!
until_shown '^  0 .* 59\.0 ' && until_shown '^  1 .* 59\.0 '
st >"$TMP/st.out"
expect_eq "multi-node, no CUDA_VISIBLE_DEVICES: all GPUs of each node, via the broker" \
    "$(awk '$1 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/ { print $1 "@" $2 ":" $8 ":" $9 $10 }' "$TMP/st.out" | tr '\n' ' ')" \
    "0@sim1:59.0:3.9GiB 1@sim2:59.0:3.9GiB " || sed 's/^/  | /' "$TMP/st.out" "$TMP/job.out"
stop

# --- no NVML: no column, no error; an NVML whose init fails: the same ---
job
sleep 1.5   # samples taken: with NVML its columns would be there
st >"$TMP/st.out"
if grep -q 'GPU' "$TMP/st.out"; then fail "without NVML: no GPU column"; else pass "without NVML: no GPU column"; fi
"$DLRUN" status --json | grep -q gpu_ && fail "  nor in --json" || pass "  nor in --json"
expect_eq "  the job runs as before" "$(grep -c '^up ' "$TMP/job.out")" 2
stop
job LD_LIBRARY_PATH="$TMP/lib" STUB_NVML_INIT_FAIL=1
sleep 1.5   # the same
if st | grep -q 'GPU'; then fail "NVML whose init fails: no GPU column"; else pass "NVML whose init fails: no GPU column"; fi
stop
done_testing
