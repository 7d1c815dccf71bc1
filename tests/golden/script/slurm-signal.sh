#!/bin/bash
# Made by `dlrun script`; submit with sbatch (or make it with dlrun submit).
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=1
#SBATCH --signal=B:USR2@300

exec dlrun --tag-output --iface ib0 -x NCCL_DEBUG=INFO -- ./a.out
