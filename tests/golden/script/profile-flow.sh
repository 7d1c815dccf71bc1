#!/bin/bash
# Made by `dlrun script`; submit with pjsub (or make it with dlrun submit).
# Profile: flow (dlrun script --check FILE checks the dlrun line against it)
#PJM -L rscgrp=cx-small
#PJM -L node=2
#PJM --mpi proc=2
#PJM -L elapse=01:00:00
#PJM -g z00000a
#PJM -j

cd "$PJM_O_WORKDIR" || exit 1
module load gcc/10.3.0
module load cuda/11.4.2
module load openmpi_cuda/4.1.2
source "$HOME/venv/bin/activate"
# the nodes of PJM's node file, each with its tasks as slots (host:N):
# Open MPI counts a node's cores when a node file gives no slots=
if [ ! -r "${PJM_O_NODEINF:-}" ]; then
    echo "dlrun job script: no node file in PJM_O_NODEINF: run this script with pjsub" >&2
    exit 2
fi
dlrun_hosts=$(awk 'NF && !seen[$1]++ { printf "%s%s:1", sep, $1; sep = "," }' "$PJM_O_NODEINF")
exec mpirun --host "$dlrun_hosts" --bind-to none -x PATH ${LD_LIBRARY_PATH+-x LD_LIBRARY_PATH} -np 2 -npernode 1 dlrun --nproc-per-node 4 --map-by ppr:2:socket --bind-to core -- python3 train.py --epochs 3
