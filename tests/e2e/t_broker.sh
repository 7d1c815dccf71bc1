#!/bin/sh
# t_broker.sh - `dlrun broker` in the background, `dlrun kv` and the Python
# client (contrib/python/dlrun_kv.py with /usr/bin/python3) against it over
# loopback: every operation, waiting and timing out, exit codes, a wrong
# token, garbage on the port, and a clean stop on SIGTERM.
. "$(dirname "$0")/lib.sh"

need_kv
PY=/usr/bin/python3
PYKV=$TOP/contrib/python/dlrun_kv.py

start_broker --bind 127.0.0.1 -v
expect_grep "prints DLRUN_BROKER" '^DLRUN_BROKER=127\.0\.0\.1:[0-9][0-9]*$' "$TMP/env"
expect_grep "prints DLRUN_TOKEN" '^DLRUN_TOKEN=[0-9a-f]\{32\}$' "$TMP/env"
set -a; . "$TMP/env"; set +a
kv() { "$DLRUN" kv "$@"; }

# --- every operation from the shell ---
expect_rc "put" 0 kv put greeting "hello world"
expect_rc "get" 0 kv get greeting
expect_eq "get prints the value as is" "$(cat "$TMP/out")" "hello world"
expect_rc "get of a missing key" 1 kv get missing
expect_grep "says no such key" "get 'missing': no such key" "$TMP/err"
start=$(date +%s%N)
expect_rc "get --timeout 0.3 of a missing key" 1 kv get missing --timeout 0.3
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ "$ms" -ge 280 ] && pass "it waited (${ms} ms)" || fail "it waited only ${ms} ms"
expect_grep "says timed out" "timed out" "$TMP/err"
expect_rc "add" 0 kv add count 5
expect_rc "add again" 0 kv add count -2
expect_eq "add prints the count" "$(cat "$TMP/out")" "3"
expect_rc "get a counter" 0 kv get count
expect_eq "a counter reads as text" "$(cat "$TMP/out")" "3"
expect_rc "add to text" 1 kv add greeting 1
expect_rc "del" 0 kv del greeting
expect_rc "del again" 1 kv del greeting
expect_rc "barrier of one" 0 kv barrier solo 1
expect_rc "barrier that nobody joins" 1 kv barrier lonely 2 --timeout 0.2

# binary values through stdin and stdout
head -c 200000 /dev/urandom >"$TMP/blob"
kv put blob - <"$TMP/blob" && kv get blob >"$TMP/blob.back" &&
    cmp -s "$TMP/blob" "$TMP/blob.back" &&
    pass "200 kB of binary: put -, get, same bytes" || fail "binary round trip"
head -c 1500000 /dev/zero >"$TMP/huge"
expect_rc "a value over 1 MiB" 1 sh -c '"$1" kv put huge - <"$2"' sh "$DLRUN" "$TMP/huge"
expect_grep "says the limit" "takes at most 1048576" "$TMP/err"

# --- waiting: GETs parked until a PUT, barriers of several processes ---
pids=
for i in 1 2 3 4 5 6 7 8 9 10; do
    kv get late --timeout 20 >"$TMP/late.$i" 2>&1 &
    pids="$pids $!"
done
sleep 0.3
kv put late "now"
wait_ok=0
for p in $pids; do wait "$p"; done
for i in 1 2 3 4 5 6 7 8 9 10; do
    [ "$(cat "$TMP/late.$i")" = now ] && wait_ok=$((wait_ok + 1))
done
expect_eq "10 parked GETs answered by one PUT" "$wait_ok" 10
pids=
for i in 1 2 3; do
    kv barrier meet 4 --timeout 20 &
    pids="$pids $!"
done
sleep 0.2
expect_rc "the 4th arrival releases a barrier" 0 kv barrier meet 4 --timeout 20
n=0
for p in $pids; do wait "$p" && n=$((n + 1)); done
expect_eq "the 3 waiting were released" "$n" 3

# --- usage and environment errors ---
expect_rc "no DLRUN_BROKER" 2 env -u DLRUN_BROKER "$DLRUN" kv get x
expect_grep "says so" "DLRUN_BROKER is not set" "$TMP/err"
expect_rc "malformed DLRUN_TOKEN" 2 env DLRUN_TOKEN=xyz "$DLRUN" kv get x
expect_rc "unknown action" 2 kv frob x
expect_rc "a mistyped option" 2 kv get x --timout 3
expect_eq "  did you mean --timeout" "$(cat "$TMP/err")" \
    "dlrun: unknown option '--timout'; did you mean --timeout? (dlrun kv --help)"
expect_rc "add of a non-number" 2 kv add count x
expect_rc "--timeout on put" 2 kv put a b --timeout 1
expect_rc "barrier count 0" 2 kv barrier b 0
expect_rc "wrong token" 1 env DLRUN_TOKEN=00000000000000000000000000000000 \
    "$DLRUN" kv get count
