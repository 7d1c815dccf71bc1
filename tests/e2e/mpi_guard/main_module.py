# main_module.py - an MPI program dlrun cannot recognise from its text:
# MPI comes in through a module of its own (as RaNNC's Python module or Horovod
# built with MPI do).  Prints "MPI rank R of N" and waits a little.
import time

import mpi_world

r, n = mpi_world.world()
print(f"MPI rank {r} of {n}", flush=True)
time.sleep(5)
