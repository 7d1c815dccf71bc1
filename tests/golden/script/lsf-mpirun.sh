#!/bin/bash
# Made by `dlrun script`; submit with bsub < THIS_FILE (or dlrun submit).
#BSUB -n 2
#BSUB -R "span[ptile=1]"
#BSUB -gpu "num=4/host"
#BSUB -W 01:30
#BSUB -q gpu
#BSUB -P proj
#BSUB -J train

exec mpirun --bind-to none -x PATH ${LD_LIBRARY_PATH+-x LD_LIBRARY_PATH} -np 2 --map-by ppr:1:node dlrun --nproc-per-node 4 --map-by ppr:2:socket -- python train.py --lr 0.1
