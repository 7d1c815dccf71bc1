#!/bin/sh
# t_mpich.sh - programs of MPICH's family without mpiexec: dlrun serves
# the simple PMI wire (PMI_FD, --mpi=auto finds MPICH's ABI), Debian's
# MPICH 4.0 joins one world of 4 as under mpiexec.hydra (the reference),
# the all-reduce and a ring of send-receives work, MPI_Abort ends the job
# with its code, a rank's exit ends it with its own, --mpi=pmi2 serves
# too, --mpi=none gives singletons; and across nodes through the head's
# agents (run here under DLRUN_RELAY_SIM_MS, as t_agents.sh does), whose
# fences meet through the broker and the relays; and programs in the
# manner of MPICH's own examples (mpich_examples.c: cpi, srtest, ring, 4
# MiB send-receives) print under dlrun, on one node and across two, what
# they print under mpiexec.hydra.
. "$(dirname "$0")/lib.sh"
command -v mpicc.mpich >/dev/null 2>&1 || skip "skip: mpicc.mpich not installed (libmpich-dev)"
command -v mpiexec.hydra >/dev/null 2>&1 || skip "skip: mpiexec.hydra not installed (mpich)"
CLEAN="$NO_SCHED -u DLRUN_BROKER -u DLRUN_TOKEN -u PMI_FD -u PMI_RANK -u PMI_SIZE -u PMI_PORT"
mpicc.mpich -O2 -o "$TMP/mpich_hello" "$E2E/mpi_hello.c" || { fail "mpicc.mpich"; done_testing; }
HELLO=$TMP/mpich_hello
NP="-np 4 --oversubscribe"

expect_rc "mpiexec.hydra -n 4 mpich_hello (the reference)" 0 \
    within 120 env $CLEAN mpiexec.hydra -n 4 "$HELLO"
sort "$TMP/out" >"$TMP/hydra.out"

expect_rc "dlrun -np 4 mpich_hello (auto: an ELF that needs libmpich.so.12)" 0 \
    within 120 env $CLEAN "$DLRUN" -v $NP "$HELLO"
expect_eq "  4 ranks in one world of 4" \
    "$(grep -c '^hello \([0-3]\) of 4 on ' "$TMP/out")" 4 || sed 's/^/  | /' "$TMP/out" "$TMP/err"
expect_eq "  the all-reduce summed every rank" "$(grep -c '^rank [0-3]: sum 6 (expected 6)$' "$TMP/out")" 4
expect_eq "  the ring passed every rank's number on" \
    "$(grep -c '^rank \([0-3]\): from [0-3] (expected [0-3])$' "$TMP/out")" 4
expect_eq "  the same lines as under mpiexec.hydra" "$(sort "$TMP/out" | cmp - "$TMP/hydra.out" && echo same)" same
expect_grep "  -v says why" "mpi=auto: serving the simple PMI wire: .*mpich_hello links MPICH's ABI" "$TMP/err"

expect_rc "rank 2 calls MPI_Abort(7): the job ends with 7" 7 \
    within 120 env $CLEAN "$DLRUN" $NP "$HELLO" abort 2 7
expect_grep "  dlrun names rank 2 and its code" "^dlrun: rank 2 called MPI_Abort with code 7; stopping the job$" "$TMP/err"
expect_rc "rank 1 exits 3 after MPI_Init: the job ends with 3" 3 \
    within 120 env $CLEAN "$DLRUN" $NP "$HELLO" exit 1 3
expect_grep "  dlrun names rank 1 and its code" "rank 1 (host [^,]*, pid [0-9]*) exited with code 3; stopped 3 other ranks" "$TMP/err"

expect_rc "--mpi=pmi2: served too" 0 within 120 env $CLEAN "$DLRUN" $NP --mpi=pmi2 "$HELLO"
expect_eq "  one world of 4" "$(grep -c '^hello [0-3] of 4 on ' "$TMP/out")" 4
expect_rc "--mpi=pmi1 for a wrapper script: the PMI variables" 0 \
    within 120 env $CLEAN "$DLRUN" -np 2 --mpi=pmi1 sh -c 'echo "rank=$PMI_RANK size=$PMI_SIZE fd=${PMI_FD:+yes}"'
