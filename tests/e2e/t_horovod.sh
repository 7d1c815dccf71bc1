#!/bin/sh
# t_horovod.sh - dlrun --gloo serves Horovod's Gloo rendezvous on one node:
# ranks that start up as Horovod's Gloo controller does (hvd_gloo_client.py:
# its HTTPStore requests, three full-mesh rendezvous, finalize) meet and
# exchange data; the variables are horovodrun --gloo's; a restart starts on
# an emptied store; bad requests get HTTP answers; where no one dlrun can
# serve the job, --gloo is refused with one line.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
command -v "$PY" >/dev/null || skip "skip: no $PY"
CLIENT=$E2E/hvd_gloo_client.py
CLEAN="$NO_SCHED"
run() { env $CLEAN timeout -k 5 300 "$DLRUN" "$@"; }

# --- four ranks meet through dlrun's server and allreduce ---
expect_rc "--gloo -np 4: Horovod's Gloo start-up on 4 ranks" 0 \
    run --gloo -np 4 --oversubscribe "$PY" "$CLIENT"
expect_eq "  every rank: global, local and cross sums" \
    "$(grep -c '^rank [0-3] ok global 10 local 10 cross [1-4] on ' "$TMP/out")" 4 ||
    sed 's/^/  | /' "$TMP/out" "$TMP/err"
expect_grep "  finalize emptied every scope" "every scope emptied" "$TMP/out"

# --- without --gloo the same ranks have no rendezvous (the control) ---
expect_rc "without --gloo the client fails" 1 run -np 2 "$PY" "$CLIENT"
expect_grep "  for want of the rendezvous" "HOROVOD_GLOO_RENDEZVOUS_ADDR" "$TMP/err"

# --- horovodrun --gloo's variables ---
expect_rc "--gloo -np 2: the ranks' variables" 0 run --gloo -np 2 -l sh -c \
    'env | grep -E "^(HOROVOD_|NCCL_SOCKET_IFNAME|PYTHONUNBUFFERED)" | sort'
for v in "HOROVOD_CONTROLLER=gloo" "HOROVOD_CPU_OPERATIONS=gloo" \
    "HOROVOD_GLOO_RENDEZVOUS_ADDR=127.0.0.1" "HOROVOD_GLOO_RENDEZVOUS_PORT=[0-9]" \
    "HOROVOD_GLOO_IFACE=lo" "NCCL_SOCKET_IFNAME=lo" "PYTHONUNBUFFERED=1" \
    "HOROVOD_HOSTNAME=" "HOROVOD_CROSS_SIZE=1" "HOROVOD_LOCAL_SIZE=2"; do
    expect_eq "  $v on both ranks" "$(grep -c "] $v" "$TMP/out")" 2
done

# --- a restart starts on an emptied store ---
HVD_TEST_FAIL_FIRST=1 expect_rc "--max-restarts 1: rank 1 fails in attempt 0" 0 \
    run --gloo -np 2 --max-restarts 1 "$PY" "$CLIENT"
expect_grep "  attempt 0 failed" "failing on purpose" "$TMP/err"
expect_grep "  dlrun restarted" "restarting the job" "$TMP/err"
expect_eq "  attempt 1 met without the old key" \
    "$(grep -c '^rank [01] ok global 3' "$TMP/out")" 2 || sed 's/^/  | /' "$TMP/err"

# --- requests Horovod never sends get HTTP's answers, not a hang ---
cat >"$TMP/raw.py" <<'EOS'
import os, socket
a, p = os.environ["HOROVOD_GLOO_RENDEZVOUS_ADDR"], int(os.environ["HOROVOD_GLOO_RENDEZVOUS_PORT"])
def ask(req):
    with socket.create_connection((a, p), timeout=30) as s:
        s.sendall(req)
        data = b""
        while True:
            c = s.recv(4096)
            if not c:
                break
            data += c
    return data.split(b" ")[1].decode()
print("chunked", ask(b"PUT /s/k HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"))
print("post", ask(b"POST /s/k HTTP/1.1\r\nContent-Length: 0\r\n\r\n"))
print("path", ask(b"GET /s HTTP/1.1\r\nContent-Length: 0\r\n\r\n"))
print("nolength", ask(b"PUT /s/k HTTP/1.1\r\n\r\n"))
print("huge", ask(b"PUT /s/k HTTP/1.1\r\nContent-Length: 999999999\r\n\r\n"))
print("missing", ask(b"GET /s/k HTTP/1.1\r\nContent-Length: 0\r\n\r\n"))
EOS
expect_rc "raw requests to the server" 0 run --gloo -np 1 "$PY" "$TMP/raw.py"
expect_eq "  answers" "$(tr '\n' ' ' <"$TMP/out")" \
    "chunked 501 post 501 path 400 nolength 411 huge 413 missing 404 "

# --- where no one dlrun serves the job: refused, one line ---
expect_rc "--gloo in per-task mode (mpirun started every rank)" 2 \
    env OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_LOCAL_RANK=0 \
    OMPI_COMM_WORLD_LOCAL_SIZE=2 "$DLRUN" --gloo true
expect_grep "  names --gloo and the way" "--gloo: .*start one dlrun for the job" "$TMP/err"
expect_eq "  one line" "$(wc -l <"$TMP/err" | tr -d ' ')" 1
done_testing
