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
# dlrun reads the hosts from the host file in $NQSV_MPIOPTS and starts an
# agent on each other host over ssh (their host keys known, your key in
# ~/.ssh or ssh-agent); dlrun script --launcher mpirun makes mpirun start
# them.  NQSV sets NQSV_MPIOPTS for an MPI job type (-T openmpi).
if [ -z "${NQSV_MPIOPTS:-}" ]; then
    echo "dlrun job script: no NQSV_MPIOPTS: add #PBS -T openmpi so that NQSV names the hosts" >&2
    exit 2
fi
exec dlrun --alloc nqsv --nproc-per-node 4 -x PATH ${LD_LIBRARY_PATH+-x LD_LIBRARY_PATH} ${PYTHONPATH+-x PYTHONPATH} --map-by ppr:2:socket -- python train.py --lr 0.1
