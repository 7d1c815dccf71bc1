#!/bin/sh
# t_mpi_guard.sh - MPI programs --mpi=auto does not recognise never run as
# N silent one-rank jobs: Open MPI through ctypes is recognised (PMIx is
# hosted: one world); mpi4py loaded by a module of the program's own is
# seen at run time in the ranks' /proc/PID/maps once MPI_Init ran (also
# under a shell wrapper) and the job stops with exit 2 and one line naming
# --mpi=pmix (libmpi merely loaded is no MPI program);
# --mpi=pmix makes it one world, --mpi=none allows singletons.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
G=$E2E/mpi_guard
$PY -c 'import mpi4py' 2>/dev/null || skip "skip: mpi4py not installed (python3-mpi4py)"
"$DLRUN" check | grep -q 'PMIx hosting: *yes' || skip "skip: dlrun built without PMIx"
mkdir "$TMP/tmpdir"
TMPDIR=$TMP/tmpdir
export TMPDIR
NP="-np 2 --oversubscribe"

expect_rc "ctypes.CDLL(libmpi): recognised, one world of 2" 0 \
    within 600 "$DLRUN" $NP "$PY" "$G/main_ctypes.py"
expect_eq "  MPI rank 0 and 1 of 2" "$(grep -c '^MPI rank [01] of 2$' "$TMP/out")" 2 ||
    sed 's/^/  | /' "$TMP/out" "$TMP/err"

expect_rc "mpi4py through a module of its own: stopped" 2 \
    within 600 "$DLRUN" $NP "$PY" "$G/main_module.py"
expect_grep "  one line naming --mpi=pmix" \
    "^dlrun: rank [01] (pid [0-9]*) loaded libmpi[^ ]* but dlrun hosts no PMIx server for it: .*--mpi=pmix" "$TMP/err"
# dlrun's own lines: the singleton's orted, killed with its rank, may add
# its "ORTE_ERROR_LOG: Broken pipe" (the program's output, not dlrun's)
expect_eq "  and only that line from dlrun" "$(grep -c '^dlrun:' "$TMP/err")" 1 ||
    sed 's/^/  | /' "$TMP/err"

expect_rc "the same under a shell wrapper: stopped" 2 \
    within 600 "$DLRUN" $NP sh -c "$PY $G/main_module.py; true"
expect_grep "  the python under sh is seen" "loaded libmpi" "$TMP/err"

expect_rc "--mpi=pmix: one world of 2" 0 \
    within 600 "$DLRUN" $NP --mpi=pmix "$PY" "$G/main_module.py"
expect_eq "  MPI rank 0 and 1 of 2" "$(grep -c '^MPI rank [01] of 2$' "$TMP/out")" 2

expect_rc "--mpi=none: singletons, as asked" 0 \
    within 600 "$DLRUN" $NP --mpi=none "$PY" "$G/main_module.py"
expect_eq "  two worlds of 1" "$(grep -c '^MPI rank 0 of 1$' "$TMP/out")" 2

expect_rc "libmpi loaded but MPI_Init never called: runs" 0 \
    within 600 "$DLRUN" $NP "$PY" "$G/main_linked.py"
expect_eq "  both ranks ran to the end" "$(grep -c '^linked, no MPI_Init$' "$TMP/out")" 2

expect_rc "one rank: a world of 1 is the job, no guard" 0 \
    within 600 "$DLRUN" -np 1 "$PY" "$G/main_module.py"
expect_eq "  MPI rank 0 of 1" "$(cat "$TMP/out")" "MPI rank 0 of 1"
done_testing
