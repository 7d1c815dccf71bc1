#!/bin/sh
# t_flux.sh - Flux as a scheduler without Flux (not packaged for Debian
# 12): the stand-in tests/fixtures/flux/bin/flux first on PATH answers the
# queries dlrun makes (flux job hostlist/taskmap, flux getattr) and takes
# flux batch.  A task of flux run (per-task mode: dlrun env, a rank run),
# the script of flux batch (dlrun plan shows the instance's nodes),
# variables that disagree refused with one line, dlrun script --scheduler
# flux against tests/golden/script, and dlrun submit through flux batch
# (the job id in F58); in the script, the agents start through flux run.
. "$(dirname "$0")/lib.sh"
GOLD=$TOP/tests/golden/script
FX=$TOP/tests/fixtures/flux
HOME=$TMP/home
export HOME
unset DLRUN_CONFIG XDG_CONFIG_HOME DLRUN_TEMPLATES
mkdir -p "$HOME"
CLEAN="$NO_SCHED -u FLUX_URI -u FLUX_JOB_ID -u FLUX_TASK_RANK PATH=$FX/bin:$PATH"

# fixture NAME: its variables as env arguments
fixture() { grep -v '^#' "$FX/$1.env" | tr '\n' ' '; }

# says_one_line WHAT: the error in $TMP/err is one line starting "dlrun: "
says_one_line() {
    expect_eq "$1: one line" "$(wc -l <"$TMP/err" | tr -d ' ')" 1
    expect_grep "$1: says dlrun:" "^dlrun: " "$TMP/err"
}

# --- a task of flux run -N2 -n8: its rank, the job's nodes and task map ---
# shellcheck disable=SC2046
expect_rc "flux run task 5: dlrun env" 0 clean_env $(fixture run-N2-n8-rank5) \
    "$DLRUN" env --master-addr 127.0.0.1
for v in RANK=5 WORLD_SIZE=8 LOCAL_RANK=1 LOCAL_WORLD_SIZE=4 NODE_RANK=1 \
         GROUP_WORLD_SIZE=2 HOROVOD_HOSTNAME=tuolumne1002; do
    expect_grep "  $v" "^${v%%=*}='${v#*=}'" "$TMP/out"
done
expect_grep "  DLRUN_ALLOC names flux run" "^DLRUN_ALLOC='flux-task'.*FLUX_JOB_ID=ƒ2RSrTuXh and FLUX_TASK_RANK=5 (started by flux run)" "$TMP/out"
# shellcheck disable=SC2046
expect_rc "cyclic task map: task 3" 0 clean_env $(fixture run-N2-n8-cyclic-rank3) \
    "$DLRUN" env --master-addr 127.0.0.1
expect_grep "  on the second node" "^NODE_RANK='1'" "$TMP/out"
expect_grep "  the second there" "^LOCAL_RANK='1'" "$TMP/out"
# shellcheck disable=SC2046
expect_rc "flux run task 5: dlrun plan shows the job's nodes" 0 clean_env \
    $(fixture run-N2-n8-rank5) "$DLRUN" plan --master-addr 127.0.0.1
expect_grep "  allocation flux-task" "^allocation: flux-task" "$TMP/out"
expect_grep "  rank 7 on tuolumne1002" "^7  *tuolumne1002  *1  *3 " "$TMP/out"

# one node: no flux query, and the rank runs
# shellcheck disable=SC2046
expect_rc "flux run -n4, task 2: the rank runs" 0 clean_env \
    $(fixture run-N1-n4-rank2) PATH=/usr/bin:/bin timeout -k 5 60 "$DLRUN" --master-addr 127.0.0.1 \
    --bind-to none -- sh -c 'echo "rank $RANK of $WORLD_SIZE, local $LOCAL_RANK"'
expect_grep "  as task 2 of 4" "rank 2 of 4, local 2" "$TMP/out"

# --- disagreeing variables: refused, one line naming both ---
for f in bad-nnodes bad-localid bad-size; do
    # shellcheck disable=SC2046
    expect_rc "$f: refused" 2 clean_env $(fixture "$f") "$DLRUN" env --master-addr 127.0.0.1
    says_one_line "$f"
done
# shellcheck disable=SC2046
clean_env $(fixture bad-nnodes) "$DLRUN" env --master-addr 127.0.0.1 >/dev/null 2>"$TMP/err"
expect_grep "bad-nnodes: names both" \
    "FLUX_JOB_NNODES=3 but 'flux job hostlist ƒ2RSrTuXh' names 2 nodes: Flux's variables disagree" "$TMP/err"
