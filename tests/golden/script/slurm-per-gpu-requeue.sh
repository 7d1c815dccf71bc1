#!/bin/bash
# Made by `dlrun script`; submit with sbatch (or make it with dlrun submit).
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=4
#SBATCH --gres=gpu:4
#SBATCH --cpus-per-task=10
#SBATCH --time=01:30:00
#SBATCH --partition=gpu
#SBATCH --account=proj
#SBATCH --job-name=train
#SBATCH --signal=B:USR1@90
#SBATCH --requeue

# --requeue: on SIGUSR1, 90 s before the time limit, pass the
# signal to the ranks (they checkpoint), give them until 10 s before the
# limit to exit, then requeue this job; SLURM_RESTART_COUNT counts the runs.
dlrun_requeue() {
    trap '' USR1
    echo "dlrun job script: SIGUSR1 before the time limit: passing it to the ranks, then requeueing job $SLURM_JOB_ID" >&2
    kill -USR1 "$dlrun_pid" 2>/dev/null
    ( sleep 80; scontrol requeue "$SLURM_JOB_ID" ) &
    dlrun_timer=$!
    wait "$dlrun_pid"
    kill "$dlrun_timer" 2>/dev/null
    scontrol requeue "$SLURM_JOB_ID"
    exit 0
}
trap dlrun_requeue USR1
srun dlrun -- python train.py --resume &
dlrun_pid=$!
wait "$dlrun_pid"
