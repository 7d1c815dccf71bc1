#!/bin/sh
# stress_dmodex.sh - not part of `make check`: repeats t_mpi_slurm's direct
# modex case (Open MPI with async modex and no data collection: every peer's
# data is fetched through dlrun's PMIx host on demand) N times (default 20)
# with two CPU hogs, on the Slurm test cluster, and keeps the output of each
# failing run in $OUT (default /tmp/dlrun-dmodex-stress).  PER_NODE ranks
# per node (default 1, as t_mpi_slurm runs it).  With PER_NODE=2 about 1 run
# in 50 fails with "PML add procs failed: Not found": libpmix's server gives
# a same-node peer only 2 s to commit its data (docs/mpi.md), so a rank held
# back by the hogs makes its node-mate's MPI_Init fail; mpirun does the same.
# usage: DLRUN=build/dlrun [N=20] [PER_NODE=1] [OUT=DIR] sh tests/e2e/stress_dmodex.sh
. "$(dirname "$0")/lib.sh"
use_cluster
OUT=${OUT:-/tmp/dlrun-dmodex-stress}
mkdir -p "$OUT"
mpicc -O2 -o "$TMP/mpi_hello" "$E2E/mpi_hello.c" || { fail "mpicc"; done_testing; }
sh -c 'while :; do :; done' & hog1=$!
sh -c 'while :; do :; done' & hog2=$!
bad=0 per_node=${PER_NODE:-1}
for i in $(seq 1 "${N:-20}"); do
    timeout -k 5 600 salloc -N2 --ntasks-per-node="$per_node" sh -c "
        \"$DLRUN\" -np $((2 * per_node)) -x OMPI_MCA_pmix_base_async_modex=1 -x OMPI_MCA_pmix_base_collect_data=0 \"$TMP/mpi_hello\"; echo rc=\$?" \
        >"$TMP/run.$i" 2>&1
    if grep -q '^rc=0$' "$TMP/run.$i"; then echo "run $i: ok"; else
        echo "run $i: FAILED (output in $OUT/run.$i)"; cp "$TMP/run.$i" "$OUT/"; bad=$((bad + 1)); fi
done
kill "$hog1" "$hog2"
expect_eq "every run ended with rc=0" "$bad" 0
done_testing