expect_rc "several nodes without flux on PATH: refused" 2 env $NO_SCHED PATH=/usr/bin:/bin \
    FLUX_JOB_ID=f1 FLUX_JOB_SIZE=2 FLUX_JOB_NNODES=2 FLUX_TASK_RANK=0 \
    FLUX_TASK_LOCAL_ID=0 "$DLRUN" env --master-addr 127.0.0.1
says_one_line "no flux"
expect_grep "  says what is missing" "flux is not on PATH" "$TMP/err"

# --- the script of flux batch -N2: the instance's nodes ---
# shellcheck disable=SC2046
expect_rc "flux batch script: dlrun plan" 0 clean_env $(fixture batch-N2) \
    "$DLRUN" plan --master-addr 127.0.0.1 --nproc-per-node 2
expect_grep "  allocation flux-job, with the job id" "^allocation: flux-job (FLUX_URI without FLUX_JOB_ID (flux batch script or flux alloc shell of job ƒ2RSrTuXh))" "$TMP/out"
expect_grep "  rank 3 on the second node" "^3  *tuolumne1002  *1  *1 " "$TMP/out"
expect_rc "FLUX_URI outside a job's instance: refused" 2 clean_env \
    FLUX_URI=local:///run/flux/local "$DLRUN" plan
says_one_line "no job's instance"

# --- in the script, the agents start with one flux run ---
# shellcheck disable=SC2046
expect_rc "flux batch script: the agents through flux run (the stand-in fails)" 1 \
    clean_env $(fixture batch-N2) FLUX_STANDIN_HOSTLIST=localhost,127.0.0.2 \
    FLUX_STANDIN_RUN_LOG="$TMP/run.log" timeout -k 5 60 "$DLRUN" \
    --master-addr 127.0.0.1 --bind-to none --nproc-per-node 1 -- true
expect_eq "  flux run's words" "$(sed '/^agent$/q' "$TMP/run.log" | tr '\n' ' ')" \
    "--nodes=2 --ntasks=2 --exclusive --requires=host:localhost,127.0.0.2 -o cpu-affinity=off -o gpu-affinity=off -o pmi=off -o exit-on-error $DLRUN agent "
expect_grep "  the program after --" "^true\$" "$TMP/run.log"
expect_grep "  its failure named" "dlrun: flux (the agents) ended with code 1" "$TMP/err"

# --- dlrun script --scheduler flux, dlrun submit through flux batch ---
golden flux --scheduler flux -N 2 --gpus-per-node 4 --cores-per-node 96 -t 1:30:00 \
    -p pbatch -A guests -J train --map-by ppr:2:socket -- python train.py --lr 0.1
golden flux-per-gpu --scheduler flux -N 2 --gpus-per-node 4 --tasks per-gpu \
    --signal USR1@120 -- python train.py
expect_grep "flux: the time limit as a duration" "^#flux: -t 5400s\$" "$TMP/flux.sh"
expect_grep "flux-per-gpu: flux run starts a task per GPU" \
    "^exec flux run -N 2 --tasks-per-node=4 dlrun -- python train.py\$" "$TMP/flux-per-gpu.sh"
expect_rc "flux --requeue: refused" 2 "$DLRUN" script --scheduler flux -N 1 --requeue -- p
says_one_line "flux --requeue"
expect_grep "  says what instead" "Flux jobs cannot be requeued from their script" "$TMP/err"
expect_rc "submit --scheduler flux" 0 clean_env FLUX_STANDIN_BATCH_COPY="$TMP/batch.sh" \
    "$DLRUN" submit --scheduler flux -N 2 -- python3 train.py
expect_eq "  the job id flux batch printed" "$(cat "$TMP/out")" "ƒ2RSrTuXh"
expect_grep "  flux batch got the script" "^#flux: -N 2\$" "$TMP/batch.sh"
expect_rc "submit, ASCII job ids" 0 clean_env FLUX_F58_FORCE_ASCII=1 \
    "$DLRUN" submit --scheduler flux -N 1 -- p
expect_eq "  f2RSrTuXh" "$(cat "$TMP/out")" "f2RSrTuXh"
expect_rc "submit --dry-run" 0 "$DLRUN" submit --dry-run --scheduler flux -N 1 -- p
expect_grep "  would run flux batch" "would run: flux batch SCRIPT" "$TMP/err"

done_testing
