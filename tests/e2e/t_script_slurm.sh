#!/bin/sh
# needs: cluster
# t_script_slurm.sh - scripts of `dlrun script` run by the real Slurm of
# cluster/: `dlrun submit` hands one to sbatch and its 2-node dlrun job
# prints every rank into the job's output file; --requeue passes the
# pre-timeout signal to the ranks (they "checkpoint" and exit) and requeues
# the job, once with the real time limit (--time 1 --signal USR1@50:
# slurmctld checks limits every 30 s or so, so the signal comes 10 to 40 s
# in) and once through `scancel --signal=USR1 --batch`, the same trap path
# without waiting for the clock.  The PBS, NQSV and LSF scripts run in
# node1 with the variables their scheduler would set naming node1 and
# node2: the script's one dlrun starts node2's agent over ssh (the
# cluster's sshd), the script's PATH and the profile's env reach node2's
# ranks, and --requeue's signal reaches them through the head.
. "$(dirname "$0")/lib.sh"
use_cluster
HOME=$TMP/home
export HOME
unset DLRUN_CONFIG XDG_CONFIG_HOME
mkdir -p "$HOME"

restarts() { scontrol show job -o "$1" 2>/dev/null | sed -n 's/.* Restarts=\([0-9]*\).*/\1/p'; }
count() { ls "$@" 2>/dev/null | wc -l | tr -d ' '; }

# The site profile of this cluster: its partition, output files kept
# across a requeue.
cat >"$TMP/sites.yaml" <<EOS
profiles:
  testcluster:
    scheduler: slurm
    partition: debug
    gpus-per-node: 2
    directives:
      - --output=$TMP/job-%j.out
      - --open-mode=append
    env:
      DLRUN_TEST_MARK: "it's \$marked"
EOS
DLRUN_CONFIG=$TMP/sites.yaml
export DLRUN_CONFIG

# --- dlrun submit: sbatch runs a 2-node job, every rank in its output ---
expect_rc "dlrun submit --profile testcluster -N 2 (real sbatch)" 0 \
    "$DLRUN" submit --profile testcluster -N 2 --dlrun "$DLRUN" -J dlrun-script \
    --bind-to none --gpu-bind none -l \
    -- sh -c 'echo "rank $RANK of $WORLD_SIZE on $(hostname) mark $DLRUN_TEST_MARK"' \
    "arg with spaces"
id=$(cat "$TMP/out")
case $id in
''|*[!0-9]*) fail "  a job id on stdout, got '$id'" ;;
*) pass "  job id $id" ;;
esac
wait_for 120 "  job $id finished" finished "$id"
expect_eq "  completed" "$(state "$id")" COMPLETED
out=$TMP/job-$id.out
for r in 0 1 2 3; do
    expect_grep "  rank $r of 4 in the output" "rank $r of 4 on node" "$out"
done
expect_eq "  ranks on two nodes" \
    "$(sed -n 's/.* on \(node[0-9]*\) .*/\1/p' "$out" | sort -u | wc -l | tr -d ' ')" 2
expect_eq "  the profile's env reached every rank, quotes and \$ intact" \
    "$(grep -c "mark it's \$marked$" "$out" | tr -d ' ')" 4 || sed 's/^/  | /' "$out"

# --- --tasks per-gpu (Jean Zay's way): srun starts a task per GPU, each
# dlrun becomes its rank ---
expect_rc "dlrun submit --tasks per-gpu -N 2 --gpus-per-node 2" 0 \
    "$DLRUN" submit --profile testcluster -N 2 --tasks per-gpu --dlrun "$DLRUN" \
    -- sh -c 'echo "task rank $RANK of $WORLD_SIZE local $LOCAL_RANK on $(hostname)"'
id=$(cat "$TMP/out")
wait_for 120 "  job $id finished" finished "$id"
expect_eq "  completed" "$(state "$id")" COMPLETED
for r in 0 1 2 3; do
    expect_grep "  rank $r of 4 in the output" "task rank $r of 4 local" "$TMP/job-$id.out"
done
expect_eq "  2 local ranks on each of node1, node2" \
    "$(sed -n 's/.* local \([0-9]\) on \(node[0-9]\)$/\2:\1/p' "$TMP/job-$id.out" | sort | tr '\n' ' ')" \
    "node1:0 node1:1 node2:0 node2:1 "

