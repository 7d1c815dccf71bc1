#!/bin/sh
# t_gloo_auth.sh - dlrun --gloo's Horovod store serves the job's user only:
# a second local user (created here, removed on exit) who knows the port
# gets no answer to GET, PUT or DELETE while the job's ranks rendezvous
# (hvd_gloo_client.py, Horovod's HTTPStore requests); 1,100 connections of
# that user, idle or trickling a byte every 2 s and opened again as soon
# as they are closed, neither block nor delay the ranks (a server that let
# them hold its 1,024 slots kept the ranks waiting 30 s for the idle ones
# to time out, and for ever for the trickling ones).
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
command -v "$PY" >/dev/null || skip "skip: no $PY"
[ "$(id -u)" -eq 0 ] || skip "skip: needs root to create a second user"
command -v useradd >/dev/null && command -v setpriv >/dev/null ||
    skip "skip: no useradd or setpriv"
CLIENT=$E2E/hvd_gloo_client.py
CLEAN="$NO_SCHED"

# what a killed earlier run left: users of no live test
for u in $(getent passwd | cut -d: -f1 | grep '^dlrun-gloo-'); do
    kill -0 "${u#dlrun-gloo-}" 2>/dev/null || userdel "$u" 2>/dev/null
done
OTHER=dlrun-gloo-$$
useradd -M -s /usr/sbin/nologin "$OTHER" || skip "skip: useradd failed"
apid= jpid=
trap '[ -n "$apid" ] && kill $apid 2>/dev/null && wait $apid
      [ -n "$jpid" ] && kill $jpid 2>/dev/null && wait $jpid
      userdel "$OTHER" 2>/dev/null; rm -rf "$TMP"' EXIT
# killed, the same: the other user's processes go, then the user
trap 'exit 143' INT TERM HUP
OUID=$(id -u "$OTHER")
# as_other ARGS: gloo_attack.py as that user, in place of the (sub)shell
# that calls it, so that $! is its pid
as_other() { cd / && ulimit -n 4096 && exec setpriv --reuid="$OUID" \
    --regid="$(id -g "$OTHER")" --clear-groups "$PY" - "$@" <"$E2E/gloo_attack.py"; }

# Every rank waits for $TMP/go before its start-up; rank 0 says where the
# store is first.
cat >"$TMP/rank.sh" <<EOF
[ "\$HOROVOD_RANK" = 0 ] && echo "\$HOROVOD_GLOO_RENDEZVOUS_ADDR \$HOROVOD_GLOO_RENDEZVOUS_PORT" >"$TMP/where.tmp" && mv "$TMP/where.tmp" "$TMP/where"
for _ in \$(seq 600); do [ -e "$TMP/go" ] && exec "$PY" "$CLIENT"; sleep 0.1; done
exit 3
EOF

# start_job NAME: the job in the background; where its store listens
start_job() {
    rm -f "$TMP/go" "$TMP/where"
    env $CLEAN timeout -k 5 120 "$DLRUN" --gloo -np 4 --oversubscribe sh "$TMP/rank.sh" \
        >"$TMP/$1.out" 2>"$TMP/$1.err" & jpid=$!
    for _ in $(seq 600); do [ -s "$TMP/where" ] && break; sleep 0.1; done
    read -r addr port <"$TMP/where" || { fail "$1: the job did not start"; return 1; }
}

# finish_job NAME BOUND: let the ranks go; they meet within BOUND s
finish_job() {
    t0=$(date +%s); touch "$TMP/go"
    wait $jpid; rc=$?; jpid=
    took=$(($(date +%s) - t0))
    expect_eq "  the job's ranks still rendezvous (exit 0)" "$rc" 0 ||
        sed 's/^/  | /' "$TMP/$1.err"
    expect_eq "  every rank met" \
        "$(grep -c '^rank [0-3] ok global 10 local 10 cross' "$TMP/$1.out")" 4
    if [ "$took" -le "$2" ]; then pass "  in ${took}s (at most $2)"
    else fail "  took ${took}s, more than $2"; fi
}

# --- another user's GET, PUT and DELETE: closed unanswered ---
if start_job probe; then
    expect_eq "another user's GET, PUT, DELETE of the job's keys" \
        "$(as_other "$addr" "$port" probe)" "get refused put refused delete refused"
    finish_job probe 60
    expect_grep "  dlrun says who was refused" \
        "Gloo rendezvous: refused a connection from 127.0.0.1 (uid $OUID): another user's process on this host" \
        "$TMP/probe.err"
    expect_eq "  once" "$(grep -c 'refused a connection' "$TMP/probe.err")" 1
fi

# --- 1,100 connections of one source, idle or trickling ---
for mode in idle trickle; do
    start_job "$mode" || continue
    (as_other "$addr" "$port" "$mode" 1100 >"$TMP/$mode.attack" 2>&1) & apid=$!
    for _ in $(seq 600); do grep -q holding "$TMP/$mode.attack" && break; sleep 0.1; done
    expect_grep "$mode: another user opened 1,100 connections" "^holding 1100" \
        "$TMP/$mode.attack"
    finish_job "$mode" 20
    kill $apid; wait $apid 2>/dev/null; apid=
done
done_testing
