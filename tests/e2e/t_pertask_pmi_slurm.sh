#!/bin/sh
# needs: cluster
# t_pertask_pmi_slurm.sh - per-task dlrun under srun --mpi=pmi2 (Slurm's
# PMI-2 plugin, which also answers the simple PMI-1 wire on PMI_FD) across
# two nodes: every task agrees rank 0's address and port through Slurm's
# PMI, and an MPICH program exec'd by dlrun (its port derived, PMI left to
# it: its MPI_Init hangs there after an agreement) still runs in one world.
. "$(dirname "$0")/lib.sh"
use_cluster
within 600 salloc -N2 --ntasks-per-node=2 sh -c "
    srun --mpi=pmi2 -N2 --ntasks-per-node=2 \"$DLRUN\" env; echo rc=\$?" >"$TMP/env.out" 2>&1
expect_grep "srun --mpi=pmi2 -N2 dlrun env: exit 0" "^rc=0$" "$TMP/env.out" ||
    sed 's/^/  | /' "$TMP/env.out"
expect_eq "  4 tasks, one port, agreed through PMI" \
    "$(grep -c "^MASTER_PORT='[0-9]*'  # free port of rank 0's host, agreed through PMI over PMI_FD (program not MPI)$" "$TMP/env.out")" 4
expect_eq "  one address and port" "$(grep -h '^DLRUN_MASTER_[AP]' "$TMP/env.out" | sort -u | wc -l | tr -d ' ')" 2
if command -v mpicc.mpich >/dev/null 2>&1 && mpicc.mpich -O2 -o "$TMP/mpich_hello" "$E2E/mpi_hello.c"; then
    within 600 salloc -N2 --ntasks-per-node=2 sh -c "
        srun --mpi=pmi2 -N2 --ntasks-per-node=2 \"$DLRUN\" -v \"$TMP/mpich_hello\"; echo rc=\$?" >"$TMP/hello.out" 2>&1
    expect_grep "srun --mpi=pmi2 -N2 dlrun mpich_hello: exit 0" "^rc=0$" "$TMP/hello.out" ||
        sed 's/^/  | /' "$TMP/hello.out"
    expect_eq "  4 ranks in one world of 4" "$(grep -c '^hello [0-3] of 4 on node[1-4]$' "$TMP/hello.out")" 4
    expect_eq "  the all-reduce summed every rank" "$(grep -c 'sum 6 (expected 6)' "$TMP/hello.out")" 4
fi
done_testing
