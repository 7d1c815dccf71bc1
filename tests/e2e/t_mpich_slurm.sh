#!/bin/sh
# needs: cluster
# t_mpich_slurm.sh - a program of MPICH's family (Debian's MPICH 4.0)
# across the Slurm test cluster's nodes without mpiexec: one dlrun in the
# allocation starts an agent per node over srun, each serves its node's
# ranks the simple PMI wire and their fences meet through the head's
# broker; MPI_Abort on the second node ends the job with its code; the
# same over ssh; one dlrun per node started by srun is refused in one line.
. "$(dirname "$0")/lib.sh"
command -v mpicc.mpich >/dev/null 2>&1 || skip "skip: mpicc.mpich not installed (libmpich-dev)"
use_cluster
mpicc.mpich -O2 -o "$TMP/mpich_hello" "$E2E/mpi_hello.c" || { fail "mpicc.mpich"; done_testing; }

cat >"$TMP/hello.sh" <<EOS
#!/bin/sh
"$DLRUN" -np 4 -l "$TMP/mpich_hello"
echo "dlrun exit \$?"
EOS
expect_rc "sbatch -N2: dlrun -np 4 mpich_hello" 0 \
    within 600 sbatch -N2 --ntasks-per-node=2 --wait -o "$TMP/hello.out" "$TMP/hello.sh"
expect_eq "  4 ranks in one world of 4" "$(grep -c '^\[[0-3]\] hello [0-3] of 4 on node[1-4]$' "$TMP/hello.out")" 4 ||
    sed 's/^/  | /' "$TMP/hello.out"
expect_eq "  the all-reduce summed every rank" "$(grep -c 'sum 6 (expected 6)' "$TMP/hello.out")" 4
expect_eq "  the ring went round both nodes" "$(grep -c '^\[3\] rank 3: from 2 (expected 2)$' "$TMP/hello.out")" 1
n=$(sed -n 's/^\[[0-3]\] hello [0-3] of 4 on \(node[0-9]*\)$/\1/p' "$TMP/hello.out" | sort -u | wc -l | tr -d ' ')
expect_eq "  on 2 nodes" "$n" 2
expect_grep "  dlrun exit 0" "dlrun exit 0" "$TMP/hello.out"

within 600 salloc -N2 --ntasks-per-node=2 sh -c "
    \"$DLRUN\" -np 4 \"$TMP/mpich_hello\" abort 3 5; echo rc=\$?" >"$TMP/abort.out" 2>&1
expect_grep "rank 3 calls MPI_Abort(5) on the second node: dlrun's code" "^rc=5$" "$TMP/abort.out"
expect_grep "  names rank and host" "rank 3 (host node[1-4], pid [0-9]*) exited with code 5" "$TMP/abort.out"

within 600 salloc -N2 sh -c "
    srun -N2 --ntasks-per-node=1 \"$DLRUN\" --nproc-per-node 2 \"$TMP/mpich_hello\"; echo rc=\$?" >"$TMP/pernode.out" 2>&1
expect_grep "per-node dlruns on 2 nodes, auto, MPICH's ABI: refused (2)" "^rc=2$" "$TMP/pernode.out"
expect_grep "  says what to do instead" "run one dlrun in the allocation, or start the program with srun --mpi=pmi2 or mpiexec.hydra" "$TMP/pernode.out"
expect_eq "  no rank ran as a singleton" "$(grep -c 'of 1 on' "$TMP/pernode.out")" 0

if [ -n "${DLRUN_TEST_SSH_KEY:-}" ]; then
    expect_rc "ssh: dlrun -H node1:2,node3:2 mpich_hello" 0 \
        within 600 "$DLRUN" --launcher ssh $SSH -H node1:2,node3:2 -np 4 -l "$TMP/mpich_hello"
    expect_eq "  4 ranks in one world of 4" "$(grep -c '^\[[0-3]\] hello [0-3] of 4 on node[13]$' "$TMP/out")" 4 ||
        sed 's/^/  | /' "$TMP/out" "$TMP/err"
    expect_eq "  ranks 2 and 3 on node3" "$(grep -c '^\[[23]\] hello [23] of 4 on node3$' "$TMP/out")" 2
else
    echo "# the cluster has no ssh keys: the ssh path is not tested"
fi
done_testing
