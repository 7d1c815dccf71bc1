#!/bin/sh
# t_relay_flood.sh - one rank floods its node's relay with 50,000
# pipelined GETs that wait forever: it is refused past its own limit
# (dlrun-broker(7): 256 waiting per connection), the node's agent keeps
# beating (its heartbeat has its own connection to the head), and the
# other ranks' barrier and reads through the same relay go on, so the job
# ends 0.  Without the relay's own limit the head's broker refused the
# agent's heartbeat GET (1,024 parked on the relay's one connection): "lost
# the head", 143, at once, whatever the heartbeat timeout: the generous
# one here only keeps a crowded machine's pauses from counting as a lost
# agent.  Simulated nodes, as in t_relay.sh.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "no python3"
CLEAN="$NO_SCHED -u DLRUN_BROKER -u DLRUN_TOKEN -u DLRUN_NO_RELAY
       DLRUN_RELAY_SIM_MS=0 TMPDIR=$TMP/tmpd"
mkdir -p "$TMP/tmpd"
FLOOD="$(cd "$(dirname "$0")" && pwd)/relay_flood.py"
# rank.sh WORK: rank 3 floods and holds its connection 4 s; the others
# wait for the flood, then run WORK
cat >"$TMP/rank.sh" <<EOS
if [ "\$RANK" = 3 ]; then
    rm -f "$TMP/flooded"
    python3 "$FLOOD" 50000 "$TMP/flooded" 4
    exit \$?
fi
for _ in \$(seq 600); do [ -e "$TMP/flooded" ] && break; sleep 0.1; done
eval "\$1"
EOS
flood_job() {
    rm -f "$TMP/flooded"
    env $CLEAN DLRUN="$DLRUN" "$DLRUN" $SIM -H 'sim[1-2]:2' \
        --heartbeat-timeout 30 -- sh "$TMP/rank.sh" "$1" >"$TMP/out" 2>"$TMP/err"
}

# --- the others only wait: the agents' heartbeats are what is at stake ---
flood_job 'sleep 3'
expect_eq "a rank floods its relay: the job still succeeds" "$?" 0 ||
    sed 's/^/  | /' "$TMP/err"
expect_eq "  no agent lost the head" "$(grep -c 'lost the head' "$TMP/err")" 0
expect_grep "  the flooding rank was refused past its own 256" \
    "^flood: limit=49744 ok=1$" "$TMP/out" || sed 's/^/  | /' "$TMP/out"

# --- the others use the broker through the same relays meanwhile ---
flood_job '[ "$RANK" = 0 ] && "$DLRUN" kv put shared from-0
"$DLRUN" kv barrier others 3 --timeout 60 || exit 1
echo "$RANK $("$DLRUN" kv get shared --timeout 60)"'
expect_eq "others pass a barrier and read a key while it floods: success" \
    "$?" 0 || sed 's/^/  | /' "$TMP/err"
expect_eq "  every other rank did" "$(grep -c '^[0-2] from-0$' "$TMP/out")" 3
done_testing
