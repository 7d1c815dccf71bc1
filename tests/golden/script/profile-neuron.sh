#!/bin/bash
# Made by `dlrun script`; submit with sbatch (or make it with dlrun submit).
# Profile: neuron (dlrun script --check FILE checks the dlrun line against it)
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --gres=gpu:8
#SBATCH --cpus-per-task=64
#SBATCH --time=02:00:00
#SBATCH --partition=amd_a100nv_8
#SBATCH --comment pytorch

module purge
module load gcc/10.2.0
module load cuda/11.4
module load cudampi/openmpi-4.1.1
module load python/3.7.1
export NCCL_DEBUG=WARN
source activate torch
exec dlrun --nproc-per-node 8 --map-by ppr:4:socket -- python train.py --epochs 3
