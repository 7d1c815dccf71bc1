#!/bin/sh
# needs: cluster
# t_mpich_slurm.sh - a program of MPICH's family (Debian's MPICH 4.0)
# across the Slurm test cluster's nodes without mpiexec: one dlrun in the
# allocation starts an agent per node over srun, each serves its node's
# ranks the simple PMI wire and their fences meet through the head's
# broker; MPI_Abort on the second node ends the job with its code; the
# same over ssh; one dlrun per node started by srun is refused in one line;
# programs in the manner of MPICH's own examples (mpich_examples.c: cpi,
# srtest, ring, 4 MiB send-receives) across the two nodes, over srun and
# over ssh, print what they print under mpiexec.hydra -n 4 on one node
# (run here before the cluster is taken).
. "$(dirname "$0")/lib.sh"
command -v mpicc.mpich >/dev/null 2>&1 || skip "skip: mpicc.mpich not installed (libmpich-dev)"
mpicc.mpich -O2 -o "$TMP/mpich_hello" "$E2E/mpi_hello.c" || { fail "mpicc.mpich"; done_testing; }
mpicc.mpich -O2 -o "$TMP/mpich_examples" "$E2E/mpich_examples.c" || { fail "mpicc.mpich"; done_testing; }
EXAMPLES="cpi srtest ring big"
# the yardstick: each example's output under mpiexec.hydra -n 4 here,
# sorted, with its exit code (what launchers say on stderr differs)
if command -v mpiexec.hydra >/dev/null 2>&1; then
    for ex in $EXAMPLES; do
        within 120 env -u PMI_FD -u PMI_RANK -u PMI_SIZE -u PMI_PORT \
            mpiexec.hydra -n 4 "$TMP/mpich_examples" $ex >"$TMP/ref.$ex" 2>"$TMP/ref.$ex.err"
        echo "rc=$?" >>"$TMP/ref.$ex"
        sort -o "$TMP/ref.$ex" "$TMP/ref.$ex"
    done
fi
use_cluster

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

# MPICH's example programs across the two nodes over srun
cat >"$TMP/examples.sh" <<EOS
#!/bin/sh
for ex in $EXAMPLES; do
    "$DLRUN" -np 4 "$TMP/mpich_examples" \$ex >"$TMP/srun.\$ex" 2>"$TMP/srun.\$ex.err"
    echo "rc=\$?" >>"$TMP/srun.\$ex"
done
EOS
chmod +x "$TMP/examples.sh"
within 300 salloc -N2 --ntasks-per-node=2 "$TMP/examples.sh" >"$TMP/examples.out" 2>&1
# same_as HOW EX: the run's sorted lines are the reference's
same_as() {
    [ -f "$TMP/ref.$2" ] || { echo "# no mpiexec.hydra: $2 over $1 not compared"; return; }
    expect_eq "mpich_examples $2 across 2 nodes over $1: as mpiexec.hydra -n 4 on one" \
        "$(sort "$TMP/$1.$2" 2>/dev/null | cmp - "$TMP/ref.$2" >/dev/null 2>&1 && echo same)" same ||
        { diff "$TMP/ref.$2" "$TMP/$1.$2"; sed 's/^/  err: /' "$TMP/$1.$2.err"; } 2>&1 | sed 's/^/  | /'
}
for ex in $EXAMPLES; do same_as srun $ex; done
[ -f "$TMP/ref.cpi" ] && expect_grep "  cpi's pi (the reference)" \
    "^cpi: pi is approximately 3.1415926536, error below 1e-9$" "$TMP/ref.cpi"

if [ -n "${DLRUN_TEST_SSH_KEY:-}" ]; then
    expect_rc "ssh: dlrun -H node1:2,node3:2 mpich_hello" 0 \
        within 600 "$DLRUN" --launcher ssh $SSH -H node1:2,node3:2 -np 4 -l "$TMP/mpich_hello"
    expect_eq "  4 ranks in one world of 4" "$(grep -c '^\[[0-3]\] hello [0-3] of 4 on node[13]$' "$TMP/out")" 4 ||
        sed 's/^/  | /' "$TMP/out" "$TMP/err"
    expect_eq "  ranks 2 and 3 on node3" "$(grep -c '^\[[23]\] hello [23] of 4 on node3$' "$TMP/out")" 2
    for ex in $EXAMPLES; do
        within 120 "$DLRUN" --launcher ssh $SSH -H node1:2,node3:2 -np 4 "$TMP/mpich_examples" $ex \
            >"$TMP/ssh.$ex" 2>"$TMP/ssh.$ex.err"
        echo "rc=$?" >>"$TMP/ssh.$ex"
        same_as ssh $ex
    done
else
    echo "# the cluster has no ssh keys: the ssh path is not tested"
fi
done_testing
