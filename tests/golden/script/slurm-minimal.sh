#!/bin/bash
# Made by `dlrun script`; submit with sbatch (or make it with dlrun submit).
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=1

exec dlrun -- ./a.out
