#!/bin/sh
# t_nccl_example.sh - contrib/examples/nccl_allreduce.c (NCCL's one device
# per process all-reduce, the unique id from dlrun's broker instead of
# MPI_Bcast) without a GPU:
#  1. built with contrib/examples/Makefile against the stand-in CUDA and
#     NCCL of nccl_stub/ (same names; the all-reduce sums through files):
#     under `dlrun -np 4` exactly one rank creates the id, all four get it
#     from a real `dlrun broker` and the sums are right; a creator that
#     cannot load NCCL makes every rank fail with its reason;
#  2. where the real CUDA and NCCL headers are (`make examples` builds it):
#     real ncclGetUniqueId, both ranks get past the id, then stop at CUDA
#     with a clear line when there is no GPU (or pass where there is one);
#  3. without the headers, the Makefile skips with one line and exit 0.
. "$(dirname "$0")/lib.sh"
command -v cc >/dev/null 2>&1 || skip "skip: no C compiler"
command -v make >/dev/null 2>&1 || skip "skip: no make"
need_kv
BUILD_DIR=$(cd "$(dirname "$DLRUN")" && pwd)
[ -e "$BUILD_DIR/libdlrun.so" ] || make -s -C "$TOP" BUILD="$BUILD_DIR" "$BUILD_DIR/libdlrun.so"
EX=$TOP/contrib/examples
# a sanitizer build's libdlrun.so needs its programs built the same way
EX_CFLAGS="-O2 -g"
ldd "$DLRUN" 2>/dev/null | grep -q libasan && EX_CFLAGS="$EX_CFLAGS -fsanitize=address,undefined"
STUB=$E2E/nccl_stub

# fresh_broker: a fresh `dlrun broker` (a new job), its variables exported
bpid=
fresh_broker() {
    [ -n "$bpid" ] && kill -TERM "$bpid" && wait "$bpid"
    start_broker --bind 127.0.0.1
    set -a; . "$TMP/env"; set +a
}
fresh_broker

