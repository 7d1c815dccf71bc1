#!/bin/sh
# neighbours.sh - a crowded machine, on purpose: what a shared login or
# compute node does to a test run beside it.  Not part of make check; run
# it next to one to see whether the suite holds up:
#
#     sh tests/neighbours.sh & make check; kill $!
#
# (or NEIGHBOURS_SECONDS=7200 for a longer make check; it stops by itself
# after NEIGHBOURS_SECONDS either way).  Until then, all on loopback:
#   - a CPU hog per core (NEIGHBOURS_HOGS, default the number of cores);
#   - a loop of short TCP connections to a listener of its own on
#     127.0.0.1 (NEIGHBOURS_CONNS a second, default 200): every connection
#     takes an ephemeral port and leaves it in TIME_WAIT, so a port a test
#     got by binding port 0 and closing is soon someone else's;
#   - small jobs one after another in two lanes, at most NEIGHBOURS_JOBS
#     each: `mpirun -np 3 dlrun python3 allreduce.py` (per-task ranks with
#     their own MASTER_PORT) and `dlrun -np 2 python3 allreduce.py`; with
#     no torch for /usr/bin/python3, `dlrun ... true`.
# On exit it says how many jobs ran and failed (a failed neighbour is news
# too: its log stays in the folder named); it ends what it started.
# $DLRUN is the dlrun to run (default build/dlrun of this checkout).
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
: "${DLRUN:=$TOP/build/dlrun}"
: "${NEIGHBOURS_SECONDS:=3600}" "${NEIGHBOURS_HOGS:=$(nproc)}"
: "${NEIGHBOURS_CONNS:=200}" "${NEIGHBOURS_JOBS:=2000}"
PY=/usr/bin/python3
LOG=$(mktemp -d /tmp/dlrun-neighbours.XXXXXX)
END=$(($(date +%s) + NEIGHBOURS_SECONDS))
pids=""

[ -x "$DLRUN" ] || { echo "neighbours: no dlrun at $DLRUN (make first)" >&2; exit 2; }
if "$PY" -c 'import torch.distributed' 2>/dev/null; then
    prog="$PY $TOP/tests/e2e/allreduce.py"
else
    prog=true
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

stop() {
    trap - EXIT INT TERM
    for p in $pids; do kill "$p" 2>/dev/null; done
    wait
    echo "neighbours: $(cat "$LOG"/*.ran 2>/dev/null | wc -l) jobs ran," \
         "$(cat "$LOG"/*.failed 2>/dev/null | wc -l) failed; logs in $LOG"
}
trap stop EXIT
trap 'exit 130' INT TERM

# CPU: busy loops until the end (the shell's own arithmetic, no fork)
for _ in $(seq "$NEIGHBOURS_HOGS"); do
    (while [ "$(date +%s)" -lt "$END" ]; do i=0; while [ $i -lt 100000 ]; do i=$((i + 1)); done; done) &
    pids="$pids $!"
done

# ephemeral port churn: one process, a listener and a client on 127.0.0.1
"$PY" - "$END" "$NEIGHBOURS_CONNS" >"$LOG/churn.log" 2>&1 <<'EOF' &
import socket, sys, threading, time
end, rate = float(sys.argv[1]), int(sys.argv[2])
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(128)
def serve():
    while True:
        c, _ = srv.accept()
        c.close()
threading.Thread(target=serve, daemon=True).start()
n = 0
while time.time() < end:
    t = time.time()
    for _ in range(rate):
        s = socket.socket()
        try:
            s.connect(srv.getsockname())
            n += 1
        except OSError as e:
            print("connect:", e)
        finally:
            s.close()
    time.sleep(max(0.0, 1 - (time.time() - t)))
print(n, "connections")
EOF
pids="$pids $!"

# lane NAME CMD...: CMD again and again, each under 300 s, until the end
lane() {
    name=$1; shift
    k=0 job=""
    # ended: the job too (timeout passes the signal on to it)
    trap '[ -n "$job" ] && kill "$job" 2>/dev/null; wait; exit 0' TERM
    while [ "$(date +%s)" -lt "$END" ] && [ $k -lt "$NEIGHBOURS_JOBS" ]; do
        k=$((k + 1))
        timeout -k 5 300 "$@" >"$LOG/$name.$k.log" 2>&1 &
        job=$!
        if wait "$job"; then
            rm -f "$LOG/$name.$k.log"
        else
            echo "$k" >>"$LOG/$name.failed"
        fi
        echo "$k" >>"$LOG/$name.ran"
        sleep 1
    done
}
if command -v mpirun >/dev/null 2>&1; then
    # shellcheck disable=SC2086
    lane mpirun mpirun --oversubscribe -np 3 "$DLRUN" $prog &
    pids="$pids $!"
fi
# shellcheck disable=SC2086
lane dlrun "$DLRUN" -np 2 --oversubscribe $prog &
pids="$pids $!"

echo "neighbours: running until $(date -d "@$END" +%T) (pid $$; logs in $LOG)"
while [ "$(date +%s)" -lt "$END" ]; do sleep 5; done
