#!/bin/bash
# Made by `dlrun script`; submit with flux batch (or make it with dlrun submit).
#flux: -N 2
#flux: --exclusive
#flux: -t 5400s
#flux: -q pbatch
#flux: --bank=guests
#flux: --job-name=train

# dlrun reads the nodes from its instance (flux getattr hostlist) and
# starts an agent on every node with one flux run
exec dlrun --nproc-per-node 4 --map-by ppr:2:socket -- python train.py --lr 0.1
