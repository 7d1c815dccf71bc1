#!/bin/sh
# t_mpi_dynproc.sh - MPI's dynamic process calls inside one job on one
# node, under mpirun (the yardstick) and under dlrun's hosted PMIx server,
# with 2, 3 and 4 ranks: MPI_Publish_name / MPI_Lookup_name /
# MPI_Unpublish_name, MPI_Comm_accept / MPI_Comm_connect between the two
# halves of MPI_COMM_WORLD (the port name sent with MPI_Send, found with
# MPI_Lookup_name, and twice on one port: Open MPI publishes its exchanges
# to be read once), and MPI_Comm_join over a socket.  Every run has a
# hang guard: a call dlrun cannot serve must fail, never hang
# (MPI_Comm_spawn: at once, with one line saying why).
. "$(dirname "$0")/lib.sh"
command -v mpicc >/dev/null 2>&1 || skip "skip: mpicc not installed (libopenmpi-dev)"
"$DLRUN" check | grep -q 'PMIx hosting: *yes' || skip "skip: dlrun built without PMIx"
mpicc -O2 -o "$TMP/mpi_dynproc" "$E2E/mpi_dynproc.c" || { fail "mpicc"; done_testing; }
PROG=$TMP/mpi_dynproc
mkdir "$TMP/tmpdir"
TMPDIR=$TMP/tmpdir
export TMPDIR
GUARD=120

# every rank printed "RANK ok", once
all_ok() {
    expect_eq "  $1: every rank ok" "$(grep -c '^[0-9]* ok$' "$TMP/out")" "$2" ||
        sed 's/^/  | /' "$TMP/out" "$TMP/err"
}

for k in 2 3 4; do
    for mode in pub send lookup again join; do
        if command -v mpirun >/dev/null 2>&1; then
            expect_rc "mpirun -np $k mpi_dynproc $mode" 0 within $GUARD \
                env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
                mpirun --oversubscribe -np $k "$PROG" $mode
            all_ok "mpirun $mode" $k
        fi
        expect_rc "dlrun -np $k mpi_dynproc $mode" 0 within $GUARD \
            "$DLRUN" --oversubscribe -np $k "$PROG" $mode
        all_ok "dlrun $mode" $k
    done
done
# across two nodes: the agents (DLRUN_RELAY_SIM_MS) serve their node's
# ranks and meet through the head's broker.  The "nodes" share this host,
# where Open MPI's shared-memory transport crashes between ranks it takes
# for other nodes' (any program, not only these calls): TCP only.
SIM="--master-addr 127.0.0.1 --iface lo --bind-to none --gpu-bind none"
for hosts in sim1:1,sim2:1 sim1:2,sim2:1 sim1:2,sim2:2; do
    k=$(($(echo "$hosts" | sed 's/sim[0-9]:\([0-9]\)/\1/g; s/,/ + /g')))
    for mode in pub send lookup again join; do
        expect_rc "dlrun -H $hosts mpi_dynproc $mode (2 nodes)" 0 within $GUARD \
            env $NO_SCHED -u DLRUN_BROKER -u DLRUN_TOKEN OMPI_MCA_btl=self,tcp DLRUN_RELAY_SIM_MS=0 \
            "$DLRUN" $SIM -H "$hosts" "$PROG" $mode
        all_ok "dlrun -H $hosts $mode" $k
    done
done
expect_rc "dlrun -H sim1:1,sim2:1 mpi_dynproc spawn: MPI_Comm_spawn fails at once" 3 within $GUARD \
    env $NO_SCHED -u DLRUN_BROKER -u DLRUN_TOKEN OMPI_MCA_btl=self,tcp DLRUN_RELAY_SIM_MS=0 \
    "$DLRUN" $SIM -H sim1:1,sim2:1 "$PROG" spawn
expect_grep "  with an MPI error" "MPI_Comm_spawn failed: MPI_ERR_SPAWN" "$TMP/out"

# over MPI_COMM_SELF: with more ranks in the spawning communicator Open
# MPI 4.1 leaves the others waiting for a root whose spawn failed
expect_rc "dlrun -np 2 mpi_dynproc spawn: MPI_Comm_spawn fails" 3 within $GUARD \
    "$DLRUN" --oversubscribe -np 2 "$PROG" spawn
expect_grep "  with an MPI error" "MPI_Comm_spawn failed: MPI_ERR_SPAWN" "$TMP/out"
expect_grep "  dlrun says why" "rank [01] called MPI_Comm_spawn, which dlrun's PMIx server does not serve" "$TMP/err"
expect_eq "no PMIx server directory left in TMPDIR" \
    "$(ls "$TMP/tmpdir" | grep '^dlrun-pmix')" ""
done_testing