expect_grep "says the token is not this broker's" "is not this broker's" "$TMP/err"
expect_grep "the broker logged the drop (-v)" "dropped 127.0.0.1:[0-9]*: wrong token" \
    "$TMP/broker.err"
expect_rc "nobody listening" 1 env DLRUN_BROKER=127.0.0.1:1 "$DLRUN" kv get x \
    --connect-timeout 0.5
expect_rc "a second broker on the same port" 1 "$DLRUN" broker --bind 127.0.0.1 \
    --port "${DLRUN_BROKER##*:}"
expect_grep "says it cannot listen" "cannot listen on 127.0.0.1" "$TMP/err"
expect_rc "broker: bad option" 2 "$DLRUN" broker --port x

# --- the Python client, against the same broker ---
if [ -x "$PY" ]; then
    cat >"$TMP/client.py" <<EOF
import sys, time
sys.path.insert(0, "$TOP/contrib/python")
import dlrun_kv
kv = dlrun_kv.Client()
print("max", kv.max_value)
kv.put("py", b"from python")
print("count", kv.add("count", 10))
print("shell", kv.get("shell", timeout=20).decode())
try:
    kv.get("nothing", timeout=0.2)
except TimeoutError as e:
    print("timeout", e)
try:
    kv.delete("nothing")
except KeyError as e:
    print("keyerror", e)
print("gen", kv.barrier("mixed", 2, timeout=20))
try:
    dlrun_kv.Client(token="0" * 32)
except ConnectionError as e:
    print("wrong", e)
EOF
    "$PY" "$TMP/client.py" >"$TMP/py.out" 2>&1 &
    pypid=$!
    sleep 0.3
    kv put shell "from the shell"
    expect_rc "dlrun kv meets Python at a barrier" 0 kv barrier mixed 2 --timeout 20
    wait $pypid
    expect_eq "Python client output" "$(cat "$TMP/py.out")" "max 1048576
count 13
shell from the shell
timeout get 'nothing': timed out
keyerror \"del 'nothing': no such key\"
gen 0
wrong the broker closed the connection at AUTH: the token (DLRUN_TOKEN) is not this broker's"
    expect_rc "dlrun kv reads what Python put" 0 kv get py
    expect_eq "the value" "$(cat "$TMP/out")" "from python"
    expect_rc "dlrun_kv.py as a script" 0 "$PY" "$PYKV" get count
    expect_eq "the count" "$(cat "$TMP/out")" "13"
    expect_rc "dlrun_kv.py: usage" 2 "$PY" "$PYKV" frob
    # garbage and a silent peer on the port do not disturb the broker
    "$PY" - "${DLRUN_BROKER##*:}" <<'EOF'
import socket, sys
port = int(sys.argv[1])
junk = socket.create_connection(("127.0.0.1", port))
junk.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" * 10)
silent = socket.create_connection(("127.0.0.1", port))
junk.settimeout(5)
assert junk.recv(100) == b"", "garbage must be answered by a close"
EOF
    [ $? = 0 ] && pass "garbage: closed without an answer" || fail "garbage"
    expect_rc "still serving after garbage" 0 kv get count
else
    echo "no $PY: Python client not tested"
fi

