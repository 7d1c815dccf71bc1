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
within() { timeout -k 5 "$@"; }

cat >"$TMP/auto.sh" <<EOS
#!/bin/sh
"$DLRUN" -np 4 "$PY" "$G/main_module.py"
echo "dlrun exit \$?"
EOS
within 300 sbatch -N2 --ntasks-per-node=2 --wait -o "$TMP/auto.out" "$TMP/auto.sh" >/dev/null 2>&1
expect_grep "sbatch -N2: dlrun -np 4 python main_module.py: the agents' guard stops it" \
    "loaded libmpi[^ ]* but dlrun hosts no PMIx server for it: .*--mpi=pmix" "$TMP/auto.out"
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