# --- 1. the stand-ins ---
S=$TMP/stub
mkdir -p "$S/lib" "$S/include"
cp "$STUB"/include/*.h "$S/include/"
cc -std=c11 -O2 -Wall -Wextra -Werror -fPIC -shared -I"$S/include" \
    -Wl,-soname,libnccl.so.2 -o "$S/lib/libnccl.so.2" "$STUB/stub_nccl.c" &&
    ln -s libnccl.so.2 "$S/lib/libnccl.so" &&
    cc -std=c11 -O2 -Wall -Wextra -Werror -fPIC -shared -I"$S/include" \
        -o "$S/lib/libcudart.so" "$STUB/stub_cuda.c" ||
    { fail "building the stand-in CUDA and NCCL"; done_testing; }
expect_rc "the example's Makefile builds it against CUDA_HOME=stand-ins" 0 \
    make -C "$EX" CUDA_HOME="$S" BUILD="$BUILD_DIR" OUT="$TMP/ex-stub" CFLAGS="$EX_CFLAGS"
mkdir -p "$TMP/nccl"
run_stub() {
    env LD_LIBRARY_PATH="$S/lib" STUB_NCCL_DIR="$TMP/nccl" \
        timeout -k 5 120 "$DLRUN" -np 4 --oversubscribe "$@"
}
expect_rc "dlrun -np 4 nccl_allreduce 4096 (stand-ins)" 0 \
    run_stub "$TMP/ex-stub/nccl_allreduce" 4096
expect_eq "  four ranks: all-reduce ok" "$(grep -c ': all-reduce ok$' "$TMP/out")" 4 ||
    sed 's/^/  | /' "$TMP/out" "$TMP/err"
expect_eq "  one rank created the id (ncclGetUniqueId called once)" \
    "$(wc -l <"$TMP/nccl/created" | tr -d ' ')" 1
created=$(awk '{ print $2 }' "$TMP/nccl/created")
expect_eq "  every rank's ncclCommInitRank got that id, rank and size" \
    "$(cat "$TMP"/nccl/init.* | sort -n | tr '\n' ' ')" \
    "0 4 $created 1 4 $created 2 4 $created 3 4 $created "
expect_rc "  the broker has the group's claim counter" 0 \
    "$DLRUN" kv get dlrun.nccl/allreduce.0.claim
expect_eq "  the broker counted four arrivals" "$(cat "$TMP/out")" 4

# a creator that cannot load NCCL: everyone fails with its reason (a new
# job: with the old broker the id would simply be found)
fresh_broker
expect_rc "NCCL cannot be loaded: the job fails" 1 \
    env DLRUN_NCCL_LIBRARY=/nonexistent/libnccl.so.2 \
    LD_LIBRARY_PATH="$S/lib" STUB_NCCL_DIR="$TMP/nccl" \
    timeout -k 5 120 "$DLRUN" -np 2 --oversubscribe "$TMP/ex-stub/nccl_allreduce" 16
expect_grep "  the rank says why (cannot load NCCL)" \
    "NCCL id: .*cannot load NCCL: /nonexistent/libnccl.so.2" "$TMP/err"

# --- 2. the real headers and libraries, where they are ---
# (not under the sanitizers: CUDA's libraries are not built for them)
case $EX_CFLAGS in
*sanitize*) echo "the sanitizer build" >"$TMP/make.out" ;;
*) make -C "$EX" BUILD="$BUILD_DIR" OUT="$TMP/ex-real" >"$TMP/make.out" 2>&1 ;;
esac
if [ -x "$TMP/ex-real/nccl_allreduce" ]; then
    pass "built against the real CUDA and NCCL headers"
    # two ranks by hand: dlrun would stop the second when the first fails
    # for want of a GPU, and here both must be seen past the id
    real_rank() {
        env RANK="$1" WORLD_SIZE=2 LOCAL_RANK="$1" DLRUN_RESTART_COUNT=real \
            timeout -k 5 120 "$TMP/ex-real/nccl_allreduce" 1024 >"$TMP/real.$1" 2>&1
    }
    real_rank 0 & rp0=$!
    real_rank 1 & rp1=$!
    wait "$rp0"; rc0=$?; wait "$rp1"; rc1=$?
    expect_rc "  the real ncclGetUniqueId's id is in the broker (128 bytes)" 0 \
        "$DLRUN" kv get dlrun.nccl/allreduce.real
    expect_eq "  128 bytes" "$(wc -c <"$TMP/out" | tr -d ' ')" 128
    expect_rc "  both ranks asked for it" 0 "$DLRUN" kv get dlrun.nccl/allreduce.real.claim
    expect_eq "  2 arrivals" "$(cat "$TMP/out")" 2
    if grep -q 'NCCL id:' "$TMP/real.0" "$TMP/real.1"; then
        fail "  a rank did not get the id:"; sed 's/^/  | /' "$TMP"/real.[01]
    else
        pass "  both ranks got the id"
    fi
    if [ "$rc0$rc1" = 00 ]; then
        pass "  a GPU here: both ranks' all-reduce ok"
    else
        # no GPU: each rank names the CUDA call that failed, and why
        expect_grep "  no GPU: rank 0 names the CUDA call" "^rank 0: cuda[A-Za-z]*(.*): " "$TMP/real.0"
        expect_grep "  no GPU: rank 1 names the CUDA call" "^rank 1: cuda[A-Za-z]*(.*): " "$TMP/real.1"
    fi
else
    echo "# real CUDA and NCCL not tried: $(tail -n 1 "$TMP/make.out")"
fi

# --- 3. no headers: skipped, one line, exit 0 ---
expect_rc "no CUDA/NCCL headers: make skips" 0 \
    make -C "$EX" CUDA_HOME=/nonexistent BUILD="$BUILD_DIR" OUT="$TMP/ex-none"
expect_grep "  with one line saying what is missing" \
    "examples: skipped nccl_allreduce: no cuda_runtime.h and no nccl.h" "$TMP/out"
[ ! -e "$TMP/ex-none/nccl_allreduce" ] && pass "  builds nothing" || fail "  built anyway"

kill -TERM "$bpid"
wait "$bpid"
done_testing
