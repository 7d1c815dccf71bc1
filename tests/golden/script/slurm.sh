#!/bin/bash
# Made by `dlrun script`; submit with sbatch (or make it with dlrun submit).
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --gres=gpu:4
#SBATCH --cpus-per-task=40
#SBATCH --time=01:30:00
#SBATCH --partition=gpu
#SBATCH --account=proj
#SBATCH --job-name=train

exec dlrun --nproc-per-node 4 --map-by ppr:2:socket -- python train.py --lr 0.1
