#!/bin/bash
# Made by `dlrun script`; submit with flux batch (or make it with dlrun submit).
#flux: -N 2
#flux: --exclusive
#flux: --signal=SIGUSR1@120s

# one task per GPU: flux run starts them on the job's nodes, each dlrun
# reads its rank from FLUX_TASK_RANK and the nodes from flux job hostlist
exec flux run -N 2 --tasks-per-node=4 dlrun -- python train.py