# --- --requeue: the rank program checkpoints on USR1 and exits ---
cat >"$TMP/train.sh" <<'EOS'
#!/bin/sh
# a stand-in for training: on USR1 write a checkpoint and stop
d=$1
echo "rank $RANK run ${SLURM_RESTART_COUNT:-0} up" >"$d/up.$RANK.${SLURM_RESTART_COUNT:-0}"
trap 'echo "rank $RANK checkpoint" >"$d/ckpt.$RANK.${SLURM_RESTART_COUNT:-0}"; exit 0' USR1
while :; do sleep 0.2; done
EOS
chmod +x "$TMP/train.sh"

# requeue_test NAME TIME: submit, then check the trap's work
# requeue_submit NAME TIME SIGNAL OPTION...: submit train.sh, print the id
requeue_submit() {
    n=$1 t=$2 sig=$3; shift 3
    mkdir -p "$TMP/$n"
    "$DLRUN" submit --profile testcluster -N 2 --dlrun "$DLRUN" -J "rq-$n" \
        -t "$t" --signal "$sig" --requeue "$@" \
        -- "$TMP/train.sh" "$TMP/$n" >"$TMP/$n.id" 2>"$TMP/err" ||
        { fail "submit --requeue ($n)"; sed 's/^/  err: /' "$TMP/err"; return 1; }
    cat "$TMP/$n.id"
}
PER_NODE="--bind-to none --gpu-bind none"
requeued() { [ "$(restarts "$1")" = 1 ] || [ "$(count "$TMP/$2"/up.*.1)" -gt 0 ]; }
four_ckpts() { [ "$(count "$TMP/$1"/ckpt.*.0)" -eq 4 ]; }
four_up() { [ "$(count "$TMP/$1"/up.*.0)" -eq 4 ]; }

# shellcheck disable=SC2086 # PER_NODE is a list of words
id=$(requeue_submit scancel 10 USR1@90 $PER_NODE)
if [ -n "$id" ]; then
    wait_for 90 "--requeue (scancel --signal=USR1 --batch): 4 ranks up" four_up scancel
    scancel --signal=USR1 --batch "$id"
    wait_for 60 "  the 4 ranks got USR1 and checkpointed" four_ckpts scancel
    wait_for 60 "  the job was requeued (Restarts=1)" requeued "$id" scancel
    expect_grep "  the script said so" "SIGUSR1 before the time limit: passing it to the ranks, then requeueing job $id" "$TMP/job-$id.out"
    scancel "$id"
fi

# per-gpu: the trap passes USR1 to srun, which passes it to the tasks
id=$(requeue_submit pergpu 10 USR1@90 --tasks per-gpu)
if [ -n "$id" ]; then
    wait_for 90 "--requeue --tasks per-gpu (scancel --signal=USR1 --batch): 4 ranks up" four_up pergpu
    scancel --signal=USR1 --batch "$id"
    wait_for 60 "  srun passed USR1 to the 4 tasks, which checkpointed" four_ckpts pergpu
    wait_for 60 "  the job was requeued (Restarts=1)" requeued "$id" pergpu
    scancel "$id"
fi

# shellcheck disable=SC2086
id=$(requeue_submit timelimit 1 USR1@50 $PER_NODE)
if [ -n "$id" ]; then
    wait_for 90 "--requeue (real time limit 1 min, USR1@50): 4 ranks up" four_up timelimit
    wait_for 90 "  Slurm's USR1 reached the 4 ranks, which checkpointed" four_ckpts timelimit
    wait_for 60 "  the job was requeued before its limit (Restarts=1)" requeued "$id" timelimit
    st=$(scontrol show job -o "$id" | grep -o 'JobState=[A-Z]*')
    case $st in *TIMEOUT*) fail "  the job timed out instead ($st)" ;; *) pass "  not TIMEOUT ($st)" ;; esac
    scancel "$id"
fi

