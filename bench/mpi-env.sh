#!/bin/sh
# mpirun gives each task OMPI_COMM_WORLD_*; torch's env:// rendezvous reads
# torchrun's names.  This is the wrapper an mpirun user writes by hand:
# map the one set to the other and run the program.  MASTER_PORT comes from
# the caller (mpirun -x MASTER_PORT=...); every rank is on this host.
export RANK="$OMPI_COMM_WORLD_RANK" WORLD_SIZE="$OMPI_COMM_WORLD_SIZE"
export LOCAL_RANK="$OMPI_COMM_WORLD_LOCAL_RANK"
export LOCAL_WORLD_SIZE="$OMPI_COMM_WORLD_LOCAL_SIZE"
export MASTER_ADDR="${MASTER_ADDR:-127.0.0.1}"
exec "$@"
