#!/bin/sh
# needs: cluster
# t_horovod_slurm.sh - dlrun --gloo across nodes: the head serves Horovod's
# Gloo rendezvous, the agents give their ranks its address and their own
# node's interface, and ranks on two nodes meet (global, local and cross
# rendezvous as Horovod's Gloo controller makes them) and exchange data;
# a host that is not one of the job's nodes gets no answer from the store,
# and a node that reaches the head from an address its name does not
# resolve to is known by its agent's.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
use_cluster
CLIENT=$E2E/hvd_gloo_client.py

within 600 salloc -N2 -w node1,node2 --ntasks-per-node=2 "$DLRUN" --gloo -np 4 "$PY" "$CLIENT" \
    >"$TMP/salloc.out" 2>&1
expect_eq "salloc -N2: dlrun --gloo -np 4, Horovod's Gloo start-up" "$?" 0 ||
    sed 's/^/  | /' "$TMP/salloc.out"
for want in "rank 0 ok global 10 local 3 cross 4 on node1" \
    "rank 1 ok global 10 local 3 cross 6 on node1" \
    "rank 2 ok global 10 local 7 cross 4 on node2" \
    "rank 3 ok global 10 local 7 cross 6 on node2"; do
    expect_grep "  $want" "^$want\$" "$TMP/salloc.out"
done
expect_grep "  finalize emptied every scope" "every scope emptied" "$TMP/salloc.out"

# the variables on the second node: the head's address, node2's interface
within 300 salloc -N2 -w node1,node2 --ntasks-per-node=1 "$DLRUN" --gloo -np 2 -l sh -c \
    'env | grep -E "^HOROVOD_(GLOO|HOSTNAME|CROSS)" | sort' >"$TMP/env.out" 2>&1
expect_eq "salloc -N2: the ranks' variables" "$?" 0 || sed 's/^/  | /' "$TMP/env.out"
addr=$(sed -n 's/^\[1\] HOROVOD_GLOO_RENDEZVOUS_ADDR=//p' "$TMP/env.out")
case $addr in 10.77.0.*) pass "  rank 1 on node2 reaches the head at $addr" ;;
*) fail "  rank 1's HOROVOD_GLOO_RENDEZVOUS_ADDR '$addr' is not on the cluster's network" ;; esac
expect_grep "  rank 1 on node2" "^\[1\] HOROVOD_HOSTNAME=node2" "$TMP/env.out"
expect_grep "  cross size 2" "^\[1\] HOROVOD_CROSS_SIZE=2" "$TMP/env.out"
expect_grep "  an interface of node2" "^\[1\] HOROVOD_GLOO_IFACE=." "$TMP/env.out"
# --- node3, on the network but not in the job: closed unanswered ---
cat >"$TMP/rank.sh" <<EOF
[ "\$HOROVOD_RANK" = 0 ] && echo "\$HOROVOD_GLOO_RENDEZVOUS_ADDR \$HOROVOD_GLOO_RENDEZVOUS_PORT" >"$TMP/where.tmp" && mv "$TMP/where.tmp" "$TMP/where"
for _ in \$(seq 600); do [ -e "$TMP/go" ] && exec "$PY" "$CLIENT"; sleep 0.1; done
exit 3
EOF
within 300 salloc -N2 -w node1,node2 --ntasks-per-node=1 "$DLRUN" --gloo -np 2 sh "$TMP/rank.sh" \
    >"$TMP/far.out" 2>&1 & jpid=$!
for _ in $(seq 600); do [ -s "$TMP/where" ] && break; sleep 0.1; done
read -r addr port <"$TMP/where"
expect_eq "node3, not one of the job's nodes: GET, PUT, DELETE" \
    "$(nsenter --net=/run/netns/dlrun-node3 "$PY" "$E2E/gloo_attack.py" "$addr" "$port" probe)" \
    "get refused put refused delete refused"
touch "$TMP/go"
wait $jpid
expect_eq "  the ranks on node1 and node2 still meet" "$?" 0 || sed 's/^/  | /' "$TMP/far.out"
expect_grep "  dlrun says who was refused" \
    "Gloo rendezvous: refused a connection from 10.77.0.3: not an address of the job's nodes" \
    "$TMP/far.out"
# --- node2 reaches the head from an address "node2" does not resolve to
# (a second network, as --iface's may be): its agent's address counts ---
ip -n dlrun-node2 addr add 10.77.0.102/24 dev eth0 &&
    ip -n dlrun-node2 route add 10.77.0.254/32 dev eth0 src 10.77.0.102 ||
    fail "cannot give node2 a second address"
within 300 salloc -N2 -w node1,node2 --ntasks-per-node=1 "$DLRUN" --gloo -np 2 "$PY" "$CLIENT" \
    >"$TMP/second.out" 2>&1
expect_eq "node2's ranks connect from 10.77.0.102: they still meet" "$?" 0 ||
    sed 's/^/  | /' "$TMP/second.out"
expect_eq "  both ranks" "$(grep -c '^rank [01] ok global 3' "$TMP/second.out")" 2
ip -n dlrun-node2 route del 10.77.0.254/32 dev eth0 src 10.77.0.102
ip -n dlrun-node2 addr del 10.77.0.102/24 dev eth0
done_testing
