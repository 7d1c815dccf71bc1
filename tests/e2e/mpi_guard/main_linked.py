# main_linked.py - loads Open MPI's library without calling MPI_Init (as
# a PyTorch built with its MPI backend does): not an MPI program.  The
# library's name is built so that --mpi=auto does not read it here.
import ctypes
import time

ctypes.CDLL("lib" + "mpi.so.40", mode=ctypes.RTLD_GLOBAL)
time.sleep(3)
print("linked, no MPI_Init", flush=True)