# --- PBS, NQSV, LSF: the script's one dlrun starts node2 over ssh ---
KEY=$DLRUN_TEST_SSH_KEY KH=$DLRUN_TEST_KNOWN_HOSTS
mkdir -p "$TMP/headbin"
# a program found only on the PATH the script's setup makes
printf '#!/bin/sh\necho found-on-the-script-path\n' >"$TMP/headbin/onlyhere"
chmod +x "$TMP/headbin/onlyhere"
cat >"$TMP/head.yaml" <<EOS
profiles:
  head:
    gpus-per-node: 2
    setup: export PATH="$TMP/headbin:\$PATH"
    env:
      DLRUN_TEST_MARK: "it's \$marked"
    dlrun-options: [--bind-to, none, --gpu-bind, none, --ssh-identity, "$KEY",
                    --ssh-known-hosts, "$KH"]
EOS
printf 'node1\nnode2\n' >"$TMP/nodes"
# as_job SCHED SCRIPT: run SCRIPT as SCHED's batch shell on node1 would,
# with nothing of this environment but what that scheduler sets
as_job() {
    ip netns exec dlrun-node1 env -i HOME="$HOME" PATH=/usr/bin:/bin \
        PBS_O_WORKDIR="$TMP" PBS_JOBID=1.test PBS_NODEFILE="$TMP/nodes" \
        NQSV_MPIOPTS="-hostfile $TMP/nodes" LSB_JOBID=1 \
        LSB_MCPU_HOSTS="node1 1 node2 1" timeout -k 5 120 bash "$2"
}
for s in pbs nqsv lsf; do
    expect_rc "$s script (launcher dlrun): 2 nodes x 2 ranks" 0 \
        "$DLRUN" script --config "$TMP/head.yaml" --profile head --scheduler "$s" \
        -N 2 --dlrun "$DLRUN" -o "$TMP/$s-head.sh" \
        -- sh -c 'echo "rank $RANK of $WORLD_SIZE on $(hostname) mark $DLRUN_TEST_MARK $(onlyhere)"'
    as_job "$s" "$TMP/$s-head.sh" >"$TMP/$s-head.out" 2>&1
    expect_eq "  the job script exits 0" "$?" 0
    for r in 0 1 2 3; do
        expect_grep "  rank $r of 4" "^rank $r of 4 on node" "$TMP/$s-head.out"
    done
    expect_eq "  ranks 2 and 3 on node2 (its agent over ssh)" \
        "$(sed -n 's/^rank \([0-9]\) of 4 on \(node[0-9]\) .*/\1:\2/p' "$TMP/$s-head.out" | sort | tr '\n' ' ')" \
        "0:node1 1:node1 2:node2 3:node2 "
    expect_eq "  the profile's env and the script's PATH on every node" \
        "$(grep -c "mark it's \$marked found-on-the-script-path$" "$TMP/$s-head.out")" 4 ||
        sed 's/^/  | /' "$TMP/$s-head.out"
done

# --requeue: USR1 to the batch shell reaches node2's ranks through the
# head; the trap then reruns the job (a stub qrerun)
printf '#!/bin/sh\necho "$@" >"%s/qrerun.args"\n' "$TMP" >"$TMP/headbin/qrerun"
chmod +x "$TMP/headbin/qrerun"
mkdir -p "$TMP/pbsrq"
expect_rc "pbs script --requeue --signal USR1@30 (launcher dlrun)" 0 \
    "$DLRUN" script --config "$TMP/head.yaml" --profile head --scheduler pbs \
    -N 2 --dlrun "$DLRUN" --requeue --signal USR1@30 -o "$TMP/pbs-rq.sh" \
    -- "$TMP/train.sh" "$TMP/pbsrq"
as_job pbs "$TMP/pbs-rq.sh" >"$TMP/pbs-rq.out" 2>&1 &
job=$!
if wait_for 60 "  4 ranks up" four_up pbsrq; then
    # the batch shell: bash under timeout under env under ip netns exec
    sh_pid=$(pgrep -f "^bash $TMP/pbs-rq.sh" | head -n 1)
    kill -USR1 "$sh_pid"
    wait_for 60 "  USR1 reached the 4 ranks, node2's too, which checkpointed" four_ckpts pbsrq
fi
wait "$job"
expect_eq "  the script exits 0 after the requeue" "$?" 0
expect_eq "  qrerun got the job id" "$(cat "$TMP/qrerun.args" 2>/dev/null)" 1.test ||
    sed 's/^/  | /' "$TMP/pbs-rq.out"
done_testing
