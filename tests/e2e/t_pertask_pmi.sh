#!/bin/sh
# t_pertask_pmi.sh - per-task MASTER_PORT under MPICH's mpiexec.hydra (one
# dlrun per rank, PMI-1 over PMI_FD): with the port dlrun would derive
# held on this host (another job's TCPStore there; Hydra names no job id,
# so every Hydra job derives the same one), the ranks agree a free port
# through Hydra's PMI key-value space and the job runs; an MPICH program
# exec'd by dlrun keeps PMI to itself (derived port) and with
# --pmix-rendezvous gets an agreed port and its MPI_Init still works (dlrun
# leaves the PMI connection open for it: Hydra refuses a second init after
# a finalize); --no-pmix-rendezvous derives the port again and rank 0
# refuses the held one in one line.  Across two Hydra hosts the ranks get
# rank 0's address through PMI as well (no --master-addr).
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
CLEAN="$NO_SCHED"
command -v mpiexec.hydra >/dev/null 2>&1 || skip "skip: mpiexec.hydra not installed (mpich)"
mp="mpiexec.hydra -launcher fork -n 3"

# Rank 0 holds the port its dlrun would derive (dlrun plan: nothing
# agreed) while it runs dlrun ARGS; every rank's output goes to
# $TMPF.RANK.  $1 is dlrun, the rest its arguments.
cat >"$TMP/held.sh" <<'EOS'
out="$TMPF.$PMI_RANK"
[ "$PMI_RANK" = 0 ] || exec "$@" >"$out" 2>&1
p=$("$1" plan --json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["master_port"])')
echo "$p" >"$TMPF.derived"
exec /usr/bin/python3 -c 'import socket, subprocess, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1)
sys.exit(subprocess.call(sys.argv[3:], stdout=open(sys.argv[2], "w"), stderr=subprocess.STDOUT, close_fds=False))' "$p" "$out" "$@"
EOS
# A rendezvous at MASTER_ADDR:MASTER_PORT, as a TCPStore would.
cat >"$TMP/meet.py" <<'EOS'
import os, socket, time
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
addr = (os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]))
if rank == 0:
    s = socket.socket(); s.bind(addr); s.listen(world)
    got = sorted(int(s.accept()[0].recv(16)) for _ in range(world - 1))
    print("met", got, "on", addr[1])
else:
    for _ in range(600):
        try:
            c = socket.create_connection(addr); break
        except OSError:
            time.sleep(0.05)
    c.sendall(str(rank).encode()); print("joined", rank, "on", addr[1])
EOS

# --- dlrun env: one port, agreed through PMI ---
expect_rc "mpiexec.hydra -n 3 dlrun env, the derived port held" 0 \
    within 120 env $CLEAN TMPF="$TMP/a" $mp sh "$TMP/held.sh" "$DLRUN" env
grep -h "^MASTER_PORT=" "$TMP"/a.[012] | sort | uniq -c | sed 's/^ *//' >"$TMP/agreed"
derived=$(cat "$TMP/a.derived" 2>/dev/null)
expect_grep "  3 ranks, one port, agreed through PMI (program not MPI)" \
    "^3 MASTER_PORT='[0-9]*'  # free port of rank 0's host, agreed through PMI over PMI_FD (program not MPI)$" "$TMP/agreed" ||
    cat "$TMP"/a.[012]
expect_eq "  not the derived one (${derived:-none})" "$(grep -c "'${derived:-none}'" "$TMP/agreed")" 0
expect_grep "  the other ranks have rank 0's address through PMI" \
    "^MASTER_ADDR='127.0.0.1'  # rank 0's address, agreed through PMI$" "$TMP/a.2"

# --- two Hydra hosts (both names of this machine): rank 0's address too ---
expect_rc "mpiexec.hydra -n 4 -ppn 2 -hosts localhost,127.0.0.1 dlrun env" 0 \
    within 120 env $CLEAN mpiexec.hydra -launcher fork -n 4 -ppn 2 \
    -hosts localhost,127.0.0.1 "$DLRUN" env
