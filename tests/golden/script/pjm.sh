#!/bin/bash
# Made by `dlrun script`; submit with pjsub (or make it with dlrun submit).
#PJM -L rscgrp=cx-small
#PJM -L node=2
#PJM --mpi proc=2
#PJM -L elapse=01:30:00
#PJM -g z00000a
#PJM -N train
#PJM -j

cd "$PJM_O_WORKDIR" || exit 1
# dlrun reads the nodes from the node-information file PJM names
# ($PJM_O_NODEINF) and starts an agent on each other node over ssh (their
# host keys known, your key in ~/.ssh or ssh-agent); dlrun script
# --launcher mpirun makes mpirun start them.
exec dlrun --alloc pjm --nproc-per-node 4 -x PATH ${LD_LIBRARY_PATH+-x LD_LIBRARY_PATH} ${PYTHONPATH+-x PYTHONPATH} --map-by ppr:2:socket -- python train.py --lr 0.1
