# mpi_allreduce.py - Debian's mpi4py: every rank adds its rank; each prints
# "rank R of N on HOST: sum S ok" when S is 0 + 1 + ... + N-1.
import socket
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
total = comm.allreduce(rank, op=MPI.SUM)
ok = "ok" if total == size * (size - 1) // 2 else "WRONG"
print("rank %d of %d on %s: sum %d %s" % (rank, size, socket.gethostname(),
                                          total, ok), flush=True)
