#!/bin/bash
# Made by `dlrun script`; submit with qsub (or make it with dlrun submit).
#PBS -q gpu
#PBS --group=proj
#PBS -b 2
#PBS -l elapstim_req=01:30:00
#PBS -l cpunum_job=40
#PBS -l gpunum_job=4
#PBS -N train

cd "$PBS_O_WORKDIR" || exit 1
exec mpirun ${NQSV_MPIOPTS} --bind-to none -x PATH ${LD_LIBRARY_PATH+-x LD_LIBRARY_PATH} -np 2 -npernode 1 dlrun --nproc-per-node 4 --map-by ppr:2:socket -- python train.py --lr 0.1
