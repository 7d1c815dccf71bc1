#!/bin/bash
# Made by `dlrun script`; submit with pjsub (or make it with dlrun submit).
#PJM -L node=2
#PJM --mpi proc=8
#PJM -j

cd "$PJM_O_WORKDIR" || exit 1
exec mpirun -machinefile "$PJM_O_NODEINF" --bind-to none -x PATH ${LD_LIBRARY_PATH+-x LD_LIBRARY_PATH} -np 8 -npernode 4 dlrun -- python train.py