expect_eq "  each rank its PMI_RANK, PMI_SIZE and PMI_FD" "$(sort "$TMP/out" | tr '\n' ' ')" \
    "rank=0 size=2 fd=yes rank=1 size=2 fd=yes "
expect_rc "--mpi=none: nothing served" 0 within 120 env $CLEAN "$DLRUN" -np 2 --mpi=none "$HELLO"
expect_eq "  so each rank is a world of its own (MPICH's singleton)" \
    "$(grep -c '^hello 0 of 1 on ' "$TMP/out")" 2

# across nodes: the agents (run here under DLRUN_RELAY_SIM_MS) each serve
# their node's ranks
SIM="--master-addr 127.0.0.1 --iface lo --bind-to none --gpu-bind none"
expect_rc "dlrun -H sim1:2,sim2:2 mpich_hello: through the agents" 0 \
    within 120 env $CLEAN DLRUN_RELAY_SIM_MS=0 "$DLRUN" $SIM -H 'sim[1-2]:2' "$HELLO"
expect_eq "  4 ranks in one world of 4" \
    "$(grep -c '^hello \([0-3]\) of 4 on ' "$TMP/out")" 4 || sed 's/^/  | /' "$TMP/out" "$TMP/err"
expect_eq "  the same lines as under mpiexec.hydra" "$(sort "$TMP/out" | cmp - "$TMP/hydra.out" && echo same)" same
expect_rc "--mpi=pmi2, three nodes of two" 0 \
    within 120 env $CLEAN DLRUN_RELAY_SIM_MS=0 "$DLRUN" $SIM -H 'sim[1-3]:2' --mpi=pmi2 "$HELLO"
expect_eq "  one world of 6, sum 15" "$(grep -c '^rank [0-5]: sum 15 (expected 15)$' "$TMP/out")" 6
expect_rc "rank 2 on sim2 calls MPI_Abort(7): the job ends with 7" 7 \
    within 120 env $CLEAN DLRUN_RELAY_SIM_MS=0 "$DLRUN" $SIM -H 'sim[1-2]:2' "$HELLO" abort 2 7
expect_grep "  the head names rank 2 and its code" "^dlrun: rank 2 (host sim2, pid [0-9]*) exited with code 7; stopped the job on 2 nodes$" "$TMP/err"
# MPICH's example programs: the same lines as under mpiexec.hydra, on one
# node and across two
mpicc.mpich -O2 -o "$TMP/mpich_examples" "$E2E/mpich_examples.c" || fail "mpicc.mpich mpich_examples.c"
for ex in cpi srtest ring big; do
    within 120 env $CLEAN mpiexec.hydra -n 4 "$TMP/mpich_examples" $ex >"$TMP/ref" 2>&1
    echo "rc=$?" >>"$TMP/ref"
    sort "$TMP/ref" >"$TMP/ref.sorted"
    cp "$TMP/ref.sorted" "$TMP/ref.$ex"
    for where in one two; do
        case $where in
        one) set -- "$DLRUN" $NP ;;
        two) set -- env DLRUN_RELAY_SIM_MS=0 "$DLRUN" $SIM -H 'sim[1-2]:2' ;;
        esac
        within 120 env $CLEAN "$@" "$TMP/mpich_examples" $ex >"$TMP/got" 2>&1
        echo "rc=$?" >>"$TMP/got"
        expect_eq "mpich_examples $ex on $where node(s): as under mpiexec.hydra -n 4" \
            "$(sort "$TMP/got" | cmp - "$TMP/ref.sorted" >/dev/null && echo same)" same ||
            diff "$TMP/ref.sorted" "$TMP/got" | sed 's/^/  | /'
    done
done
expect_grep "  cpi's pi (the reference)" "^cpi: pi is approximately 3.1415926536, error below 1e-9$" "$TMP/ref.cpi"
expect_grep "  ring: every rank saw 10 laps" "^ring: rank 3 saw the counter at 10 after 10 laps$" "$TMP/ref.ring"
done_testing
