# a module of its own that loads MPI: the main script names no MPI
from mpi4py import MPI
def world():
    c = MPI.COMM_WORLD
    return c.Get_rank(), c.Get_size()
