#!/bin/sh
# needs: cluster
# t_mpirun_slurm.sh - Open MPI's mpirun inside a Slurm allocation of the
# test cluster starts one dlrun per node (-npernode 1, --bind-to none, as
# generated mpirun scripts do); each starts its node's ranks
# (--nproc-per-node 2) from mpirun's PMIx server's host list, and a PyTorch
# DDP (gloo) job of 2 x 2 ranks ends with the same weights everywhere.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
command -v mpirun >/dev/null 2>&1 || skip "skip: mpirun not installed (openmpi-bin)"
use_cluster
MPIRUN="mpirun --allow-run-as-root -np 2 -npernode 1 --bind-to none -x PATH -x LD_LIBRARY_PATH"

cat >"$TMP/show.sh" <<EOS
#!/bin/sh
$MPIRUN "$DLRUN" --nproc-per-node 2 sh -c 'echo "rank=\$RANK/\$WORLD_SIZE local=\$LOCAL_RANK node=\$GROUP_RANK host=\$(hostname) master=\$MASTER_ADDR:\$MASTER_PORT slurm=\$SLURM_PROCID/\$SLURM_NTASKS"'
echo "mpirun exit \$?"
EOS
within 300 sbatch -N2 --wait -o "$TMP/show.out" "$TMP/show.sh" >/dev/null 2>&1
expect_grep "sbatch -N2: mpirun -npernode 1 dlrun --nproc-per-node 2: exit 0" \
    "^mpirun exit 0$" "$TMP/show.out"
expect_eq "  4 distinct ranks in one world of 4" \
    "$(sed -n 's/^rank=\([0-3]\)\/4 .*/\1/p' "$TMP/show.out" | sort -u | tr -d '\n')" 0123 ||
    sed 's/^/  | /' "$TMP/show.out"
expect_eq "  ranks 2, 3 on the second node" \
    "$(grep -c '^rank=[23]/4 local=[01] node=1 host=node2 ' "$TMP/show.out")" 2
expect_eq "  one rendezvous" \
    "$(sed -n 's/.* master=\([^ ]*\) .*/\1/p' "$TMP/show.out" | sort -u | wc -l | tr -d ' ')" 1
expect_eq "  SLURM_PROCID/SLURM_NTASKS rewritten to the rank's (not mpirun's daemons')" \
    "$(grep -c '^rank=\([0-3]\)/4 .* slurm=\1/4$' "$TMP/show.out")" 4

# per-task mode: mpirun starts every rank (2 per node), each dlrun becomes
# one; the Slurm variables the ranks inherit are those of mpirun's daemons.
# mpirun names no other host to its ranks: rank 0's (the batch host) is
# given.
cat >"$TMP/task.sh" <<EOS
#!/bin/sh
mpirun --allow-run-as-root -np 4 -npernode 2 --bind-to none "$DLRUN" --master-addr \$(hostname) sh -c 'echo "task rank=\$RANK/\$WORLD_SIZE local=\$LOCAL_RANK/\$LOCAL_WORLD_SIZE host=\$(hostname)"'
echo "mpirun exit \$?"
EOS
within 300 sbatch -N2 --ntasks-per-node=2 --wait -o "$TMP/task.out" "$TMP/task.sh" >/dev/null 2>&1
expect_grep "sbatch -N2: mpirun -np 4 -npernode 2 dlrun (per task): exit 0" \
    "^mpirun exit 0$" "$TMP/task.out"
expect_eq "  ranks 0-3 of 4 from mpirun's variables, 2 per node" \
    "$(grep -c '^task rank=\([01]\)/4 local=\1/2 host=node1$\|^task rank=[23]/4 local=[01]/2 host=node2$' "$TMP/task.out")" 4 ||
    sed 's/^/  | /' "$TMP/task.out"

cat >"$TMP/ddp.sh" <<EOS
#!/bin/sh
$MPIRUN "$DLRUN" --nproc-per-node 2 --map-by ppr:2:socket --bind-to core --report-bindings "$PY" "$E2E/ddp_train.py"
echo "mpirun exit \$?"
EOS
# -w: the checks name node1 and node2 (Slurm passes over a completing node)
within 600 sbatch -N2 -w "node[1-2]" --wait -o "$TMP/ddp.out" "$TMP/ddp.sh" >/dev/null 2>&1
# the line dlrun script writes for SQUID's profile, scaled to this host:
# mpirun ... --bind-to none -np N -npernode 1 dlrun --nproc-per-node 8
# --map-by ppr:4:socket --bind-to core
expect_grep "DDP (gloo) through mpirun, 2 nodes x 2 ranks bound per socket: exit 0" \
    "^mpirun exit 0$" "$TMP/ddp.out"
expect_eq "  4 ranks with the same weights" \
    "$(grep -o 'rank [0-3]/4 weights [^ ]* ok' "$TMP/ddp.out" | sed 's/.* weights \([^ ]*\) ok$/\1/' | sort | uniq -c | awk '{ print $1 }')" 4 ||
    sed 's/^/  | /' "$TMP/ddp.out"
expect_eq "  every rank bound to a core of its own on its node" \
    "$(grep -o 'dlrun: rank [0-3] host node[12] cpus [0-9]* ' "$TMP/ddp.out" | wc -l | tr -d ' ')" 4
done_testing