cp "$TMP/out" "$TMP/two"
expect_eq "  3 ranks have rank 0's address through PMI, no --master-addr" \
    "$(grep -c "^MASTER_ADDR='.*'  # rank 0's address, agreed through PMI$" "$TMP/two")" 3 ||
    cat "$TMP/two"
expect_eq "  4 ranks, one address and port" \
    "$(grep -h '^DLRUN_MASTER_[AP]' "$TMP/two" | sort -u | wc -l)" 2

# --- the job runs on the agreed port ---
expect_rc "mpiexec.hydra -n 3 dlrun python3 meet.py, the derived port held" 0 \
    within 120 env $CLEAN TMPF="$TMP/r" $mp sh "$TMP/held.sh" "$DLRUN" -v $PY "$TMP/meet.py"
expect_grep "  rank 0 met ranks 1 and 2" "^met \[1, 2\] on " "$TMP/r.0"

# --- --no-pmix-rendezvous: derived, and refused where it is held ---
within 120 env $CLEAN TMPF="$TMP/n" $mp sh "$TMP/held.sh" "$DLRUN" env --no-pmix-rendezvous >/dev/null 2>&1
expect_grep "  --no-pmix-rendezvous: rank 0 refuses the held derived port" \
    "is taken on rank 0's host (by another job?); pass --master-port with a free port, or --pmix-rendezvous to agree one through PMI$" "$TMP/n.0"
expect_grep "  the other ranks name the option" \
    "derived from job .*; not agreed through PMI (--no-pmix-rendezvous)" "$TMP/n.1"

# --- an MPICH program: agreed too, and its MPI_Init still works ---
per_rank='exec "$0" "$@" >"$TMPF.$PMI_RANK" 2>&1'
if command -v mpicc.mpich >/dev/null 2>&1 &&
   mpicc.mpich -o "$TMP/mpi_hello" "$E2E/mpi_hello.c" 2>/dev/null; then
    expect_rc "mpiexec.hydra -n 3 dlrun -v mpi_hello (MPICH)" 0 within 120 env $CLEAN TMPF="$TMP/m" \
        $mp sh -c "$per_rank" "$DLRUN" -v "$TMP/mpi_hello"
    expect_eq "  3 ranks all-reduced" "$(cat "$TMP"/m.[012] | grep -c 'sum 3 (expected 3)')" 3 ||
        cat "$TMP"/m.[012]
    expect_grep "  -v: derived, PMI left to the MPI program" \
        "MASTER_PORT [0-9]*: derived from job .*; PMI left to the MPI program (.*mpi_hello links an MPI library" "$TMP/m.0"
    expect_rc "mpiexec.hydra -n 3 dlrun -v --pmix-rendezvous mpi_hello" 0 within 120 env $CLEAN TMPF="$TMP/f" \
        $mp sh -c "$per_rank" "$DLRUN" -v --pmix-rendezvous "$TMP/mpi_hello"
    expect_eq "  MPI_Init works after dlrun's agreement" "$(cat "$TMP"/f.[012] | grep -c 'sum 3 (expected 3)')" 3 ||
        cat "$TMP"/f.[012]
    expect_grep "  -v: agreed, PMI left open for MPI_Init" \
        "MASTER_PORT [0-9]*: free port of rank 0's host, agreed through PMI over PMI_FD (--pmix-rendezvous)" "$TMP/f.0"
else
    echo "note: no mpicc.mpich (libmpich-dev): the MPICH program's checks are left out"
fi
if $PY -c 'import torch.distributed' 2>/dev/null; then
    expect_rc "mpiexec.hydra -n 3 dlrun python3 allreduce.py (torch gloo), the derived port held" 0 \
        within 300 env $CLEAN TMPF="$TMP/t" $mp sh "$TMP/held.sh" "$DLRUN" $PY "$E2E/allreduce.py"
    expect_eq "  3 ranks ok on the agreed port" "$(cat "$TMP"/t.[012] | grep -c 'sum 6 ok')" 3 ||
        cat "$TMP"/t.[012]
else
    echo "note: no torch (python3-torch): the gloo all-reduce is left out"
fi
done_testing
