#!/bin/bash
# Made by `dlrun script`; submit with qsub (or make it with dlrun submit).
#PBS -l select=2:ncpus=40:ngpus=4:mpiprocs=1
#PBS -l place=scatter:excl
#PBS -l walltime=01:30:00
#PBS -q gpu
#PBS -A proj
#PBS -N train

cd "$PBS_O_WORKDIR" || exit 1
exec mpirun --bind-to none -x PATH ${LD_LIBRARY_PATH+-x LD_LIBRARY_PATH} -np 2 --map-by ppr:1:node dlrun --nproc-per-node 4 --map-by ppr:2:socket -- python train.py --lr 0.1
