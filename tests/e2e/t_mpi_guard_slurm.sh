#!/bin/sh
# needs: cluster
# t_mpi_guard_slurm.sh - across nodes too, an MPI program --mpi=auto does
# not recognise (mpi4py through a module of its own) never runs as silent
# one-rank jobs: one dlrun in sbatch -N2 passes the guard to its agents,
# which stop the ranks with a line naming --mpi=pmix; with --mpi=pmix the
# same program is one world of 4.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
G=$E2E/mpi_guard
$PY -c 'import mpi4py' 2>/dev/null || skip "skip: mpi4py not installed (python3-mpi4py)"
"$DLRUN" check | grep -q 'PMIx hosting: *yes' || skip "skip: dlrun built without PMIx"
use_cluster

cat >"$TMP/auto.sh" <<EOS
#!/bin/sh
"$DLRUN" -np 4 "$PY" "$G/main_module.py"
echo "dlrun exit \$?"
EOS
within 300 sbatch -N2 --ntasks-per-node=2 --wait -o "$TMP/auto.out" "$TMP/auto.sh" >/dev/null 2>&1
# Under srun's variables Open MPI's MPI_Init may also fail by itself
# ("direct launched using srun"), in the few milliseconds after it loads
# libmpi: when it fails before one of the guard's looks (and the other
# ranks of the node with it) there is nothing left to stop, and the job
# has failed already.  Either way no rank ran as a world of its own.
if grep -q "loaded libmpi[^ ]* but dlrun hosts no PMIx server for it: .*--mpi=pmix" "$TMP/auto.out"; then
    pass "sbatch -N2: dlrun -np 4 python main_module.py: the agents' guard stops it"
elif grep -q "An error occurred in MPI_Init" "$TMP/auto.out" &&
     grep -q "^dlrun: rank [0-3] (host node[12], pid [0-9]*) exited with code [1-9]" "$TMP/auto.out"; then
    pass "sbatch -N2: dlrun -np 4 python main_module.py: MPI_Init failed by itself before the guard looked"
else
    fail "sbatch -N2: dlrun -np 4 python main_module.py: neither the guard's line nor MPI_Init's own failure"
    sed 's/^/  | /' "$TMP/auto.out"
fi
expect_eq "  dlrun exits non-zero" "$(sed -n 's/^dlrun exit \([0-9]*\)$/\1/p' "$TMP/auto.out" | grep -vc '^0$')" 1 ||
    sed 's/^/  | /' "$TMP/auto.out"

cat >"$TMP/pmix.sh" <<EOS
#!/bin/sh
"$DLRUN" -np 4 --mpi=pmix "$PY" "$G/main_module.py"
echo "dlrun exit \$?"
EOS
within 300 sbatch -N2 --ntasks-per-node=2 --wait -o "$TMP/pmix.out" "$TMP/pmix.sh" >/dev/null 2>&1
expect_grep "  --mpi=pmix: exit 0" "^dlrun exit 0$" "$TMP/pmix.out"
expect_eq "  one world of 4" "$(grep -c '^MPI rank [0-3] of 4$' "$TMP/pmix.out")" 4 ||
    sed 's/^/  | /' "$TMP/pmix.out"
done_testing
