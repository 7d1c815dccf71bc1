#!/bin/sh
# needs: cluster
# t_horovod_slurm.sh - dlrun --gloo across nodes: the head serves Horovod's
# Gloo rendezvous, the agents give their ranks its address and their own
# node's interface, and ranks on two nodes meet (global, local and cross
# rendezvous as Horovod's Gloo controller makes them) and exchange data.
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
done_testing
