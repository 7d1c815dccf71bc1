#!/bin/sh
# t_pertask_port.sh - per-task MASTER_PORT under Open MPI's mpirun (one
# dlrun per rank): with the port derived from mpirun's job id held on this
# host (another job's TCPStore there), the ranks of a program that is not
# MPI agree a free port through mpirun's PMIx server by default and the job
# runs; an MPI program keeps the derived port (dlrun leaves PMIx to it) and
# its MPI_Init works, with --pmix-rendezvous too; --no-pmix-rendezvous
# derives the port again and rank 0 refuses the held one in one line.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
CLEAN="$NO_SCHED"
command -v mpirun >/dev/null 2>&1 || skip "skip: mpirun not installed (openmpi-bin)"
mpirun --version 2>/dev/null | grep -q 'Open MPI' || skip "skip: mpirun is not Open MPI's"
"$DLRUN" check 2>/dev/null | grep -q '^  PMIx: *yes' ||
    skip "skip: this dlrun has no PMIx (libpmix-dev)"
mp="mpirun --allow-run-as-root --oversubscribe -np 3"

# Rank 0 holds the port its dlrun would derive (dlrun plan: the same job
# id, nothing agreed) while it runs dlrun ARGS; every rank's output goes to
# $TMPF.RANK.  $1 is dlrun, the rest its arguments.
cat >"$TMP/held.sh" <<'EOF'
out="$TMPF.$OMPI_COMM_WORLD_RANK"
[ "$OMPI_COMM_WORLD_RANK" = 0 ] || exec "$@" >"$out" 2>&1
p=$("$1" plan --json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["master_port"])')
echo "$p" >"$TMPF.derived"
exec /usr/bin/python3 -c 'import socket, subprocess, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1)
sys.exit(subprocess.call(sys.argv[3:], stdout=open(sys.argv[2], "w"), stderr=subprocess.STDOUT))' "$p" "$out" "$@"
EOF

# --- a program that is not MPI (dlrun env): one agreed port ---
expect_rc "mpirun -np 3 dlrun env, the derived port held" 0 \
    within 120 env $CLEAN TMPF="$TMP/a" $mp -x TMPF sh "$TMP/held.sh" "$DLRUN" env
grep -h "^MASTER_PORT=" "$TMP"/a.[012] | sort | uniq -c | sed 's/^ *//' >"$TMP/agreed"
derived=$(cat "$TMP/a.derived" 2>/dev/null)
expect_grep "  3 ranks, one port, agreed through PMIx (program not MPI)" \
    "^3 MASTER_PORT='[0-9]*'  # free port of rank 0's host, agreed through PMIx (program not MPI)$" "$TMP/agreed"
expect_eq "  not the derived one (${derived:-none})" "$(grep -c "'${derived:-none}'" "$TMP/agreed")" 0

# --- the job runs on the agreed port ---
expect_rc "mpirun -np 3 dlrun python3 meet.py, the derived port held" 0 \
    within 120 env $CLEAN TMPF="$TMP/r" $mp -x TMPF sh "$TMP/held.sh" "$DLRUN" -v $PY "$E2E/meet.py"
expect_grep "  rank 0 met ranks 1 and 2" "^met \[1, 2\] on " "$TMP/r.0"
expect_grep "  -v says where the port came from" \
    "MASTER_PORT [0-9]*: free port of rank 0's host, agreed through PMIx (program not MPI)" "$TMP/r.1"

# --- --no-pmix-rendezvous: derived, and refused where it is held ---
within 120 env $CLEAN TMPF="$TMP/n" $mp -x TMPF sh "$TMP/held.sh" "$DLRUN" env --no-pmix-rendezvous >/dev/null 2>&1
expect_grep "  --no-pmix-rendezvous: rank 0 refuses the held derived port" \
    "is taken on rank 0's host (by another job?); pass --master-port with a free port, or --pmix-rendezvous" "$TMP/n.0"
expect_grep "  the other ranks name the option" \
    "derived from job .*; not agreed through PMIx (--no-pmix-rendezvous)" "$TMP/n.1"

# --- MPI programs: dlrun leaves the port to them, and MPI_Init works ---
per_rank='exec "$0" "$@" >"$TMPF.$OMPI_COMM_WORLD_RANK" 2>&1'
if command -v mpicc >/dev/null 2>&1 && mpicc -o "$TMP/mpi_hello" "$E2E/mpi_hello.c" 2>/dev/null; then
    expect_rc "mpirun -np 3 dlrun -v mpi_hello" 0 within 120 env $CLEAN TMPF="$TMP/m" \
        $mp -x TMPF sh -c "$per_rank" "$DLRUN" -v "$TMP/mpi_hello"
    expect_eq "  3 ranks all-reduced" "$(cat "$TMP"/m.[012] | grep -c 'sum 3 (expected 3)')" 3 ||
        cat "$TMP"/m.[012]
    expect_grep "  -v: derived, PMIx left to the MPI program" \
        "MASTER_PORT [0-9]*: derived from job .*; PMIx left to the MPI program (.*mpi_hello links an MPI library" "$TMP/m.0"
    # forced: the program's PMIx client reads its job data from the server
    expect_rc "mpirun -np 3 dlrun --pmix-rendezvous mpi_hello" 0 within 120 env $CLEAN TMPF="$TMP/f" \
        $mp -x TMPF sh -c "$per_rank" "$DLRUN" -v --pmix-rendezvous "$TMP/mpi_hello"
    expect_eq "  MPI_Init works after dlrun's agreement" \
        "$(cat "$TMP"/f.[012] | grep -c 'sum 3 (expected 3)')" 3 || cat "$TMP"/f.[012]
else
    echo "note: no mpicc (libopenmpi-dev): the MPI program's checks are left out"
fi
if $PY -c 'import mpi4py' 2>/dev/null; then
    expect_rc "mpirun -np 3 dlrun python3 -c mpi4py" 0 within 120 env $CLEAN TMPF="$TMP/p" \
        $mp -x TMPF sh -c "$per_rank" "$DLRUN" $PY -c \
        'from mpi4py import MPI; c = MPI.COMM_WORLD; print("mpi", c.rank, c.allreduce(c.rank))'
    expect_eq "  every rank all-reduced" "$(cat "$TMP"/p.[012] | grep -c '^mpi [0-2] 3$')" 3 ||
        cat "$TMP"/p.[012]
else
    echo "note: no mpi4py (python3-mpi4py): its check is left out"
fi
if $PY -c 'import torch.distributed' 2>/dev/null; then
    expect_rc "mpirun -np 3 dlrun python3 allreduce.py (torch gloo), the derived port held" 0 \
        within 300 env $CLEAN TMPF="$TMP/t" $mp -x TMPF sh "$TMP/held.sh" "$DLRUN" $PY "$E2E/allreduce.py"
    expect_eq "  3 ranks ok on the agreed port" "$(cat "$TMP"/t.[012] | grep -c 'sum 6 ok')" 3 ||
        cat "$TMP"/t.[012]
else
    echo "note: no torch (python3-torch): the gloo all-reduce is left out"
fi
done_testing
