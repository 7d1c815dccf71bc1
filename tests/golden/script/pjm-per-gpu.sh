#!/bin/bash
# Made by `dlrun script`; submit with pjsub (or make it with dlrun submit).
#PJM -L node=2
#PJM --mpi proc=8
#PJM -j

cd "$PJM_O_WORKDIR" || exit 1
# the nodes of PJM's node file, each with its tasks as slots (host:N):
# Open MPI counts a node's cores when a node file gives no slots=
if [ ! -r "${PJM_O_NODEINF:-}" ]; then
    echo "dlrun job script: no node file in PJM_O_NODEINF: run this script with pjsub" >&2
    exit 2
fi
dlrun_hosts=$(awk 'NF && !seen[$1]++ { printf "%s%s:4", sep, $1; sep = "," }' "$PJM_O_NODEINF")
exec mpirun --host "$dlrun_hosts" --bind-to none -x PATH ${LD_LIBRARY_PATH+-x LD_LIBRARY_PATH} -np 8 -npernode 4 dlrun --bind-to core -- python train.py
