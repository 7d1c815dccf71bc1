#!/bin/sh
# t_libdlrun.sh - libdlrun.so as users get it: `make install PREFIX=` into a
# temporary tree, a C program built with `pkg-config --cflags --libs dlrun`
# against that tree only, three copies of it doing put/barrier/get/add
# through a real `dlrun broker`, and a library that exports dlrun_* only.
. "$(dirname "$0")/lib.sh"
for c in make pkg-config cc nm readelf; do
    command -v "$c" >/dev/null 2>&1 || skip "skip: $c not installed"
done
need_kv

# The build folder of the dlrun under test; a sanitizer build's library
# needs its program built the same way.
BUILD_DIR=$(cd "$(dirname "$DLRUN")" && pwd)
SAN='' SAN_CFLAGS=''
if ldd "$DLRUN" 2>/dev/null | grep -q libasan; then
    SAN=1 SAN_CFLAGS="-fsanitize=address,undefined"
fi
P=$TMP/prefix
expect_rc "make install PREFIX=$P" 0 \
    make -s -C "$TOP" BUILD="$BUILD_DIR" SAN="$SAN" PREFIX="$P" install
for f in lib/libdlrun.so lib/libdlrun.so.0 include/dlrun.h lib/pkgconfig/dlrun.pc bin/dlrun; do
    if [ -e "$P/$f" ]; then pass "  installs $f"; else fail "  no $P/$f"; fi
done
expect_eq "  soname libdlrun.so.0" \
    "$(readelf -d "$P/lib/libdlrun.so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')" \
    libdlrun.so.0

# --- the exported symbols: dlrun_* and nothing else ---
nm -D --defined-only "$P/lib/libdlrun.so" | awk '$2 != "A" { print $3 }' >"$TMP/syms"
expect_eq "  exports only dlrun_* (nm -D)" "$(grep -cv '^dlrun_' "$TMP/syms")" 0 ||
    grep -v '^dlrun_' "$TMP/syms" | sed 's/^/  | /'
for s in dlrun_kv_connect dlrun_kv_connect_to dlrun_kv_close dlrun_kv_put \
         dlrun_kv_get dlrun_kv_add dlrun_kv_barrier dlrun_kv_del \
         dlrun_nccl_unique_id dlrun_last_error dlrun_progress; do
    grep -qx "$s@@DLRUN_0" "$TMP/syms" || echo "$s" >>"$TMP/missing"
done
expect_eq "  every function of dlrun.h is exported, version DLRUN_0" \
    "$(cat "$TMP/missing" 2>/dev/null)" ""

# --- a program built against the installed tree only ---
export PKG_CONFIG_PATH="$P/lib/pkgconfig"
expect_eq "pkg-config --modversion dlrun" "$(pkg-config --modversion dlrun)" \
    "$(sed -n 's/^VERSION *:= *//p' "$TOP/Makefile")"
# shellcheck disable=SC2046 # pkg-config prints several words
expect_rc "cc client.c \$(pkg-config --cflags --libs dlrun)" 0 \
    cc -std=c11 -Wall -Wextra -Werror $SAN_CFLAGS -o "$TMP/client" "$E2E/libdlrun_client.c" \
    $(pkg-config --cflags --libs dlrun) -Wl,-rpath,"$(pkg-config --variable=libdir dlrun)"
ldd "$TMP/client" >"$TMP/ldd" 2>&1
expect_grep "  loads the installed libdlrun.so.0" "libdlrun.so.0 => $P/lib/" "$TMP/ldd"

# --- three ranks through a real broker ---
start_broker --bind 127.0.0.1
set -a; . "$TMP/env"; set +a
pids=
for r in 0 1 2; do
    "$TMP/client" "$r" 3 >"$TMP/rank.$r" 2>&1 &
    pids="$pids $!"
done
n=0
for p in $pids; do wait "$p" && n=$((n + 1)); done
expect_eq "3 ranks: put, barrier, get, add all succeed" "$n" 3 || cat "$TMP"/rank.*
for r in 0 1 2; do
    expect_eq "  rank $r saw every rank's value after the barrier" \
        "$(sed -n 's/^saw //p' "$TMP/rank.$r")" \
        "[hello from 0] [hello from 1] [hello from 2]"
done
expect_grep "  the counter counted" "count now between 1 and 3: yes" "$TMP/rank.1"
expect_grep "  a get that times out says so (dlrun_last_error)" \
    "^timeout: get 'never-set': timed out" "$TMP/rank.0"
expect_rc "  every add arrived: the counter is 3" 0 "$DLRUN" kv get arrived
expect_eq "  value" "$(cat "$TMP/out")" 3
expect_rc "a wrong token: connect fails" 1 \
    env DLRUN_TOKEN=00000000000000000000000000000000 "$TMP/client" 0 1
expect_grep "  with the reason" "^FAIL connect: .*not this broker's" "$TMP/out"
expect_rc "no DLRUN_BROKER: connect fails" 1 env -u DLRUN_BROKER "$TMP/client" 0 1
expect_grep "  naming the variable" "^FAIL connect: .*DLRUN_BROKER" "$TMP/out"
kill -TERM "$bpid"
wait "$bpid"

done_testing
