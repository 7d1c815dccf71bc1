#!/bin/bash
# Made by `dlrun script`; submit with qsub (or make it with dlrun submit).
#PBS -l select=2:ncpus=40:ngpus=4:mpiprocs=1
#PBS -l place=scatter:excl
#PBS -l walltime=01:30:00
#PBS -q gpu
#PBS -A proj
#PBS -N train

cd "$PBS_O_WORKDIR" || exit 1
# dlrun reads the nodes from $PBS_NODEFILE and starts an agent on each
# other node over ssh (their host keys known, your key in ~/.ssh or
# ssh-agent); dlrun script --launcher mpirun makes mpirun start them.
exec dlrun --alloc pbs --nproc-per-node 4 -x PATH ${LD_LIBRARY_PATH+-x LD_LIBRARY_PATH} ${PYTHONPATH+-x PYTHONPATH} --map-by ppr:2:socket -- python train.py --lr 0.1
