#!/bin/sh
# relay_curve.sh - the time for every rank to authenticate, fetch one key
# and pass one barrier, from 1,000 to 100,000 ranks (100 per node), through
# the agents' relays (relay_bench.c) and directly into the head's broker
# (broker_bench.c; as far as the open-file limit lets one process hold the
# ranks' sockets).  Builds both into build/ (run `make` first).
set -e
cd "$(dirname "$0")/.."
cc -std=c11 -O2 -D_GNU_SOURCE -Ilib -o build/relay_bench bench/relay_bench.c \
    build/libdlrun-core.a -ldl -lpthread
cc -std=c11 -O2 -D_GNU_SOURCE -Ilib -o build/broker_bench bench/broker_bench.c \
    build/libdlrun-core.a -ldl -lpthread
lim=$(ulimit -Hn)
printf '%8s %6s | %10s %10s %10s | %10s %10s\n' ranks nodes "relay s" \
    "head conns" "head reqs" "direct s" "head conns"
for ranks in 1000 2000 5000 10000 20000 50000 100000; do
    nodes=$((ranks / 100))
    r=$(build/relay_bench "$nodes" 100)
    rs=$(echo "$r" | sed -n 's/.*barrier \([0-9.]*\) s.*/\1/p')
    rc=$(echo "$r" | sed -n 's/.*head: \([0-9]*\) connections.*/\1/p')
    rq=$(echo "$r" | sed -n 's/.*connections, \([0-9]*\) requests.*/\1/p')
    if [ "$ranks" -lt $((lim - 100)) ]; then
        d=$(build/broker_bench "$ranks" 2>&1 | sed -n 's/.*barrier released *\([0-9.]*\) ms.*/\1/p')
        ds=$(echo "$d" | awk '{ printf "%.3f", $1 / 1000 }')
        dc=$ranks
    else
        ds="-" dc="(fd limit $lim)"
    fi
    printf '%8s %6s | %10s %10s %10s | %10s %10s\n' "$ranks" "$nodes" "$rs" \
        "$rc" "$rq" "$ds" "$dc"
done
