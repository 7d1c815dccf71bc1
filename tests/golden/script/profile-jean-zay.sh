#!/bin/bash
# Made by `dlrun script`; submit with sbatch (or make it with dlrun submit).
# Profile: jean-zay (dlrun script --check FILE checks the dlrun line against it)
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=4
#SBATCH --gres=gpu:4
#SBATCH --cpus-per-task=10
#SBATCH --time=20:00:00
#SBATCH --account=abc@v100
#SBATCH --hint=nomultithread
#SBATCH --qos=qos_gpu-t3
#SBATCH -C v100-32g

module purge
module load pytorch-gpu/py3/2.1.1
exec srun dlrun -- python train.py --epochs 3
