#!/bin/sh
# needs: cluster
# t_mpi_dynproc_slurm.sh - MPI's dynamic process calls inside one job
# across the Slurm test cluster's two nodes, under dlrun's hosted PMIx
# servers (one per node, started by srun's agents; names, connects and the
# disconnect's fence meet through the head's broker), with 2, 3 and 4
# ranks, against what mpirun -np K gives on one node (the yardstick, run
# here before the cluster is taken): publish / lookup / unpublish,
# accept/connect between the halves of MPI_COMM_WORLD (the port sent with
# MPI_Send, and found with MPI_Lookup_name; twice on one port),
# MPI_Comm_join over a socket
# to the other node; MPI_Comm_spawn fails at once.  Every run has a hang
# guard.
. "$(dirname "$0")/lib.sh"
command -v mpicc >/dev/null 2>&1 || skip "skip: mpicc not installed (libopenmpi-dev)"
command -v mpirun >/dev/null 2>&1 || skip "skip: mpirun not installed (openmpi-bin)"
"$DLRUN" check | grep -q 'PMIx hosting: *yes' || skip "skip: dlrun built without PMIx"
mpicc -O2 -o "$TMP/mpi_dynproc" "$E2E/mpi_dynproc.c" || { fail "mpicc"; done_testing; }
MODES="pub send again lookup join"

# the yardstick: "K MODE rc=RC ranks=R0,R1,..." for every case
mkdir -p "$TMP/tmpdir"
for k in 2 3 4; do
    for mode in $MODES; do
        TMPDIR=$TMP/tmpdir OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
            within 60 mpirun --oversubscribe -np $k "$TMP/mpi_dynproc" $mode >"$TMP/ref.out" 2>&1
        echo "$k $mode rc=$? ranks=$(sed -n 's/^\([0-9]*\) ok$/\1/p' "$TMP/ref.out" | sort -n | tr '\n' ,)"
    done
done >"$TMP/mpirun.txt"

use_cluster
# K=2: one rank on each node; 3: two and one; 4: two and two
cat >"$TMP/dyn.sh" <<EOS
#!/bin/sh
for k in 2 3 4; do
    case \$k in 2) np="--nproc-per-node 1" ;; *) np="-np \$k" ;; esac
    for mode in $MODES; do
        timeout -k 5 40 "$DLRUN" \$np "$TMP/mpi_dynproc" \$mode >"$TMP/dl.\$k.\$mode" 2>&1
        echo "\$k \$mode rc=\$? ranks=\$(sed -n 's/^\([0-9]*\) ok\$/\1/p' "$TMP/dl.\$k.\$mode" | sort -n | tr '\n' ,)"
    done
done >"$TMP/dlrun.txt"
timeout -k 5 40 "$DLRUN" --nproc-per-node 1 "$TMP/mpi_dynproc" spawn >"$TMP/spawn.out" 2>&1
echo "spawn rc=\$?" >>"$TMP/spawn.out"
EOS
chmod +x "$TMP/dyn.sh"
within 150 salloc -N2 --ntasks-per-node=2 "$TMP/dyn.sh" >"$TMP/salloc.out" 2>&1
while read -r k mode want; do
    got=$(sed -n "s/^$k $mode //p" "$TMP/dlrun.txt")
    expect_eq "dlrun across 2 nodes, $k ranks, $mode: as mpirun -np $k on one node" "$got" "$want" ||
        sed 's/^/  | /' "$TMP/dl.$k.$mode"
done <"$TMP/mpirun.txt"
expect_eq "  and mpirun passed every case (rc=0, every rank ok)" \
    "$(grep -vc ' rc=0 ranks=0,1,\(2,\(3,\)\?\)\?$' "$TMP/mpirun.txt")" 0 || sed 's/^/  | /' "$TMP/mpirun.txt"
expect_grep "dlrun across 2 nodes, MPI_Comm_spawn: fails (3)" "^spawn rc=3$" "$TMP/spawn.out" ||
    sed 's/^/  | /' "$TMP/salloc.out"
expect_grep "  at once, with an MPI error" "MPI_Comm_spawn failed: MPI_ERR_SPAWN" "$TMP/spawn.out"
done_testing
