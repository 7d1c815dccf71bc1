#!/bin/bash
# Made by `dlrun script`; submit with qsub (or make it with dlrun submit).
# Profile: squid (dlrun script --check FILE checks the dlrun line against it)
#PBS -q SQUID
#PBS --group=G00000
#PBS -b 2
#PBS -l elapstim_req=01:00:00
#PBS -l cpunum_job=76
#PBS -l gpunum_job=8
#PBS -T openmpi
#PBS -v NQSV_MPI_MODULE=BaseGPU/2024
#PBS -v LANG=C

cd "$PBS_O_WORKDIR" || exit 1
module load BaseGPU/2024
module load cudnn/8.8.1.3
export NCCL_IB_HCA=mlx5
source .venv/bin/activate
exec mpirun ${NQSV_MPIOPTS} --bind-to none -x PATH ${LD_LIBRARY_PATH+-x LD_LIBRARY_PATH} -x NCCL_IB_HCA -np 2 -npernode 1 dlrun --nproc-per-node 8 --map-by ppr:4:socket --bind-to core -- python train.py --epochs 3
