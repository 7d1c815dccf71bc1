#!/bin/sh
# t_bind.sh - binding through the binary: plans on saved topologies, and
# bindings applied on this machine as the kernel reports them.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
CLEAN="$NO_SCHED -u CUDA_VISIBLE_DEVICES"
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

# --- the binding cache: a repeated launch here takes its plan from
# bind-*.bin and loads no topology; the plan is the same with the cache
# off.  In an empty cache folder of its own, as on a plain machine (an
# HWLOC_* variable would turn the cache off). ---
for v in $(env | sed -n 's/^\(HWLOC_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
unset DLRUN_TOPOLOGY_CACHE
XDG=$TMP/xdg
mkdir -m 700 "$XDG"
here() { env $CLEAN XDG_RUNTIME_DIR="$XDG" "$@"; }
affinity='echo "$RANK $(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)"'
# the --report-bindings lines as "RANK CPUS"
reported() { sed -n 's/^dlrun: rank \([0-9]*\) host [^ ]* cpus \([^ ]*\) .*/\1 \2/p' "$1" | sort; }
if [ "$n" -lt 2 ]; then
    echo "# skip: the binding cache checks need 2 CPUs"
else
    here "$DLRUN" -np 2 --report-bindings sh -c "$affinity" >"$TMP/o1" 2>"$TMP/e1"
    set -- "$XDG"/dlrun/bind-*.bin
    expect_eq "first run: one bind-*.bin saved" "$#:$(test -f "$1" && echo file)" "1:file"
    here "$DLRUN" -np 2 --report-bindings sh -c "$affinity" >"$TMP/o2" 2>"$TMP/e2"
    here DLRUN_TOPOLOGY_CACHE=0 "$DLRUN" -np 2 --report-bindings sh -c "$affinity" \
        >"$TMP/o3" 2>"$TMP/e3"
    expect_eq "cache hit: the report of a miss" "$(grep '^dlrun: rank' "$TMP/e2")" \
        "$(grep '^dlrun: rank' "$TMP/e1")"
    expect_eq "  and of DLRUN_TOPOLOGY_CACHE=0" "$(grep '^dlrun: rank' "$TMP/e3")" \
        "$(grep '^dlrun: rank' "$TMP/e1")"
    expect_eq "  two ranks, two CPU sets" "$(awk '{ print $2 }' "$TMP/o2" | sort -u | wc -l | tr -d ' ')" 2
    expect_eq "  applied as reported" "$(sort "$TMP/o2")" "$(reported "$TMP/e2")"
    expect_eq "  as the miss applied it" "$(sort "$TMP/o2")" "$(sort "$TMP/o1")"
    # a plan that fails is never kept: the same error each time
    ls "$XDG/dlrun" >"$TMP/files"
    expect_rc "ppr error here" 2 here "$DLRUN" -np 2 --map-by ppr:4:node true
    cp "$TMP/err" "$TMP/err1"
    expect_rc "  again" 2 here "$DLRUN" -np 2 --map-by ppr:4:node true
    expect_eq "  the same message" "$(cat "$TMP/err")" "$(cat "$TMP/err1")"
    expect_eq "  nothing more kept" "$(ls "$XDG/dlrun")" "$(cat "$TMP/files")"
fi
# what a hit opens: the bind file, never the topology (strace's control:
# a miss opens the topology file)
if [ "$n" -lt 2 ] || ! command -v strace >/dev/null 2>&1; then
    echo "# skip: the strace checks need strace and 2 CPUs"
else
    # LeakSanitizer cannot run under ptrace (the sanitizer build)
    traced() { here ASAN_OPTIONS=detect_leaks=0 strace -f -e trace=openat -o "$@"; }
    rm -f "$XDG"/dlrun/bind-*.bin
    expect_rc "strace of a miss" 0 traced "$TMP/miss" "$DLRUN" -np 2 true
    expect_grep "  topo-*.xml opened" 'dlrun/topo-[^"]*\.xml"' "$TMP/miss"
    expect_grep "  libhwloc loaded" 'libhwloc\.so[^"]*", O_RDONLY' "$TMP/miss"
    expect_rc "strace of a hit" 0 traced "$TMP/hit" "$DLRUN" -np 2 true
    expect_grep "  bind-*.bin opened" 'dlrun/bind-[^"]*\.bin", O_RDONLY' "$TMP/hit"
    expect_eq "  no topology file opened" "$(grep -c 'dlrun/topo-' "$TMP/hit")" 0
    # lib/place/hwlocdl.c opens libhwloc at the first hwloc call: none here
    expect_eq "  libhwloc not even loaded" "$(grep -c 'libhwloc' "$TMP/hit")" 0
fi

# --- libhwloc that cannot be loaded (lib/place/hwlocdl.c opens it with dlopen):
# a file that is no library first in LD_LIBRARY_PATH, as the loader would
# find it.  Default binding: a warning and the ranks run unbound;
# --bind-to: a clear error.  The trampolines are never exported (else
# libhwloc's own calls would land in them). ---
if command -v nm >/dev/null 2>&1; then
    expect_eq "dlrun exports no hwloc function" "$(nm -D --defined-only "$DLRUN" | grep -c hwloc_)" 0
fi
# The NVIDIA driver's GPU list is part of the caches' key: a GPU that
# falls off the bus (the driver drops it) must not leave a plan that uses
# it.  A driver is faked with a tmpfs over /proc/driver in a mount
# namespace of its own (root only).
fake_gpus() {   # fake_gpus BUSID... -- dlrun ARGS: dlrun with those GPUs listed
    ids=; while [ "$1" != -- ]; do ids="$ids $1"; shift; done; shift
    here unshare -m sh -c 'mount -t tmpfs none /proc/driver || exit 99
        for g in $0; do mkdir -p "/proc/driver/nvidia/gpus/$g"; done
        exec "$@"' "$ids" "$@"
}
if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null ||
   ! unshare -m sh -c 'mount -t tmpfs none /proc/driver' 2>/dev/null; then
    echo "# skip: the GPU-list key check needs root and mount namespaces"
else
    rm -f "$XDG"/dlrun/bind-*.bin
    fake_gpus 0000:01:00.0 -- "$DLRUN" -np 1 true
    fake_gpus 0000:01:00.0 -- "$DLRUN" -np 1 true
    set -- "$XDG"/dlrun/bind-*.bin
    expect_eq "one GPU listed, two runs: one plan kept" "$#" 1
    fake_gpus 0000:01:00.0 0000:02:00.0 -- "$DLRUN" -np 1 true
    set -- "$XDG"/dlrun/bind-*.bin
    expect_eq "  a second GPU appears: a new plan" "$#" 2
    fake_gpus 0000:02:00.0 0000:01:00.0 -- "$DLRUN" -np 1 true
    set -- "$XDG"/dlrun/bind-*.bin
    expect_eq "  the same two, listed in another order: no new plan" "$#" 2
fi

mkdir "$TMP/nohwloc"
echo "not a library" >"$TMP/nohwloc/libhwloc.so.15"
nohwloc() { here LD_LIBRARY_PATH="$TMP/nohwloc" "$DLRUN" "$@"; }
expect_rc "no libhwloc, default binding: runs" 0 nohwloc -np 2 --report-bindings \
    sh -c 'sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status'
expect_grep "  warns, saying what to install" \
    "warning: not binding: cannot load hwloc (.*libhwloc.so.15.*): install libhwloc15" "$TMP/err"
expect_grep "  ranks not bound" "rank 1 host .* not bound" "$TMP/err"
expect_eq "  on the whole machine" "$(sort -u "$TMP/out")" "$all"
expect_rc "no libhwloc, --bind-to core: refused" 2 nohwloc -np 2 --bind-to core true
expect_grep "  saying what to install" "cannot load hwloc (.*): install libhwloc15" "$TMP/err"
expect_eq "  one line" "$(wc -l <"$TMP/err" | tr -d ' ')" 1
expect_rc "no libhwloc, --bind-to none --gpu-bind none: runs" 0 \
    nohwloc -np 2 --bind-to none --gpu-bind none true
expect_eq "  silently" "$(cat "$TMP/err")" ""
# --bind-to none leaves GPUs to place by locality (a topology), but only
# where the NVIDIA driver shows some (this test machine has none)
if [ ! -e /proc/driver/nvidia/gpus ] && [ ! -e /dev/nvidiactl ]; then
    expect_rc "no libhwloc, --bind-to none, no NVIDIA driver: runs" 0 \
        nohwloc -np 2 --bind-to none true
    expect_eq "  silently" "$(cat "$TMP/err")" ""
fi
# the synthetic example dlrun run --help shows is one dlrun takes (hwloc's
# descriptions end with their PUs)
spec=$("$DLRUN" run --help | sed -n 's/.*--topology SPEC.* or \(synthetic:.*\)$/\1/p' | tr -d '"')
expect_rc "the --help's --topology $spec" 0 "$DLRUN" plan --topology "$spec" -np 2
expect_eq "  is taken, no warning" "$(cat "$TMP/err")" ""
expect_grep "  its 16 CPUs" "16 slots (the CPUs of --topology)" "$TMP/out"
# Open MPI's ppr:N:core and --bind-to hwthread: dlrun binds each rank
# where mpirun does on this machine (ppr:2:core when its cores have two
# hardware threads), and refuses what it does not do with one line
cores=$(hwloc-calc --number-of core machine:0 2>/dev/null)
pus=$(hwloc-calc --number-of pu machine:0 2>/dev/null)
[ "$(id -u)" -eq 0 ] && root=--allow-run-as-root
show='echo "$R $(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)"'
per=1
[ -n "$cores" ] && [ -n "$pus" ] && [ "$pus" -ge $((2 * cores)) ] && per=2
if command -v mpirun >/dev/null 2>&1 && [ -n "$cores" ]; then
    n=$((per * cores))
    env $CLEAN mpirun $root --use-hwthread-cpus -H "localhost:$n" -np "$n" \
        --map-by "ppr:$per:core" --bind-to hwthread \
        sh -c "R=\$OMPI_COMM_WORLD_RANK; $show" 2>"$TMP/mpirun.err" | sort -n >"$TMP/mpirun.out"
    run -np "$n" --map-by "ppr:$per:core" --bind-to hwthread \
        sh -c "R=\$RANK; $show" | sort -n >"$TMP/dlrun.out"
    if [ -s "$TMP/mpirun.out" ]; then
        expect_eq "--map-by ppr:$per:core --bind-to hwthread: mpirun's CPUs, rank by rank" \
            "$(cat "$TMP/dlrun.out")" "$(cat "$TMP/mpirun.out")"
    else
        echo "# mpirun ran nothing ($(head -c 200 "$TMP/mpirun.err")): not compared"
    fi
    expect_eq "  one hardware thread each" "$(awk '$2 ~ /^[0-9]+$/' "$TMP/dlrun.out" | wc -l | tr -d ' ')" "$n"
fi
# OMP_NUM_THREADS is each rank's CPUs: Flow's node (2 x 20 cores, 4 GPUs)
# with 3 ranks puts rank 2 alone next to GPU 2 on socket 1, 20 cores; an
# OMP_NUM_THREADS the user exported is left as it is
got=
for r in 0 1 2; do
    got="$got $(env $CLEAN -u OMP_NUM_THREADS "$DLRUN" env --topology "$TOP/tests/topo/flow.xml" \
        -np 3 --master-addr 10.0.0.1 --rank $r | sed -n "s/^OMP_NUM_THREADS='\([0-9]*\)'.*/\1/p")"
done
expect_eq "Flow's node, 3 ranks: OMP_NUM_THREADS 10, 10, 20 (their cores)" "$got" " 10 10 20"
expect_eq "  an exported OMP_NUM_THREADS stays the user's" "$(env $CLEAN OMP_NUM_THREADS=10 \
    "$DLRUN" env --topology "$TOP/tests/topo/flow.xml" -np 3 --master-addr 10.0.0.1 --rank 2 |
    grep -c '^OMP_NUM_THREADS=')" 0
expect_rc "--map-by ppr:2:l3cache: refused" 2 run plan -np 2 --map-by ppr:2:l3cache
expect_grep "  saying dlrun places no ranks by caches" "does not place ranks by caches" "$TMP/err"
expect_rc "--map-by node: refused" 2 run plan -np 2 --map-by node
expect_grep "  naming Open MPI's mapping" "Open MPI's node mapping is not one dlrun does" "$TMP/err"
expect_rc "no libhwloc, dlrun check" 0 nohwloc check
expect_grep "  says so" "^topology: *error: cannot load hwloc" "$TMP/out"
done_testing
