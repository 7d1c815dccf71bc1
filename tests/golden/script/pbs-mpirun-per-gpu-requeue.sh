#!/bin/bash
# Made by `dlrun script`; submit with qsub (or make it with dlrun submit).
#PBS -l select=2:ncpus=40:ngpus=4:mpiprocs=4
#PBS -l place=scatter:excl
#PBS -l walltime=01:30:00
#PBS -q gpu
#PBS -A proj
#PBS -N train
#PBS -r y

cd "$PBS_O_WORKDIR" || exit 1
# --requeue: on SIGTERM (PBS sends SIGTERM at the walltime, then
# SIGKILL kill_delay later) pass the signal to the ranks (they checkpoint),
# give them 5 s to exit, then rerun this job.
dlrun_requeue() {
    trap '' TERM
    echo "dlrun job script: SIGTERM: passing it to the ranks, then rerunning job $PBS_JOBID" >&2
    kill -TERM "$dlrun_pid" 2>/dev/null
    ( sleep 5; qrerun "$PBS_JOBID" ) &
    dlrun_timer=$!
    wait "$dlrun_pid"
    kill "$dlrun_timer" 2>/dev/null
    qrerun "$PBS_JOBID"
    exit 0
}
trap dlrun_requeue TERM
mpirun --bind-to none -x PATH ${LD_LIBRARY_PATH+-x LD_LIBRARY_PATH} -np 8 --map-by ppr:4:node dlrun --bind-to core -- python train.py --resume &
dlrun_pid=$!
wait "$dlrun_pid"
