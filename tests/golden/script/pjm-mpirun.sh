#!/bin/bash
# Made by `dlrun script`; submit with pjsub (or make it with dlrun submit).
#PJM -L node=2
#PJM --mpi proc=2
#PJM -j

cd "$PJM_O_WORKDIR" || exit 1
export NCCL_DEBUG=INFO
exec mpirun -machinefile "$PJM_O_NODEINF" --bind-to none -x PATH ${LD_LIBRARY_PATH+-x LD_LIBRARY_PATH} -x NCCL_DEBUG -np 2 -npernode 1 dlrun --nproc-per-node 4 -- python train.py
