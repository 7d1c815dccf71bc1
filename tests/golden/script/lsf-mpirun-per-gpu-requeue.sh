#!/bin/bash
# Made by `dlrun script`; submit with bsub < THIS_FILE (or dlrun submit).
#BSUB -n 8
#BSUB -R "span[ptile=4]"
#BSUB -gpu "num=4/host"
#BSUB -W 01:30
#BSUB -q gpu
#BSUB -P proj
#BSUB -J train
#BSUB -wa USR1
#BSUB -wt 2
#BSUB -r

# --requeue: on SIGUSR1, 2 min before the run limit
# (-wa/-wt), pass the signal to the ranks (they checkpoint), give them
# 80 s to exit, then requeue this job.
dlrun_requeue() {
    trap '' USR1
    echo "dlrun job script: SIGUSR1 before the run limit: passing it to the ranks, then requeueing job $LSB_JOBID" >&2
    kill -USR1 "$dlrun_pid" 2>/dev/null
    ( sleep 80; brequeue "$LSB_JOBID" ) &
    dlrun_timer=$!
    wait "$dlrun_pid"
    kill "$dlrun_timer" 2>/dev/null
    brequeue "$LSB_JOBID"
    exit 0
}
trap dlrun_requeue USR1
mpirun --bind-to none -x PATH ${LD_LIBRARY_PATH+-x LD_LIBRARY_PATH} -np 8 --map-by ppr:4:node dlrun --bind-to core -- python train.py --resume &
dlrun_pid=$!
wait "$dlrun_pid"
