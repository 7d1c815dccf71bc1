#!/bin/bash
#PBS -q SQUID
#PBS --group=...
#PBS -T openmpi
#PBS -l elapstim_req=00:10:00
#PBS -l cpunum_job=76
#PBS -l gpunum_job=8
#PBS -v LANG=C
#PBS -b 2
#PBS -v NQSV_MPI_MODULE=BaseGPU/2024

module load BaseGPU/2024
module load cudnn/8.8.1.3

cd ${PBS_O_WORKDIR}

source .venv/bin/activate

mpirun ${NQSV_MPIOPTS} \
    -x LD_LIBRARY_PATH -x PATH \
    -np 16 --map-by ppr:4:socket \
    python3 tensorflow2_synthetic_benchmark.py --batch-size 256
