#SBATCH --partition=gpu_p2          # must be specified to be used
#SBATCH --nodes=N                   # total number of nodes (N to be defined)
#SBATCH --ntasks-per-node=8         # number of tasks per node (here, 8 or 1 task per reserved GPU)
#SBATCH --gres=gpu:8                # number of GPUs per node (here, 8 or all the GPUs of a node)
#SBATCH --cpus-per-task=3           # number of cores per task (here, we reserve 8x3 = 24 cores per node)
#SBATCH --hint=nomultithread

# execute script
srun python script.py
