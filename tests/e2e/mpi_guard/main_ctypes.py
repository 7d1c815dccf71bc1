# main_ctypes.py - Open MPI through ctypes: "libmpi" in the text is what
# --mpi=auto finds.  Prints "MPI rank R of N".
import ctypes
lib = ctypes.CDLL("libmpi.so.40", mode=ctypes.RTLD_GLOBAL)
lib.MPI_Init(None, None)
world = ctypes.c_void_p(ctypes.addressof(ctypes.c_char.in_dll(lib, "ompi_mpi_comm_world")))
rank, size = ctypes.c_int(), ctypes.c_int()
lib.MPI_Comm_rank(world, ctypes.byref(rank))
lib.MPI_Comm_size(world, ctypes.byref(size))
print(f"MPI rank {rank.value} of {size.value}", flush=True)
lib.MPI_Finalize()
