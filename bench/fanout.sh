#!/bin/sh
# bench/fanout.sh [--quick] - how starting agents grows with the number of
# nodes, simulated on this machine: every "node" is a dlrun agent here, and
# DLRUN_RELAY_SIM_MS makes each relay wait that long instead of opening an
# ssh session (the latency of one session: TCP, key exchange, auth, exec).
#
# For N nodes with one rank each (`true`), the wall time of
# `dlrun -H sim[1-N]:1 --fanout K true`, median of 3, next to what N
# sessions would cost from one host: one after another (N x L, pdsh -f 1)
# and K at a time (ceil(N/K) x L, pdsh's default fan-out of 32).  The tree
# costs about depth x L plus the agents' own start (this machine's CPUs run
# every agent; on a cluster each node runs its own).
# Exit status: 0 when every run succeeded.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
dlrun=${DLRUN:-$(dirname "$here")/build/dlrun}
lat=${LATENCY_MS:-100}
sizes="16 64 256"
[ "${1:-}" = "--quick" ] && sizes="16 64"
[ -x "$dlrun" ] || { echo "fanout: $dlrun missing (make first)" >&2; exit 1; }
ulimit -n 65536 2>/dev/null || true

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
one_run() {   # N K -> ms
    s=$(now_ms)
    DLRUN_RELAY_SIM_MS=$lat "$dlrun" -H "sim[1-$1]:1" --fanout "$2" \
        --master-addr 127.0.0.1 --master-port 29999 --iface lo \
        --bind-to none -- true >/dev/null || { echo "fanout: N=$1 K=$2 failed" >&2; exit 1; }
    echo $(( $(now_ms) - s ))
}
median3() { printf '%s\n%s\n%s\n' "$(one_run "$1" "$2")" "$(one_run "$1" "$2")" \
            "$(one_run "$1" "$2")" | sort -n | sed -n 2p; }
depth() {     # levels of a K-ary tree over N nodes
    d=1 cap=$2
    while [ "$cap" -lt "$1" ]; do cap=$((cap * $2)); d=$((d + 1)); done
    echo $d
}

echo "# agent start, simulated ssh latency ${lat} ms per session (bench/fanout.sh)"
printf '%6s %4s %6s %10s %14s %14s %10s\n' N K depth dlrun_ms "1-by-1_ms" "K-at-once_ms" speedup
for n in $sizes; do
    for k in 4 32; do
        t=$(median3 "$n" "$k")
        seq_ms=$((n * lat))
        flat_ms=$(( (n + k - 1) / k * lat ))
        printf '%6d %4d %6d %10d %14d %14d %9.1fx\n' "$n" "$k" "$(depth "$n" "$k")" \
            "$t" "$seq_ms" "$flat_ms" "$(echo "$flat_ms / $t" | bc -l)"
    done
done
echo "# speedup: K-at-once / dlrun (the tree against a flat fan-out of the same width)"