# --- connections without the token cannot lock the ranks out ---
# Another user's 300 idle connections to a broker of 64 slots: the oldest
# of them make room, and `dlrun kv` gets in (it used to be closed and
# told "wrong token").
if [ -x "$PY" ]; then
    # The file exists before the loop reads it: the shell opens the
    # redirection in the child, which may not have run yet.
    : >"$TMP/env2"
    "$DLRUN" broker --bind 127.0.0.1 --max-conns 64 -v >"$TMP/env2" 2>"$TMP/broker2.err" &
    b2=$!
    i=0
    while [ "$(wc -l <"$TMP/env2")" -lt 2 ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done
    port2=$(sed -n 's/^DLRUN_BROKER=.*://p' "$TMP/env2")
    tok2=$(sed -n 's/^DLRUN_TOKEN=//p' "$TMP/env2")
    cat >"$TMP/hold.py" <<'EOF'
import socket, sys, time
held = [socket.create_connection(("127.0.0.1", int(sys.argv[1]))) for _ in range(300)]
print("held", len(held), flush=True)
time.sleep(60)
EOF
    "$PY" "$TMP/hold.py" "$port2" >"$TMP/flood.out" 2>&1 &
    fl=$!
    i=0
    while ! grep -q '^held ' "$TMP/flood.out" && kill -0 $fl 2>/dev/null &&
        [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done
    expect_rc "300 idle connections, 64 slots: dlrun kv still gets in" 0 \
        env DLRUN_BROKER="127.0.0.1:$port2" DLRUN_TOKEN="$tok2" "$DLRUN" kv add flood 1
    expect_eq "  and is served" "$(cat "$TMP/out")" 1
    expect_rc "  dlrun_kv.py too" 0 \
        env DLRUN_BROKER="127.0.0.1:$port2" DLRUN_TOKEN="$tok2" "$PY" "$PYKV" add flood 1
    expect_eq "  and is served" "$(cat "$TMP/out")" 2
    expect_grep "  the broker says why it closed an idle one" \
        "connection table is full (max_conns) and this one has not authenticated" "$TMP/broker2.err"
    kill $fl; wait $fl 2>/dev/null
    kill -TERM $b2; wait $b2
fi

# --- a Unix socket (what one-node jobs use) ---
saved_broker=$DLRUN_BROKER saved_token=$DLRUN_TOKEN saved_bpid=$bpid
start_broker --bind "unix:$TMP/kv.sock"
expect_eq "--bind unix:PATH: DLRUN_BROKER is unix:PATH" "$(sed -n 1p "$TMP/env")" \
    "DLRUN_BROKER=unix:$TMP/kv.sock"
ubroker=$(sed -n 's/^DLRUN_BROKER=//p' "$TMP/env")
utok=$(sed -n 's/^DLRUN_TOKEN=//p' "$TMP/env")
expect_rc "dlrun kv over it" 0 env DLRUN_BROKER="$ubroker" DLRUN_TOKEN="$utok" \
    "$DLRUN" kv put u "over unix"
if [ -x "$PY" ]; then
    expect_rc "  and dlrun_kv.py" 0 env DLRUN_BROKER="$ubroker" DLRUN_TOKEN="$utok" \
        "$PY" "$PYKV" get u
    expect_eq "  the value" "$(cat "$TMP/out")" "over unix"
fi
kill -TERM $bpid; wait $bpid
[ ! -e "$TMP/kv.sock" ] && pass "  the socket is removed at the end" || fail "socket left"
DLRUN_BROKER=$saved_broker DLRUN_TOKEN=$saved_token bpid=$saved_bpid

# --- dlrun serving a job's broker raises its open-file limit (as dlrun
# broker does): every rank's connection is a file ---
hard=$(sh -c 'ulimit -Hn')
if [ "$hard" != unlimited ] && [ "$hard" -gt 256 ]; then
    got=$(sh -c 'ulimit -Sn 256; env -u DLRUN_BROKER -u DLRUN_TOKEN "$1" -np 1 --bind-to none sh -c "ulimit -Sn"' sh "$DLRUN" 2>&1)
    expect_eq "one-node job started with a soft limit of 256: raised to the hard $hard" "$got" "$hard"
fi

# --- a clean stop ---
kill -TERM "$bpid"
i=0
while kill -0 "$bpid" 2>/dev/null && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
wait "$bpid"
expect_eq "broker exits 0 on SIGTERM" "$?" 0
expect_rc "kv after the broker stopped" 1 kv get count --connect-timeout 0.5
expect_grep "says refused" "Connection refused" "$TMP/err"

# --- the head reads back only what holds up against the plan ---
# A rank holds the token: it can write a failure report or a summary line
# of its own.  DLRUN_RELAY_SIM_MS runs the agents here (as t_agents.sh).
CLEAN="$NO_SCHED -u DLRUN_BROKER -u DLRUN_TOKEN DLRUN_RELAY_SIM_MS=0"
env $CLEAN DLRUN="$DLRUN" "$DLRUN" $SIM -H 'sim[1-2]:1' --summary "$TMP/sum.json" -- sh -c '
    [ $RANK = 1 ] || exit 0
    "$DLRUN" kv add dlrun.failseq 1 >/dev/null
    "$DLRUN" kv put dlrun.fail.1 "99999 256 4242 evil"
    "$DLRUN" kv put dlrun.ranks.0 "$(printf "77 1 0 1 2\n-5 1 0 1 2\n0 1 0 nan 2")"
    exit 3' >"$TMP/head.out" 2>&1
expect_eq "a rank reports rank 99999 failed: the real failure's code" "$?" 3
expect_grep "  the bad report is named and skipped" \
    "ignoring the failure report dlrun.fail.1: rank 99999 is not one of the job's 2" "$TMP/head.out"
expect_grep "  the agent's report is used" "rank 1 (host sim2, pid [0-9]*) exited with code 3" "$TMP/head.out"
expect_grep "  --summary is written, failed rank 1" '"world_size":2,"failed_rank":1' "$TMP/sum.json"
expect_eq "  the summary's ranks are the plan's" \
    "$(grep -o '"rank":[-0-9]*,"host":"[a-z0-9]*"' "$TMP/sum.json" | tr '\n' ' ')" \
    '"rank":0,"host":"sim1" "rank":1,"host":"sim2" '

done_testing
