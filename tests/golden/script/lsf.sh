#!/bin/bash
# Made by `dlrun script`; submit with bsub < THIS_FILE (or dlrun submit).
#BSUB -n 2
#BSUB -R "span[ptile=1]"
#BSUB -gpu "num=4/host"
#BSUB -W 01:30
#BSUB -q gpu
#BSUB -P proj
#BSUB -J train

# dlrun reads the hosts from $LSB_MCPU_HOSTS and starts an agent on each
# other host over ssh (their host keys known, your key in ~/.ssh or
# ssh-agent); dlrun script --launcher mpirun makes mpirun start them.
exec dlrun --alloc lsf --nproc-per-node 4 -x PATH ${LD_LIBRARY_PATH+-x LD_LIBRARY_PATH} ${PYTHONPATH+-x PYTHONPATH} --map-by ppr:2:socket -- python train.py --lr 0.1
