#!/bin/sh
# capture-fixtures.sh OUTDIR - record the environment Slurm gives a task, a
# batch script and an salloc shell on the test cluster (cluster.sh up first),
# as the fixtures in tests/fixtures/slurm.  Each file keeps only the lines a
# launcher reads (SLURM_*, CUDA_VISIBLE_DEVICES, PMIX_*, OMPI_*), sorted,
# after one comment line saying how it was captured.
#
# The cluster is fresh after "up" (job ids start at 1) and the commands run
# in a fixed order, from a fixed folder, on a host named like the controller,
# so rerunning gives the same files except for ports, pids and times.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
OUT=$(mkdir -p "$1" && cd "$1" && pwd)

# SLURM_SUBMIT_HOST would otherwise be this machine's name.
if [ "$(hostname)" != dlrun-ctl ]; then
    exec unshare --uts sh -c 'hostname dlrun-ctl && exec "$0" "$@"' "$0" "$@"
fi

eval "$("$HERE/cluster.sh" env)"
WORK=$DLRUN_CLUSTER_DIR/work
mkdir -p "$WORK"
cd "$WORK"

# grab NAME HOW: runs as the task itself (the state folder is shared by all
# nodes); %r in NAME becomes the task's rank.
cat >grab <<'EOF'
#!/bin/sh
f=$(echo "$1" | sed "s/%r/${SLURM_PROCID:-}/")
{
    echo "# captured on the dlrun test cluster (Slurm $(srun --version | cut -d' ' -f2)): $2"
    env | grep -E '^(SLURM_|CUDA_VISIBLE_DEVICES=|PMIX_|OMPI_)' | LC_ALL=C sort
} >"$f"
EOF
chmod +x grab

# A clean client environment: nothing of the capturing shell leaks in.
run() {
    env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C \
        SLURM_CONF="$SLURM_CONF" "$@"
}

# Wait for the previous job to leave every node: a node still completing
# it would send the next one-node job to node2 instead of node1.
settle() {
    i=0
    while [ "$(sinfo -h -t idle -o %D)" != 4 ] && [ $i -lt 100 ]; do
        sleep 0.2; i=$((i + 1))
    done
}

cap_step() {
    name=$1; shift
    settle
    run srun "$@" ./grab "$OUT/$name" "srun $*"
}

cap_step step-N2-n2pn-rank%r.env -N2 --ntasks-per-node=2
cap_step step-N3-n5-rank%r.env -N3 -n5
cap_step step-N2-n2pn-cyclic-rank%r.env -N2 --ntasks-per-node=2 --distribution=cyclic
cap_step step-pmix-N2-n2pn-rank%r.env --mpi=pmix -N2 --ntasks-per-node=2
rm -f "$OUT"/step-pmix-N2-n2pn-rank[1-9].env
cap_step step-gres-gpu2-rank%r.env -N1 -n2 --gres=gpu:2
cap_step step-gpus-per-task-rank%r.env -N1 -n2 --gpus-per-task=1

settle
cat >batch.sh <<EOF
#!/bin/sh
./grab "$OUT/batch-N2-n2pn.env" "environment of an sbatch -N2 --ntasks-per-node=2 script"
srun ./grab "$OUT/batch-step-rank%r.env" "srun (no options) inside an sbatch -N2 --ntasks-per-node=2 script"
EOF
run sbatch -N2 --ntasks-per-node=2 --wait -o batch.out batch.sh >/dev/null

cat >batch-gres.sh <<EOF
#!/bin/sh
./grab "$OUT/batch-gres-gpu2.env" "environment of an sbatch -N1 --gres=gpu:2 script"
EOF
settle
run sbatch -N1 --gres=gpu:2 --wait -o batch.out batch-gres.sh >/dev/null

settle
run salloc -N2 ./grab "$OUT/salloc-N2.env" "environment of the command run by salloc -N2" 2>/dev/null
settle
run salloc -N2 srun ./grab "$OUT/salloc-step-rank%r.env" "srun (no options) inside salloc -N2" 2>/dev/null
ls "$OUT"
