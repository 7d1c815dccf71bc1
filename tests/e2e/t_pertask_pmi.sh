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
# rank 0's address through PMI as well (no --master-addr), and their node
# layout from PMI_process_mapping (cyclic -ppn 1, uneven -hosts a:2,b:3).
# Under mpiexec.hydra -pmi-port (PMI_PORT, a TCP server; no PMI_RANK)
# the same, the rank from the server.  A task that never reaches the
# barrier: DLRUN_PMI_TIMEOUT, one line naming Hydra, exit 3.
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

# --- the node layout from PMI_process_mapping ---
expect_rc "mpiexec.hydra -n 4 -ppn 1 -hosts localhost,127.0.0.1 (cyclic) dlrun env" 0 \
    within 120 env $CLEAN TMPF="$TMP/out" mpiexec.hydra -launcher fork -n 4 -ppn 1 \
    -hosts localhost,127.0.0.1 sh -c 'exec "$0" env >"$TMPF.$PMI_RANK"' "$DLRUN"
for r in 0 1 2 3; do
    expect_grep "  rank $r on node $((r % 2)) (cyclic), from the mapping" \
        "^NODE_RANK='$((r % 2))'  # PMI_process_mapping$" "$TMP/out.$r" ||
        cat "$TMP/out.$r"
done
expect_grep "  rank 3 the second on its node" "^LOCAL_RANK='1'" "$TMP/out.3"
expect_rc "mpiexec.hydra -n 5 -hosts localhost:2,127.0.0.1:3 (uneven) dlrun env" 0 \
    within 120 env $CLEAN TMPF="$TMP/un" mpiexec.hydra -launcher fork -n 5 \
    -hosts localhost:2,127.0.0.1:3 sh -c 'exec "$0" env >"$TMPF.$PMI_RANK"' "$DLRUN"
expect_grep "  rank 4 the third of three on node 1" \
    "^LOCAL_RANK='2'" "$TMP/un.4" || cat "$TMP/un.4"
expect_grep "  node 1" "^NODE_RANK='1'" "$TMP/un.4"
expect_grep "  rank 1 the second of two on node 0" "^LOCAL_WORLD_SIZE='2'" "$TMP/un.1"

# --- mpiexec.hydra -pmi-port: PMI_PORT, the rank from the server ---
expect_rc "mpiexec.hydra -pmi-port -n 4 dlrun env" 0 \
    within 120 env $CLEAN mpiexec.hydra -launcher fork -pmi-port -n 4 "$DLRUN" env
cp "$TMP/out" "$TMP/port"
expect_eq "  4 ranks from PMI_PORT's server" \
    "$(grep -c "^RANK='[0-3]'  # PMI_PORT's server$" "$TMP/port")" 4 || cat "$TMP/port"
expect_eq "  one port, agreed through PMI over PMI_PORT" \
    "$(grep -c "^MASTER_PORT='[0-9]*'  # free port of rank 0's host, agreed through PMI over PMI_PORT (program not MPI)$" "$TMP/port")" 4
expect_eq "  one address and port" \
    "$(grep -h '^DLRUN_MASTER_[AP]' "$TMP/port" | sort -u | wc -l | tr -d ' ')" 2
expect_rc "mpiexec.hydra -pmi-port -n 4 dlrun python3 meet.py" 0 \
    within 120 env $CLEAN mpiexec.hydra -launcher fork -pmi-port -n 4 "$DLRUN" $PY "$E2E/meet.py"
expect_grep "  rank 0 met ranks 1 to 3" "met \[1, 2, 3\] on " "$TMP/out"

# --- a task that never reaches the barrier: a timeout, not a hang ---
within 60 env $CLEAN DLRUN_PMI_TIMEOUT=2 TMPF="$TMP/to" mpiexec.hydra -launcher fork -n 2 \
    sh -c '[ "$PMI_RANK" = 0 ] || exec sleep 20
"$0" env >/dev/null 2>"$TMPF.err"; echo "$?" >"$TMPF.rc"' "$DLRUN" >/dev/null 2>&1
expect_eq "DLRUN_PMI_TIMEOUT=2, rank 1 never runs dlrun: rank 0 exits 3" \
    "$(cat "$TMP/to.rc" 2>/dev/null)" 3
expect_grep "  one line naming Hydra and the barrier" \
    "^dlrun: .*mpiexec.hydra did not answer cmd=barrier_in on PMI_FD [0-9]* within 2 s (DLRUN_PMI_TIMEOUT): some task never reached it" "$TMP/to.err" ||
    cat "$TMP/to.err"
expect_eq "  one line" "$(wc -l <"$TMP/to.err" | tr -d ' ')" 1

# --- the job runs on the agreed port ---
expect_rc "mpiexec.hydra -n 3 dlrun python3 meet.py, the derived port held" 0 \
    within 120 env $CLEAN TMPF="$TMP/r" $mp sh "$TMP/held.sh" "$DLRUN" -v $PY "$E2E/meet.py"
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
    expect_rc "mpiexec.hydra -pmi-port -n 3 dlrun -v mpi_hello (PMI_PORT)" 0 within 120 env $CLEAN \
        mpiexec.hydra -launcher fork -pmi-port -n 3 "$DLRUN" -v "$TMP/mpi_hello"
    expect_eq "  3 ranks all-reduced: MPI_Init connects after dlrun's session" \
        "$(grep -c 'sum 3 (expected 3)' "$TMP/out")" 3 || cat "$TMP/out" "$TMP/err"
    expect_rc "  --pmix-rendezvous there: refused (MPI_Init would hang)" 2 within 120 env $CLEAN \
        mpiexec.hydra -launcher fork -pmi-port -n 2 "$DLRUN" --pmix-rendezvous "$TMP/mpi_hello"
    expect_grep "  saying why and what instead" \
        "^dlrun: --pmix-rendezvous under mpiexec.hydra -pmi-port (PMI_PORT) with an MPI program (.*): its MPI_Init hangs there after dlrun's agreement; drop --pmix-rendezvous" "$TMP/err"
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
