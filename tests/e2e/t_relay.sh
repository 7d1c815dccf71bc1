#!/bin/sh
# t_relay.sh - every agent serves its node's ranks through its relay
# (lib/rendezvous/broker_relay.c): the ranks' DLRUN_BROKER is a local unix: socket, a
# barrier of all ranks and a key written on one node and read on all pass
# through the relays, and the head's broker sees two connections per node
# (the agent's fetch of the plan, kept for its heartbeat, then its
# relay; its counters, DLRUN_BROKER_STATS), not one per rank as with DLRUN_NO_RELAY=1.  Simulated nodes, as in t_agents.sh.
. "$(dirname "$0")/lib.sh"
CLEAN="$NO_SCHED
       -u DLRUN_BROKER -u DLRUN_TOKEN -u DLRUN_NO_RELAY
       DLRUN_RELAY_SIM_MS=0 DLRUN_BROKER_STATS=1 TMPDIR=$TMP/tmpd"
mkdir -p "$TMP/tmpd"
cat >"$TMP/rank.sh" <<'EOS'
[ "$RANK" = 5 ] && "$DLRUN" kv put shared "from-$RANK"
"$DLRUN" kv barrier all 24 --timeout 120 || exit 1
echo "$RANK $("$DLRUN" kv get shared --timeout 120) ${DLRUN_BROKER%%/*}"
EOS
# --- 8 nodes of 3 ranks, a tree of fan-out 2 ---
env $CLEAN DLRUN="$DLRUN" "$DLRUN" $SIM -H 'sim[1-8]:3' --fanout 2 -- \
    sh "$TMP/rank.sh" >"$TMP/relay.out" 2>"$TMP/relay.err"
expect_eq "24 ranks through the relays: success" "$?" 0 ||
    sed 's/^/  | /' "$TMP/relay.err"
expect_eq "  every rank passed the barrier and read rank 5's key" \
    "$(grep -c '^[0-9]* from-5 unix:$' "$TMP/relay.out")" 24
conns=$(sed -n 's/^dlrun: broker: \([0-9]*\) connections.*/\1/p' "$TMP/relay.err")
expect_eq "  the head's broker: two per node (8: the plan and beats, the relay), its own two" \
    "${conns:-none}" 18
# --- the same without relays: a connection per rank ---
env $CLEAN DLRUN_NO_RELAY=1 DLRUN="$DLRUN" "$DLRUN" $SIM -H 'sim[1-8]:3' \
    --fanout 2 -- sh "$TMP/rank.sh" >"$TMP/direct.out" 2>"$TMP/direct.err"
expect_eq "DLRUN_NO_RELAY=1: success" "$?" 0
expect_eq "  ranks talk to the head directly" \
    "$(grep -c '^[0-9]* from-5 [^u]' "$TMP/direct.out")" 24
conns=$(sed -n 's/^dlrun: broker: \([0-9]*\) connections.*/\1/p' "$TMP/direct.err")
expect_eq "  the head's broker: more than one connection per rank" \
    "$([ "${conns:-0}" -gt 24 ] && echo yes)" yes
expect_eq "  no relay folder left" \
    "$(ls "$TMP/tmpd" | grep -c '^dlrun-relay\.')" 0
done_testing
